"""Routing: which role answers a message, in which session, and as what kind of work.

Addressing, first match wins: ``/ask <role> <text>``; ``@<role> <text>`` (a slug, a name or a title:
``@cfo``, ``@devils_advocate``); a role's slug
or name followed by ``:`` or ``,`` at the start (``finance: what is our runway?``), when the
plain-words rules read it as a call too (not "Finance: that's the part I hate");
then, where the place has no role of its own, a role addressed in a plain sentence by
name, title or emoji ("What does the critic think about pricing?", "Que pense le critique
de ...", "was meint Finance zu ...": see :mod:`board.routing.addressing`); then the place's role
(a forum topic mapped to a role); then ``general``. Every route says why in ``reason``. Other
``/commands`` become command routes; ``/meeting <topic>`` a meeting route, and so do
plain words that ask for one ("run a board meeting on our pricing", "convene the board
about Europe"), whether or not the chair's model would have called its tool.

Several ``@role`` mentions, or several roles addressed in plain words, in one message
(``@finance @critic is this safe?``, ``what do @finance and @strategy think?``, ``ask the CFO
and the critic``) route to the first with the others in
``Route.also``: each answers, in order. A message that starts with ``@name`` naming no
role gets an error listing the roles instead of going to the chair (names ending in
``bot`` are left alone: that is how Telegram addresses the bot itself in a group).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from board.conversation.sessions import session_key
from board.envelope import Envelope
from board.roles import GENERAL
from board.routing.addressing import Roster, find_addressed

__all__ = ["NOBODY", "Route", "RouteKind", "Router", "command_addressee", "needs_question", "unknown_role"]


def unknown_role(word: str, roles: Iterable[str]) -> str:
    """The one wording of "no such role" (chat, ``/ask``, ``/reset``, ``sabha ask --role``)."""
    return f"There is no role {word.strip()!r}. Roles: {', '.join(roles)}."


def command_addressee(text: str) -> str | None:
    """The bot a leading ``/command@name`` names (``name``; in a group, a command for another bot is
    not ours), None when ``text`` is no command or names no bot. Read as routing reads a command
    (leading blanks ignored); routing itself drops the ``@name``."""
    found = _ADDRESSEE.match(text.strip())
    return found.group(1) if found else None


def needs_question(form: str) -> str:
    """The one wording of "a role but no question" (``@critic`` alone, ``/ask critic``)."""
    return f"{form} needs a question after the role, e.g. {form} what could go wrong here?"

NOBODY = "no role addressed: the chair answers"  # the reason of a route nothing in the message chose

RouteKind = Literal["chat", "command", "meeting"]

_COMMAND = re.compile(r"^/([A-Za-z][A-Za-z0-9_]*)(?:@[A-Za-z0-9_]+)?(?:\s+(.*))?$", re.DOTALL)
_ADDRESSEE = re.compile(r"^/[A-Za-z][A-Za-z0-9_]*@([A-Za-z0-9_]+)(?:\s|$)")
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
    reason: str = ""  # why this role: what matched (logged at debug, shown by ``sabha ask --why``)


class Router:
    """Resolves envelopes against the roles available now (``names`` maps slug -> display name)."""

    def __init__(self, roles: Iterable[str], names: dict[str, str] | None = None, *,
                 titles: dict[str, str] | None = None, emoji: dict[str, str] | None = None,
                 addressing: bool = True) -> None:
        self.roles = list(roles)
        #: False in single-agent mode: ``@role``, ``role:`` and names in sentences are plain text for the chair
        self.addressing = addressing
        self.roster = Roster(self.roles, names or {}, titles or {}, emoji or {})
        self._lookup: dict[str, str] = {}
        for role in self.roles:
            self._lookup[role.lower()] = role
        for role, name in (names or {}).items():
            if role in self.roles:
                self._lookup.setdefault(name.lower(), role)
                self._lookup.setdefault(name.lower().removeprefix("the "), role)
        for role, title in (titles or {}).items():  # "@cfo", "@chief_strategist", "@devils_advocate"
            for part in re.split(r"\s*(?:/|&|,|\band\b)\s*", title) if role in self.roles else []:
                word = re.sub(r"['\u2019]", "", part.strip().lower().removeprefix("the ")).replace(" ", "_")
                if word:
                    self._lookup.setdefault(word, role)

    def find_role(self, word: str) -> str | None:
        """The role a word names (slug or display name, case-insensitive), if any."""
        return self._lookup.get(word.strip().lower())

    def key_for(self, envelope: Envelope, role: str) -> str:
        """The session key of ``role`` for this envelope's place and sender. A linked person's direct
        chats share one key per role when ``people.shared_sessions`` is on (the owner's: ``main`` /
        ``board:<role>``; anyone else's: ``board:<role>:person-<n>``), see :mod:`board.people`."""
        person = envelope.person
        if person is not None and person.shared and not envelope.is_group:
            return session_key(role, is_owner=envelope.is_owner, channel="person", user_id=str(person.number))
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
        command = _COMMAND.match(text)
        if command:
            return self._command(envelope, command.group(1).lower(), (command.group(2) or "").strip())
        meeting = _MEETING_WORDS.match(text)
        if meeting and meeting.group(1).strip():
            return Route("meeting", GENERAL, meeting.group(1).strip(), self.key_for(envelope, GENERAL), "meeting",
                         reason="plain words ask for a board meeting")
        if not self.addressing:
            return Route("chat", GENERAL, text, self.key_for(envelope, GENERAL), reason="single-agent mode: the chair")
        return self._mentions(envelope, text) or self._plain(envelope, text)

    def _command(self, envelope: Envelope, name: str, rest: str) -> Route:
        default = self._place_role(envelope)
        if name == "ask":
            word, _, question = rest.partition(" ")
            role = self.find_role(word) if word else None
            if role is None:
                problem = (
                    f"/ask needs a role and a question: /ask <role> <question>. Roles: {', '.join(self.roles)}."
                    if not word
                    else unknown_role(word, self.roles)
                )
                return Route("command", default, rest, self.key_for(envelope, default), "ask", error=problem,
                             reason="/ask without a known role")
            if not question.strip():
                return Route(
                    "command", role, "", self.key_for(envelope, role), "ask",
                    error=needs_question(f"/ask {role}"), reason=f"/ask {word}",
                )
            return Route("chat", role, question.strip(), self.key_for(envelope, role), reason=f"/ask {word}")
        if name == "meeting":
            return Route("meeting", GENERAL, rest, self.key_for(envelope, GENERAL), "meeting", reason="/meeting")
        return Route("command", default, rest, self.key_for(envelope, default), name, reason=f"/{name}")

    def _mentions(self, envelope: Envelope, text: str) -> Route | None:
        """``@role`` forms and ``role:`` at the start, or None."""
        default = self._place_role(envelope)
        mentioned = list(dict.fromkeys(
            r for r in (self.find_role(m.group(1)) for m in _ANY_MENTION.finditer(text)) if r is not None))
        mention = _MENTION.match(text)
        if mention and self.find_role(mention.group(1)) is None and not mention.group(1).lower().endswith("bot"):
            return Route("command", default, text, self.key_for(envelope, default), "mention",
                         error=unknown_role(mention.group(1), self.roles), reason=f"@{mention.group(1)} names no role")
        if mentioned:
            rest = _LEADING_MENTIONS.sub("", text).strip() if mention else text
            role = mentioned[0]
            reason = " ".join(f"@{r}" for r in mentioned)
            if rest:
                return Route("chat", role, rest, self.key_for(envelope, role), also=tuple(mentioned[1:]),
                             reason=reason)
            # "@critic" alone: like "/ask critic" without a question
            return Route("command", role, "", self.key_for(envelope, role), "ask",
                         error=needs_question(" ".join(f"@{r}" for r in mentioned)), reason=reason)
        named = _NAMED.match(text)
        if named:
            named_role = self.find_role(named.group(1))
            # only when the plain-words rules read it as a call too: not "Finance, marketing and ops all report
            # to me" (a list, the subject of a statement) nor "Finance: that's the part I hate" (a heading)
            hits = find_addressed(self.roster, text)
            if named_role is not None and hits and hits[0].role == named_role:
                return Route("chat", named_role, named.group(2).strip(), self.key_for(envelope, named_role),
                             also=tuple(h.role for h in hits[1:]),
                             reason=f"{named.group(1)!r} and a colon or comma open the message")
        return None

    def _plain(self, envelope: Envelope, text: str) -> Route:
        """A role addressed in plain words where the place has no role; else the place's role."""
        default = self._place_role(envelope)
        if default == GENERAL:
            hits = find_addressed(self.roster, text)
            if hits:
                role = hits[0].role
                reason = "; ".join(f"{h.role}: {h.reason}" for h in hits)
                return Route("chat", role, text, self.key_for(envelope, role),
                             also=tuple(h.role for h in hits[1:]), reason=f"addressed in plain words: {reason}")
        reason = "the place's role" if default != GENERAL else NOBODY
        return Route("chat", default, text, self.key_for(envelope, default), reason=reason)
