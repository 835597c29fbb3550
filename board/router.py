"""Routing: which role answers a message, in which session, and as what kind of work.

Addressing, first match wins: ``/ask <role> <text>``; ``@<role> <text>``; a role's slug
or name followed by ``:`` or ``,`` at the start (``finance: what is our runway?``);
then the place's role (a forum topic mapped to a role); then ``general``. Other
``/commands`` become command routes; ``/meeting <topic>`` a meeting route, and so do
plain words that ask for one ("run a board meeting on our pricing", "convene the board
about Europe"), whether or not the chair's model would have called its tool.

Several ``@role`` mentions in one message (``@finance @critic is this safe?``, or
``what do @finance and @strategy think?``) route to the first with the others in
``Route.also``: each answers, in order. A message that starts with ``@name`` naming no
role gets an error listing the roles instead of going to the chair (names ending in
``bot`` are left alone: that is how Telegram addresses the bot itself in a group).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from board.envelope import Envelope
from board.memory.sessions import session_key
from board.roles import GENERAL

__all__ = ["Route", "RouteKind", "Router", "needs_question", "unknown_role"]


def unknown_role(word: str, roles: Iterable[str]) -> str:
    """The one wording of "no such role" (chat, ``/ask``, ``/reset``, ``sabha ask --role``)."""
    return f"There is no role {word.strip()!r}. Roles: {', '.join(roles)}."


def needs_question(form: str) -> str:
    """The one wording of "a role but no question" (``@critic`` alone, ``/ask critic``)."""
    return f"{form} needs a question after the role, e.g. {form} what could go wrong here?"

RouteKind = Literal["chat", "command", "meeting"]

_COMMAND = re.compile(r"^/([A-Za-z][A-Za-z0-9_]*)(?:@[A-Za-z0-9_]+)?(?:\s+(.*))?$", re.DOTALL)
_MENTION = re.compile(r"^@([A-Za-z][A-Za-z0-9_-]*)[\s,:]*(.*)$", re.DOTALL)
_NAMED = re.compile(r"^([A-Za-z][A-Za-z0-9_ -]{0,40}?)\s*[:,]\s*(.+)$", re.DOTALL)
_ANY_MENTION = re.compile(r"(?:^|(?<=[\s(,;]))@([A-Za-z][A-Za-z0-9_-]*)")
_LEADING_MENTIONS = re.compile(r"^(?:@[A-Za-z][A-Za-z0-9_-]*[\s,:]*)+")
_MEETING_WORDS = re.compile(
    r"^(?:(?:please|can you|could you|let'?s|let us)\s+)?"
    r"(?:run|hold|call|convene|start|have|organi[sz]e|schedule)\s+"
    r"(?:a\s+|an\s+|the\s+)?(?:board\s+meeting|meeting\s+of\s+the\s+board|meeting|board)\s+"
    r"(?:on|about|to\s+discuss|to\s+decide|regarding|for|over)\s+(.+?)\s*[.?!]*$",
    re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Route:
    """Where a message goes."""

    kind: RouteKind
    role: str
    text: str
    session_key: str
    command: str | None = None
    error: str | None = None
    also: tuple[str, ...] = ()  # more roles mentioned: each answers the same text after ``role``, in order


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
                        f"/ask needs a role and a question: /ask <role> <question>. Roles: {', '.join(self.roles)}."
                        if not word
                        else unknown_role(word, self.roles)
                    )
                    return Route("command", default, rest, self.key_for(envelope, default), "ask", error=problem)
                if not question.strip():
                    return Route(
                        "command", role, "", self.key_for(envelope, role), "ask",
                        error=needs_question(f"/ask {role}"),
                    )
                return Route("chat", role, question.strip(), self.key_for(envelope, role))
            if name == "meeting":
                return Route("meeting", GENERAL, rest, self.key_for(envelope, GENERAL), "meeting")
            return Route("command", default, rest, self.key_for(envelope, default), name)
        meeting = _MEETING_WORDS.match(text)
        if meeting and meeting.group(1).strip():
            return Route("meeting", GENERAL, meeting.group(1).strip(), self.key_for(envelope, GENERAL), "meeting")
        mentioned = list(dict.fromkeys(
            r for r in (self.find_role(m.group(1)) for m in _ANY_MENTION.finditer(text)) if r is not None))
        mention = _MENTION.match(text)
        if mention and self.find_role(mention.group(1)) is None and not mention.group(1).lower().endswith("bot"):
            return Route("command", default, text, self.key_for(envelope, default), "mention",
                         error=unknown_role(mention.group(1), self.roles))
        if mentioned:
            rest = _LEADING_MENTIONS.sub("", text).strip() if mention else text
            role = mentioned[0]
            if rest:
                return Route("chat", role, rest, self.key_for(envelope, role), also=tuple(mentioned[1:]))
            # "@critic" alone: like "/ask critic" without a question
            return Route("command", role, "", self.key_for(envelope, role), "ask",
                         error=needs_question(" ".join(f"@{r}" for r in mentioned)))
        named = _NAMED.match(text)
        if named:
            role = self.find_role(named.group(1))
            if role is not None:
                return Route("chat", role, named.group(2).strip(), self.key_for(envelope, role))
        return Route("chat", default, text, self.key_for(envelope, default))
