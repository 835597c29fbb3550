"""The board's slash commands in one registry: :class:`CommandRegistry`.

It is the :class:`board.commands.host.CommandHost` every command module registers into (``/cost``,
``/meeting``, a channel's ``/status`` ...), and it runs a routed command: an unknown one, or one
registered ``owner_only`` sent by anyone else, is answered with one line saying so (:data:`OWNER_ONLY`).
It also holds how people address the board on each channel (the first rows of its ``/help``).
:func:`system_reply` is a reply in a role's name (its soul's name and emoji; Sabha's without one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

from board.agent.locks import SessionLocks
from board.commands.about import Addressing
from board.commands.host import CommandHandler
from board.envelope import Envelope, Reply, ReplyKind
from board.routing.router import Route, Router, unknown_role
from board.workspace.souls import SoulStore

__all__ = ["OWNER_ONLY", "CommandRegistry", "system_reply"]

OWNER_ONLY = "/{command} is for the board's owner only."


def system_reply(souls: SoulStore, envelope: Envelope, role: str, text: str, *, kind: ReplyKind) -> Reply:
    """A reply to ``envelope`` in ``role``'s name (Sabha's when the role has no soul here)."""
    try:
        profile = souls.profile(role)
        name, emoji = profile.name, profile.emoji
    except KeyError:
        name, emoji = "Sabha", "🪑"
    return Reply.to(envelope, role=role, name=name, emoji=emoji, text=text, kind=kind)


class CommandRegistry:
    """Name -> (handler, help line); iterating yields the names, ``name in registry`` asks for one."""

    def __init__(self, souls: SoulStore, router: Callable[[], Router], locks: SessionLocks) -> None:
        self.souls = souls
        self.router = router
        self.locks = locks
        self.entries: dict[str, tuple[CommandHandler, str]] = {}
        self.owner_only: set[str] = set()
        #: channel -> how people address the board there (its /help), as the channel said
        self.addressing: dict[str, Addressing] = {}

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def register_command(self, name: str, handler: CommandHandler, help_line: str, *,
                         owner_only: bool = False) -> None:
        """Add a slash command (channels add their own, e.g. /cost, /status); an ``owner_only`` one
        answers anyone but the owner with one line saying so."""
        self.entries[name] = (handler, help_line)
        if owner_only:
            self.owner_only.add(name)
        else:
            self.owner_only.discard(name)

    def describe_channel(self, channel: str, addressing: Addressing) -> None:
        """How people address the board on ``channel`` (the first rows of its /help)."""
        self.addressing[channel] = addressing

    def lock_for(self, key: str) -> asyncio.Lock:
        """The lock that keeps one session's turns in order."""
        return self.locks.lock_for(key)

    def command_target(self, envelope: Envelope, route: Route) -> tuple[str, str] | str:
        """For ``/cmd [role]``: (role, session key) of the named role or the place's role,
        or an error text naming the valid roles."""
        router = self.router()
        role = route.role
        if route.text:
            word = route.text.split()[0]
            found = router.find_role(word)
            if found is None:
                return unknown_role(word, router.roles)
            role = found
        return role, router.key_for(envelope, role)

    async def run_command(self, envelope: Envelope, route: Route) -> Reply:
        """Run a routed command and wrap its text as a reply from the route's role."""
        entry = self.entries.get(route.command or "")
        if entry is None:
            return self._reply(envelope, route.role, f"Unknown command /{route.command}. Send /help for the list.",
                               kind="error")
        if route.command in self.owner_only and not envelope.is_owner:
            return self._reply(envelope, route.role, OWNER_ONLY.format(command=route.command), kind="error")
        handler, _ = entry
        text = await handler(envelope, route)
        return self._reply(envelope, route.role, text, kind="command")

    def _reply(self, envelope: Envelope, role: str, text: str, *, kind: ReplyKind) -> Reply:
        return system_reply(self.souls, envelope, role, text, kind=kind)
