"""Tools from outside Sabha (MCP servers): where a tool comes from, the source an exchange asks for a
role's outside tools, and the consent gate a tool that changes the world passes before it runs.

Owns the seam between the exchange and the packages that bring tools in (``board.tools``):

- ``ToolOrigin``        (a field of :class:`board.agent.tools.Tool`) which server a tool comes from, its
                        name there, and whether it only reads (``readOnlyHint`` and not ``destructiveHint``);
                        ``label`` is how an answer cites its result: ``[git.git_log]``.
- :class:`OutsideTools` what the ``select_tools`` stage asks: the outside tools a context may call now
                        (the servers given to its role; none for a stranger). No I/O: the source keeps
                        the servers' tool lists current itself.
- :class:`ConsentGate`  asked before a tool that does not only read runs: it records the owner's
                        answer before the call (the consent rule in DESIGN.md) and is told when the
                        call has finished, so a call cut off by a crash is reported, never repeated.

The no-op of each (:data:`NO_OUTSIDE_TOOLS`, :data:`NO_CONSENT`) keeps an exchange without outside
tools as it was: no tools, and any tool that needs consent refused with a reason the model can read.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from board.agent.tools import ToolOrigin

if TYPE_CHECKING:
    from board.agent.tools import Tool, ToolContext

__all__ = [
    "NO_CONSENT",
    "NO_OUTSIDE_TOOLS",
    "ConsentAsk",
    "ConsentGate",
    "ConsentKind",
    "ConsentVerdict",
    "OutsideTools",
]


class OutsideTools(Protocol):
    """The outside tools an exchange may offer its model (the ``select_tools`` stage asks once per exchange)."""

    def tools_for(self, ctx: ToolContext) -> tuple[Tool, ...]:
        """The tools ``ctx``'s role was given, as they are now; () for a stranger or a role given none."""
        ...


class _NoOutsideTools:
    def tools_for(self, ctx: ToolContext) -> tuple[Tool, ...]:
        return ()


NO_OUTSIDE_TOOLS: OutsideTools = _NoOutsideTools()


class ConsentKind(enum.Enum):
    """What came of asking for a tool call that changes the world."""

    ALLOWED_ONCE = "allowed_once"  # the owner pressed Allow once (or /allow)
    ALWAYS_ALLOWED = "always_allowed"  # this tool was always allowed by the owner before
    DENIED = "denied"  # the owner pressed Deny (or /deny)
    TIMED_OUT = "timed_out"  # nobody answered within the limit
    MAY_HAVE_RUN = "may_have_run"  # allowed before Sabha stopped and perhaps run then: never run again
    UNAVAILABLE = "unavailable"  # nobody can be asked here (a stranger, no owner, a place without buttons)

    @property
    def runs(self) -> bool:
        """Whether the call may be made now."""
        return self in (ConsentKind.ALLOWED_ONCE, ConsentKind.ALWAYS_ALLOWED)


@dataclass(frozen=True)
class ConsentAsk:
    """One call that needs the owner's consent: the tool, its arguments (as the model sent them) and who
    asks. ``key`` names the call across a restart (the message being answered, the tool and its
    arguments), so the same call asked again after a crash finds the answer already recorded."""

    origin: ToolOrigin
    arguments: Mapping[str, Any]
    key: str
    role: str
    session_key: str
    meeting_id: str | None = None


@dataclass(frozen=True)
class ConsentVerdict:
    """The answer to a :class:`ConsentAsk`. ``note`` is what the model is told when the call does not run
    (and what the answer should say); ``ticket`` identifies the recorded approval (``None`` when nothing
    was recorded)."""

    kind: ConsentKind
    note: str = ""
    ticket: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def runs(self) -> bool:
        """Whether the call may be made now."""
        return self.kind.runs


class ConsentGate(Protocol):
    """Asks the owner before a tool that changes the world runs, and remembers the answer durably."""

    async def ask(self, ask: ConsentAsk, ctx: ToolContext) -> ConsentVerdict:
        """The owner's answer, waiting up to the configured limit. A verdict that runs has been recorded
        (with the call marked as started) before it is returned."""
        ...

    async def finished(self, verdict: ConsentVerdict, *, ok: bool, summary: str) -> None:
        """Record that the allowed call has run (``ok``: the server answered without an error)."""
        ...


class _NoConsent:
    async def ask(self, ask: ConsentAsk, ctx: ToolContext) -> ConsentVerdict:
        return ConsentVerdict(
            ConsentKind.UNAVAILABLE,
            note=(f"{ask.origin.label} changes things outside Sabha and needs the owner's consent, which cannot "
                  "be asked for here; it was not run. Answer without it and say so."),
        )

    async def finished(self, verdict: ConsentVerdict, *, ok: bool, summary: str) -> None:
        return None


NO_CONSENT: ConsentGate = _NoConsent()
