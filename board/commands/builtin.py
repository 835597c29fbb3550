"""The commands every board answers: ``/help``, ``/start``, ``/roles``, ``/reset``, ``/souls`` (owner only).

:func:`register` adds them to a :class:`board.commands.registry.CommandRegistry`; ``/help`` lists the
other registered commands (the owner's too, for the owner), in the channel's own words.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from board.commands import about as about_commands
from board.commands.registry import CommandRegistry
from board.conversation.sessions import Sessions
from board.envelope import Envelope
from board.routing.router import Route
from board.workspace.souls import SoulStore

__all__ = ["HELP_TEXT", "Builtins", "register"]

#: /help where plain messages go to the place's role (a forum topic); each channel passes its own
#: wording with :meth:`CommandRegistry.describe_channel` (see :mod:`board.commands.about`).
HELP_TEXT = about_commands.help_text(about_commands.TOPIC_ADDRESSING, owner=True)


@dataclass(frozen=True, kw_only=True)
class Builtins:
    """What the built-in commands read: the registry (for /help), the souls, the sessions, the settings."""

    registry: CommandRegistry
    souls: SoulStore
    sessions: Sessions
    workspace: Path
    roster: str
    single: bool
    meetings_enabled: bool

    async def help(self, envelope: Envelope, route: Route) -> str:
        registry = self.registry

        def more(envelope: Envelope) -> list[str]:
            off = ("meeting", "wrap", "pause", "resume", "extend")  # the meeting commands, while meetings are off
            hidden = {*about_commands.BUILTIN, *(() if self.meetings_enabled else off)}
            return [line for name, (_, line) in sorted(registry.entries.items())
                    if name not in hidden and (envelope.is_owner or name not in registry.owner_only)]

        return about_commands.answer_help(envelope, registry.addressing, more, single=self.single)

    async def roles(self, envelope: Envelope, route: Route) -> str:
        return about_commands.roles_text(self.roster, self.souls)

    async def reset(self, envelope: Envelope, route: Route) -> str:
        target = self.registry.command_target(envelope, route)
        if isinstance(target, str):
            return target
        role, key = target
        async with self.registry.lock_for(key):
            old, new = await self.sessions.reset(key)
        archived = f" The previous one ({old.session_id}) is archived." if old else ""
        return f"Started a fresh conversation with {role} ({new.session_id}).{archived}"

    async def souls_list(self, envelope: Envelope, route: Route) -> str:
        return "\n".join(about_commands.soul_lines(self.souls, self.workspace))


def register(builtins: Builtins) -> None:
    """Add /help, /start, /roles, /reset and /souls to ``builtins.registry``."""
    registry = builtins.registry
    registry.register_command("help", builtins.help, "/help: what you can say")
    registry.register_command("start", builtins.help, "/start: introduction")
    registry.register_command("roles", builtins.roles, "/roles: who sits on the board")
    registry.register_command("reset", builtins.reset, "/reset [role]: start a fresh conversation")
    registry.register_command("souls", builtins.souls_list, "/souls: soul files and versions", owner_only=True)
