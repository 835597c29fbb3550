"""The router over the roles available now, built once and again only when they change.

Every message is routed (and the intake asks for a route before the board does), and building a
:class:`~board.routing.router.Router` compiles the addressing patterns of every role's slug, name, title
and emoji (:class:`~board.routing.addressing.Roster`): about a millisecond each time. :class:`RouterCache`
keeps the one it built and builds a new one only when what it is made of changed: a soul edited so that a
role's name, title or emoji differs, a role added or removed (the soul files are still looked at on every
call, so an edit shows in the next message, as before), or single-agent mode. ``builds`` counts how often
it built one (tests count it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from board.routing.router import Router

__all__ = ["RoleFace", "RouterCache"]


class RoleFace(Protocol):
    """What a router knows of a role (:class:`board.workspace.souls.AgentProfile` is one)."""

    @property
    def role(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def emoji(self) -> str: ...


class RouterCache:
    """A callable giving the router over ``faces()`` as they are now; see the module docstring."""

    def __init__(self, faces: Callable[[], Sequence[RoleFace]], *, addressing: bool = True) -> None:
        self._faces = faces
        self._addressing = addressing
        self._made_of: tuple[tuple[str, str, str, str], ...] | None = None
        self._router: Router | None = None
        #: Routers built so far.
        self.builds = 0

    def __call__(self) -> Router:
        made_of = tuple((f.role, f.name, f.title, f.emoji) for f in self._faces())
        if self._router is None or made_of != self._made_of:
            self._router = Router([m[0] for m in made_of], {m[0]: m[1] for m in made_of},
                                  titles={m[0]: m[2] for m in made_of}, emoji={m[0]: m[3] for m in made_of},
                                  addressing=self._addressing)
            self._made_of = made_of
            self.builds += 1
        return self._router
