"""The people service: who a message is from across channels, and linking accounts into one person.

:meth:`People.identify` looks an envelope's identity (``<channel>:<sender>``) up once per message and,
when it is linked, sets ``Envelope.person``: from then on :func:`board.spending.budget.sender_id` (the key of
memory facts, budgets and the ledger) is the person's ``person:<n>``. :meth:`People.said` keeps the
last thing a linked identity said, for the note its other channels show (:mod:`board.people.ref`).

Linking: :meth:`People.ask_code` gives a one-time code bound to the asking account;
:meth:`People.redeem` checks and uses it (:func:`board.people.rows.redeem`); :meth:`People.link` is
the owner's ``sabha people link``. After a link the facts kept under each side's old key move to the
person's (:meth:`board.memory.facts.FactStore.move_user`); spend already in the ledger stays under the
key it was recorded with. :meth:`People.unlink` takes one identity out: the person keeps its memory.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol, TypeVar

from board.envelope import Envelope
from board.masking import mask_value
from board.people.codes import new_code
from board.people.ref import PersonRef, Recent, person_key, person_number
from board.people.rows import FAILURES, LinkOutcome, LinkResult, join, member, serialised
from board.people.rows import issue as issue_code
from board.people.rows import redeem as redeem_code
from board.people.rows import unlink as unlink_identity
from board.people.settings import PeopleSettings
from board.storage.database import Database, DuplicateKey, Tx

__all__ = ["FactMover", "People", "Person", "identity_of"]

log = logging.getLogger("sabha.people")

_NOTE_CHARS = 500

T = TypeVar("T")


class FactMover(Protocol):
    """Files one key's memory facts under another (:class:`board.memory.facts.FactStore`)."""

    async def move_user(self, old: str, new: str) -> int: ...


@dataclass(frozen=True)
class Person:
    """A linked person, as ``sabha people`` lists it."""

    number: int
    owner: bool
    created_at: str
    identities: tuple[str, ...]

    @property
    def key(self) -> str:
        return person_key(self.number)


def identity_of(envelope: Envelope) -> str:
    """The identity an envelope comes from: ``<channel>:<sender>``."""
    return f"{envelope.channel}:{envelope.sender}"


class People:
    """See the module docstring. ``settings`` may be replaced while running (a config reload)."""

    def __init__(self, db: Database, settings: PeopleSettings | None = None, *, facts: FactMover | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.settings = settings or PeopleSettings()
        self.facts = facts
        self.clock = clock

    async def person_of(self, channel: str, sender: str) -> str:
        """The key memory, budgets and the ledger use for ``channel``'s ``sender``: ``person:<n>`` when
        linked, else ``<channel>:<sender>``."""
        identity = f"{channel}:{sender}"
        row = await self.db.fetchone("SELECT person FROM people_identities WHERE identity = ?", (identity,))
        return identity if row is None else person_key(int(row["person"]))

    async def identify(self, envelope: Envelope) -> Envelope:
        """``envelope`` with ``person`` set when its identity is linked (unchanged otherwise)."""
        if envelope.person is not None:
            return envelope
        identity = identity_of(envelope)
        row = await self.db.fetchone("SELECT person FROM people_identities WHERE identity = ?", (identity,))
        if row is None:
            return envelope
        number = int(row["person"])
        settings = self.settings
        recent: tuple[Recent, ...] = ()
        if settings.recent_note_hours > 0 and not settings.shared_sessions and not envelope.is_group:
            since = self.clock() - settings.recent_note_hours * 3600
            found = await self.db.fetchall(
                "SELECT identity, last_text, last_at FROM people_identities WHERE person = ? AND identity <> ? "
                "AND last_at > ? AND last_text IS NOT NULL ORDER BY last_at DESC LIMIT 3", (number, identity, since))
            recent = tuple(Recent(channel=str(r["identity"]).split(":", 1)[0],
                                  at=datetime.fromtimestamp(float(r["last_at"]), UTC), text=str(r["last_text"]))
                           for r in found)
        return replace(envelope, person=PersonRef(number, shared=settings.shared_sessions, elsewhere=recent))

    async def said(self, envelope: Envelope, text: str) -> None:
        """Keep ``text`` as the last thing a linked identity said (for its other channels' note)."""
        if envelope.person is None or envelope.person.shared or envelope.is_group or not text.strip():
            return  # what is said in a group is not a private note, and a group never sees one
        try:
            await self.db.execute("UPDATE people_identities SET last_text = ?, last_at = ? WHERE identity = ?",
                                  (mask_value(text.strip()[:_NOTE_CHARS]), self.clock(), identity_of(envelope)))
        except Exception:  # the note is a nicety: never stop an answer for it
            log.exception("people: keeping the last message of %s failed", identity_of(envelope))

    async def keys_of(self, key: str) -> tuple[str, ...]:
        """Every key facts about ``key``'s person may be kept under: ``key`` itself and, for a
        ``person:<n>``, each linked identity's own key (a late write or a conflict may have left one)."""
        number = person_number(key)
        if number is None:
            return (key,)
        found = await self.db.fetchall("SELECT identity FROM people_identities WHERE person = ? ORDER BY identity",
                                       (number,))
        return (key, *(str(r["identity"]) for r in found))

    async def forget_said(self, keys: tuple[str, ...]) -> None:
        """Drop the note of what these identities last said ("forget everything")."""
        await self.db.execute(
            f"UPDATE people_identities SET last_text = NULL, last_at = NULL WHERE identity IN "
            f"({','.join('?' * len(keys))})", keys)

    async def ask_code(self, identity: str, *, is_owner: bool) -> str:
        """A fresh one-time code bound to ``identity`` (its earlier unused code stops working)."""
        code = new_code()
        now, ttl = self.clock(), self.settings.link_code_ttl_s
        await self._linking(lambda tx: issue_code(tx, identity, code, owner=is_owner, now=now, ttl_s=ttl))
        log.info("people: %s asked for a link code (valid %d s)", identity, ttl)
        return code

    async def redeem(self, identity: str, typed: str, *, is_owner: bool) -> LinkResult:
        """``identity`` sends ``/link <typed>`` (see :func:`board.people.rows.redeem`)."""
        now, settings = self.clock(), self.settings
        result = await self._linking(
            lambda tx: redeem_code(tx, typed, identity, is_owner=is_owner, now=now, settings=settings))
        if result.outcome is LinkOutcome.LINKED:
            log.info("people: %s linked to %s (person:%s)", identity, result.other, result.person)
            await self._move_facts(result)
        elif result.outcome in FAILURES or result.outcome is LinkOutcome.LOCKED:
            log.warning("people: link code from %s refused (%s)", identity, result.outcome.value)
        return result

    async def link(self, a: str, b: str) -> LinkResult:
        """The owner links identities ``a`` and ``b`` (``sabha people link``): LINKED_ELSEWHERE when both
        already belong to different linked people (unlink one first), ALREADY when they are one."""
        now = self.clock()

        async def work(tx: Tx) -> LinkResult:
            ma, mb = await member(tx, a), await member(tx, b)
            if ma is not None and mb is not None and ma.person == mb.person:
                return LinkResult(LinkOutcome.ALREADY, person=ma.person)
            if ma is not None and mb is not None and ma.size > 1 and mb.size > 1:
                return LinkResult(LinkOutcome.LINKED_ELSEWHERE)
            owner = bool(ma and ma.owner) or bool(mb and mb.owner)
            return await join(tx, a, b, owner=owner, now=now)

        result = await self._linking(work)
        if result.outcome is LinkOutcome.LINKED:
            log.info("people: the owner linked %s and %s (person:%s)", a, b, result.person)
            await self._move_facts(result)
        return result

    async def unlink(self, identity: str) -> tuple[int, tuple[str, ...]] | None:
        """Take ``identity`` out of its person (see :func:`board.people.rows.unlink`)."""
        result = await self._linking(lambda tx: unlink_identity(tx, identity))
        if result is not None:
            log.info("people: %s unlinked from person:%d", identity, result[0])
        return result

    async def renamed(self, old: str, new: str) -> None:
        """A channel found that identity ``old`` is now ``new`` (a WhatsApp number and its user id merged):
        ``old``'s link moves to ``new`` unless ``new`` has one of its own."""
        if old == new:
            return
        try:
            await self.db.execute("UPDATE people_identities SET identity = ? WHERE identity = ? AND NOT EXISTS "
                                  "(SELECT 1 FROM people_identities WHERE identity = ?)", (new, old, new))
        except DuplicateKey:  # another replica gave ``new`` a link of its own meanwhile: that one stays
            log.info("people: %s already has a link of its own; %s's is dropped", new, old)
        await self.db.execute("DELETE FROM people_identities WHERE identity = ?", (old,))

    async def persons(self) -> list[Person]:
        """Every linked person with their identities, oldest first."""
        found = await self.db.fetchall(
            "SELECT p.id, p.owner, p.created_at, i.identity FROM people p JOIN people_identities i "
            "ON i.person = p.id ORDER BY p.id, i.identity")
        out: dict[int, Person] = {}
        for r in found:
            number = int(r["id"])
            had = out.get(number)
            ids = (*had.identities, str(r["identity"])) if had else (str(r["identity"]),)
            out[number] = Person(number, bool(r["owner"]), str(r["created_at"]), ids)
        return list(out.values())

    async def _linking(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        """Run ``work`` in one transaction, after every other replica's link work (:func:`serialised`)."""
        async with self.db.transaction() as tx:
            await serialised(tx, self.db.dialect)
            return await work(tx)

    async def _move_facts(self, result: LinkResult) -> None:
        if self.facts is None:
            return
        for old, new in result.moves:
            await self.facts.move_user(old, new)
