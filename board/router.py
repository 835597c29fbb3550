"""Routing: which role answers a message, in which session, and as what kind of work.

Addressing, first match wins: ``/ask <role> <text>``; ``@<role> <text>``; a role's slug
or name followed by ``:`` or ``,`` at the start (``finance: what is our runway?``);
then the place's role (a forum topic mapped to a role); then ``general``. Other
``/commands`` become command routes; ``/meeting <topic>`` a meeting route.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from board.envelope import Envelope
from board.memory.sessions import session_key
from board.roles import GENERAL

__all__ = ["Route", "RouteKind", "Router"]

RouteKind = Literal["chat", "command", "meeting"]

_COMMAND = re.compile(r"^/([A-Za-z][A-Za-z0-9_]*)(?:@[A-Za-z0-9_]+)?(?:\s+(.*))?$", re.DOTALL)
_MENTION = re.compile(r"^@([A-Za-z][A-Za-z0-9_-]*)[\s,:]*(.*)$", re.DOTALL)
_NAMED = re.compile(r"^([A-Za-z][A-Za-z0-9_ -]{0,40}?)\s*[:,]\s*(.+)$", re.DOTALL)


@dataclass(frozen=True)
class Route:
    """Where a message goes."""

    kind: RouteKind
    role: str
    text: str
    session_key: str
    command: str | None = None
    error: str | None = None


class Router:
    """Resolves envelopes against the roles available now (``names`` maps slug -> display name)."""

    def __init__(self, roles: Iterable[str], names: dict[str, str] | None = None) -> None:
        self.roles = list(roles)
        self._lookup: dict[str, str] = {}
        for role in self.roles:
            self._lookup[role.lower()] = role
        for role, name in (names or {}).items():
            if role in self.roles:
                self._lookup.setdefault(name.lower(), role)
                self._lookup.setdefault(name.lower().removeprefix("the "), role)

    def find_role(self, word: str) -> str | None:
        """The role a word names (slug or display name, case-insensitive), if any."""
        return self._lookup.get(word.strip().lower())

    def key_for(self, envelope: Envelope, role: str) -> str:
        """The session key of ``role`` for this envelope's place and sender."""
        return session_key(
            role,
            is_owner=envelope.is_owner,
            channel=envelope.channel,
            chat_id=envelope.chat_id,
            user_id=envelope.sender,
            is_group=envelope.is_group,
        )

    def _place_role(self, envelope: Envelope) -> str:
        hint = envelope.role_hint
        return hint if hint in self.roles else GENERAL

    def route(self, envelope: Envelope) -> Route:
        """Route one envelope."""
        text = envelope.text.strip()
        default = self._place_role(envelope)
        command = _COMMAND.match(text)
        if command:
            name = command.group(1).lower()
            rest = (command.group(2) or "").strip()
            if name == "ask":
                word, _, question = rest.partition(" ")
                role = self.find_role(word) if word else None
                if role is None:
                    problem = (
                        f"/ask needs a role and a question: /ask <role> <question>. Roles: {', '.join(self.roles)}"
                        if not word
                        else f"there is no role {word!r}. Roles: {', '.join(self.roles)}"
                    )
                    return Route("command", default, rest, self.key_for(envelope, default), "ask", error=problem)
                if not question.strip():
                    return Route(
                        "command", role, "", self.key_for(envelope, role), "ask",
                        error=f"/ask {role} needs a question after the role",
                    )
                return Route("chat", role, question.strip(), self.key_for(envelope, role))
            if name == "meeting":
                return Route("meeting", GENERAL, rest, self.key_for(envelope, GENERAL), "meeting")
            return Route("command", default, rest, self.key_for(envelope, default), name)
        mention = _MENTION.match(text)
        if mention:
            role = self.find_role(mention.group(1))
            if role is not None and mention.group(2).strip():
                return Route("chat", role, mention.group(2).strip(), self.key_for(envelope, role))
        named = _NAMED.match(text)
        if named:
            role = self.find_role(named.group(1))
            if role is not None:
                return Route("chat", role, named.group(2).strip(), self.key_for(envelope, role))
        return Route("chat", default, text, self.key_for(envelope, default))
