"""One WhatsApp person behind a phone number and a business-scoped user id (BSUID).

Since the 2026 username rollout Meta names a user by their phone number (``from``,
``contacts[].wa_id``), by their BSUID (``from_user_id``, ``contacts[].user_id``; the only id of
a user who hides their number), or by both. :class:`WhatsAppPeople` keeps one row per person
(``whatsapp_people``): a stable **key** and the current number and BSUID. Every webhook that
carries both ids pairs them (:func:`identity_news` reads them: a contact with ``wa_id`` and
``user_id``, a message with ``from`` and ``from_user_id``); Meta's system webhooks move them:
``user_changed_number`` (``messages[].system`` with the new ``wa_id``, and the new ``user_id``
beside ``previous_user_id``), ``user_changed_user_id`` (``system.user_id`` and
``previous_user_id``, no number) and the ``user_id_update`` field (``value.user_id_update[]``
with ``wa_id`` and ``user_id.previous`` / ``user_id.current``).

The key is the first id Sabha knew the person by (the number when a message carried both)
and never changes: it is the ``<user>`` of the session keys ``board:<role>:wa-<user>``, the
intake lane, the sticky role and the facts, so one person is one conversation whichever id
a message arrives with, and keeps it across number and user id changes. A reply goes to the
current number (``to``), else the BSUID (``recipient``). A person is allowed when any of their
ids, current or former, is in ``whatsapp.allowed_numbers``; a listed number that changed is
reported by :func:`changed_listed` (``sabha status``), since the old number may be given to
someone else.

When a pairing joins two people Sabha had kept apart (before this existed, or before Meta
sent both ids together), they are merged into the one found by number: ``on_merge`` moves the
other's sessions (their live one archived when both had one; nothing is deleted), sticky role
and facts. Data of a version before this table (keyed by a bare number or BSUID) is merged the
same way the first time a pairing names it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from board.storage import Database, DuplicateKey
from bot.channels.whatsapp.config import normalise_user
from bot.channels.whatsapp.inbound import Notification, is_bsuid
from bot.intake.storage import is_storage_error

__all__ = [
    "Change",
    "ChangeKind",
    "PersonRecord",
    "Sighting",
    "WhatsAppPeople",
    "changed_listed",
    "identity_news",
    "listed_changes",
    "sender_ids",
]

log = logging.getLogger("sabha.whatsapp")

Merge = Callable[[str, str], Awaitable[None]]  # (old key, new key)
_NEW_PER_STATEMENT = 100  # new people written in one statement (5 parameters each)


class ChangeKind(StrEnum):
    """What an identity event says (``whatsapp_identity_events.kind``)."""

    PAIRED = "paired"  # a number and a BSUID were seen together
    NUMBER_CHANGED = "number_changed"
    USER_ID_CHANGED = "user_id_changed"
    MERGED = "merged"  # two keys turned out to be one person


@dataclass(frozen=True)
class Sighting:
    """A webhook named a person by both ids."""

    phone: str
    bsuid: str


@dataclass(frozen=True)
class Change:
    """A system webhook: the person known by ``phone`` / ``old_bsuid`` now has ``new_phone`` / ``new_bsuid``."""

    kind: ChangeKind
    phone: str | None = None
    new_phone: str | None = None
    old_bsuid: str | None = None
    new_bsuid: str | None = None


@dataclass(frozen=True)
class PersonRecord:
    """One person: the stable key and the current ids."""

    key: str
    phone: str | None
    bsuid: str | None


def sender_ids(user: str | None, bsuid: str | None) -> tuple[str | None, str | None]:
    """The phone number and the BSUID a message names its sender by (either may be None): a
    ``from`` holding a BSUID counts as the BSUID, a number is read as WhatsApp writes it."""
    return _id(user, bsuid=False), _id(bsuid, bsuid=True) or _id(user, bsuid=True)


def _id(value: object, *, bsuid: bool) -> str | None:
    """A valid phone number or BSUID from a payload, else None."""
    if not isinstance(value, str | int) or isinstance(value, bool):
        return None
    clean, is_user_id = _normalised(str(value))
    return clean if clean is not None and is_user_id == bsuid else None


@functools.lru_cache(maxsize=4096)
def _normalised(value: str) -> tuple[str | None, bool]:
    """``value`` normalised (None: neither a number nor a BSUID) and whether it is a BSUID. Remembered: every
    webhook names its sender several times (contacts, the message, the identity news), and a burst's senders are
    a few hundred people writing again and again (the acknowledgement waits for these look-ups)."""
    try:
        clean = normalise_user(value)
    except ValueError:
        return None, False
    return clean, is_bsuid(clean)


def _field(model: Any, name: str) -> Any:
    """``model.name`` whether the model declares it or keeps it as an extra key, as plain data."""
    value: Any = getattr(model, name, None)
    if value is None:
        value = (getattr(model, "model_extra", None) or {}).get(name)
    return value.model_dump() if hasattr(value, "model_dump") else value


def _system_change(message: Any) -> Change | None:
    system = _field(message, "system")
    if not isinstance(system, dict):
        return None
    kind = system.get("type")
    phone = _id(message.from_, bsuid=False)
    old_bsuid = _id(system.get("previous_user_id"), bsuid=True) or _id(message.from_user_id, bsuid=True)
    new_bsuid = _id(system.get("user_id"), bsuid=True)
    if kind == "user_changed_number":
        new_phone = _id(system.get("wa_id") or system.get("new_wa_id"), bsuid=False)
        return Change(ChangeKind.NUMBER_CHANGED, phone, new_phone, old_bsuid, new_bsuid)
    if kind == "user_changed_user_id":
        return Change(ChangeKind.USER_ID_CHANGED, phone, None, old_bsuid, new_bsuid)
    return None


def _rotations(value: Any) -> Iterator[Change]:
    updates = _field(value, "user_id_update")
    for raw in updates if isinstance(updates, list) else []:
        item: Any = raw.model_dump() if hasattr(raw, "model_dump") else raw
        ids = item.get("user_id") if isinstance(item, dict) else None
        if isinstance(ids, dict):
            yield Change(ChangeKind.USER_ID_CHANGED, _id(item.get("wa_id"), bsuid=False), None,
                         _id(ids.get("previous"), bsuid=True), _id(ids.get("current"), bsuid=True))


def identity_news(note: Notification) -> list[Sighting | Change]:
    """Every pairing and identity change a notification carries, in order."""
    news: list[Sighting | Change] = []
    for entry in note.entry:
        for change in entry.changes:
            value = change.value
            for contact in value.contacts:
                phone, bsuid = _id(contact.wa_id, bsuid=False), _id(contact.user_id, bsuid=True)
                if phone and bsuid:
                    news.append(Sighting(phone, bsuid))
            for message in value.messages:
                if message.type == "system":
                    found = _system_change(message)
                    if found is not None:
                        news.append(found)
                    continue
                phone, bsuid = _id(message.from_, bsuid=False), _id(message.from_user_id, bsuid=True)
                if phone and bsuid:
                    news.append(Sighting(phone, bsuid))
            news.extend(_rotations(value))
    return news


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class WhatsAppPeople:
    """The ``whatsapp_people`` table, held in memory; see the module docstring."""

    def __init__(self, db: Database, on_merge: Merge | None = None) -> None:
        self.db = db
        self.on_merge = on_merge
        self.people: dict[str, PersonRecord] = {}
        self._by_phone: dict[str, str] = {}
        self._by_bsuid: dict[str, str] = {}
        self._former: dict[str, set[str]] = {}
        self._merged: dict[str, str] = {}  # a key merged away -> the person it became
        self.changes: list[tuple[str, str, str, str]] = []  # (at, kind, old, new) of number/user id changes
        self._lock = asyncio.Lock()  # one change at a time: concurrent webhooks of a new person make one row
        #: New people, waiting to be written together (:meth:`_new_person`), and the task writing them
        self._queued: list[tuple[PersonRecord, asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._pending: dict[str, asyncio.Future[None]] = {}  # key -> its row's write, while it is under way

    async def load(self) -> None:
        """Read every person and their former ids."""
        await self._settle()
        # everything is read before anything is replaced: a store going out half-way leaves the copy as it was
        rows = await self.db.fetchall("SELECT person, phone, bsuid FROM whatsapp_people")
        events = await self.db.fetchall(
            "SELECT at, kind, person, old, new FROM whatsapp_identity_events WHERE kind IN (?, ?) ORDER BY id",
            (ChangeKind.NUMBER_CHANGED.value, ChangeKind.USER_ID_CHANGED.value))
        merged = await self.db.fetchall(
            "SELECT person, old FROM whatsapp_identity_events WHERE kind = ? ORDER BY id", (ChangeKind.MERGED.value,))
        self.people, self._by_phone, self._by_bsuid, self._former = {}, {}, {}, {}
        for r in rows:
            self._remember(PersonRecord(str(r["person"]), r["phone"], r["bsuid"]))
        self._merged = {str(m["old"]): str(m["person"]) for m in merged if m["old"]}
        self.changes = []
        for e in events:
            if e["old"]:
                self._former.setdefault(str(e["person"]), set()).add(str(e["old"]))
            self.changes.append((str(e["at"]), str(e["kind"]), str(e["old"] or "?"), str(e["new"] or "?")))

    def _remember(self, person: PersonRecord) -> None:
        old = self.people.get(person.key)
        if old is not None:
            self._by_phone.pop(old.phone or "", None)
            self._by_bsuid.pop(old.bsuid or "", None)
        self.people[person.key] = person
        if person.phone:
            self._by_phone[person.phone] = person.key
        if person.bsuid:
            self._by_bsuid[person.bsuid] = person.key

    # -- questions ---------------------------------------------------------------------

    def key_of(self, user: str) -> str:
        """The person's key for an id a message came with (the id itself for someone unknown)."""
        return self._by_phone.get(user) or self._by_bsuid.get(user) or user

    def current(self, key: str) -> str:
        """The person ``key`` names now: itself, or the person a merged-away key became (a message
        stored under it before the merge joins that person's conversation)."""
        seen = {key}
        while key not in self.people and key in self._merged and self._merged[key] not in seen:
            key = self._merged[key]
            seen.add(key)
        return key

    def address(self, key: str) -> str:
        """Where a reply to ``key`` goes: the current number, else the BSUID (``recipient``)."""
        person = self.people.get(key)
        if person is None:
            return key
        return person.phone or person.bsuid or key

    def identifiers(self, key: str) -> set[str]:
        """Every id of the person ``key``: the key, the current number and BSUID, former ones."""
        person = self.people.get(key)
        ids = {key, *self._former.get(key, ())}
        if person is not None:
            ids.update(i for i in (person.phone, person.bsuid) if i)
        return ids

    # -- learning ----------------------------------------------------------------------

    async def person_for(self, phone: str | None, bsuid: str | None) -> str:
        """The key of the person writing with ``phone`` and/or ``bsuid`` (learned when new)."""
        by_phone = self._by_phone.get(phone) if phone else None
        by_bsuid = self._by_bsuid.get(bsuid) if bsuid else None
        if phone and bsuid:
            if by_phone is not None and by_phone == by_bsuid:
                return await self._stored(by_phone)
        elif by_phone or by_bsuid:
            return await self._stored(by_phone or by_bsuid or "")
        elif phone or bsuid:
            try:
                return (await self._new_person(phone, bsuid)).key
            except DuplicateKey:
                pass  # another replica recorded them a moment ago: read again below, as one change
            except Exception as exc:
                if not is_storage_error(exc):
                    raise
                return self._unrecorded(phone, bsuid, exc)
        async with self._lock:
            await self._settle()
            try:
                return (await self._sight(phone, bsuid)).key
            except Exception as exc:
                if not is_storage_error(exc):
                    raise
                return self._unrecorded(phone, bsuid, exc)

    def _unrecorded(self, phone: str | None, bsuid: str | None, exc: Exception) -> str:
        """The key of someone whose row could not be written (the store is out): the one they would get. The
        message is stored with it if the store is back by then (a restarted PostgreSQL), else refused (Meta
        delivers it again); they are recorded with a later message. Looked up in the copy again, not made up
        beside it: the copy may have been read again while the write failed, with them in it (another replica
        recorded them), and a key made up beside that ("<number>-2") is nobody allowed_numbers lists: the message
        was acknowledged and ignored (lost; CI, stop 54)."""
        key = ((self._by_phone.get(phone) if phone else None) or (self._by_bsuid.get(bsuid) if bsuid else None)
               or self._fresh_key(phone or bsuid or "?"))
        log.warning("whatsapp: could not record who %s is (%s); learned on the next delivery", key, exc)
        return key

    async def learn(self, news: Iterable[Sighting | Change]) -> Exception | None:
        """Apply what a notification said (:func:`identity_news`). A storage error (the data dir
        cannot be written) does not stop the rest of the notification being read, so its senders
        can be told; it is returned, and the caller refuses the notification (Meta delivers it
        again, and what was not recorded is learned then)."""
        missed: Exception | None = None
        for item in news:
            if isinstance(item, Sighting) and not (self._by_phone.get(item.phone) or self._by_bsuid.get(item.bsuid)):
                try:  # someone new, named by both ids: written with the burst's other new people
                    await self._new_person(item.phone, item.bsuid)
                    continue
                except DuplicateKey:
                    pass  # another replica recorded them a moment ago: read again below, as one change
                except Exception as exc:
                    if not is_storage_error(exc):
                        raise
                    missed = missed or exc
                    continue
            async with self._lock:
                await self._settle()
                try:
                    if isinstance(item, Sighting):
                        await self._sight(item.phone, item.bsuid)
                    else:
                        await self._apply(item)
                except Exception as exc:
                    if not is_storage_error(exc):
                        raise
                    missed = missed or exc
        return missed

    async def _new_person(self, phone: str | None, bsuid: str | None) -> PersonRecord:
        """Someone neither of whose ids is known: known in memory at once, so the burst's other webhooks of theirs
        find them, and recorded together with the other new people arriving meanwhile, in one statement (their
        pairings, when named by both ids, in one more): one each, behind one lock, made a burst of first messages
        wait for each other (issue 44). The caller's message is stored after the row. Raises what the write
        raised; a person whose row was not written is forgotten again (DuplicateKey: another replica recorded
        them; the caller reads the table again)."""
        person = PersonRecord(self._fresh_key(phone or bsuid or "?"), phone, bsuid)
        self._remember(person)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending[person.key] = done
        self._queued.append((person, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_queued(), name="whatsapp people")
            self._writer.add_done_callback(self._writer_ended)
        await asyncio.shield(done)  # a caller cancelled meanwhile leaves the write (and the others) to finish
        for ident in (phone, bsuid):
            await self._absorb_legacy(ident, person.key)
        return person

    async def _write_queued(self) -> None:
        """Write the new people queued so far in one statement; those queued meanwhile in the next."""
        while self._queued:
            batch, self._queued = self._queued[:_NEW_PER_STATEMENT], self._queued[_NEW_PER_STATEMENT:]
            now = _now()
            try:
                await self.db.execute(
                    "INSERT INTO whatsapp_people(person, phone, bsuid, created_at, updated_at) VALUES "
                    + ", ".join("(?, ?, ?, ?, ?)" for _ in batch),
                    tuple(v for person, _ in batch for v in (person.key, person.phone, person.bsuid, now, now)))
            except Exception as exc:  # noqa: BLE001 - handed to every waiting caller
                for person, done in batch:
                    if self.people.get(person.key) is person:
                        self._forget(person)  # not recorded: a later message makes them anew
                    self._finished(person, done)
                    done.set_exception(exc)
                    done.exception()  # their callers are told; none left waiting is no error
                continue
            paired = [person for person, _ in batch if person.phone and person.bsuid]
            failure: Exception | None = None
            if paired:
                try:
                    await self.db.execute(
                        "INSERT INTO whatsapp_identity_events(at, kind, person, old, new) VALUES "
                        + ", ".join("(?, ?, ?, ?, ?)" for _ in paired),
                        tuple(v for p in paired for v in (now, ChangeKind.PAIRED.value, p.key, p.phone, p.bsuid)))
                except Exception as exc:  # noqa: BLE001 - the rows stand; the pairings' callers are told
                    failure = exc
            for person, done in batch:
                self._finished(person, done)
                if failure is not None and person.phone and person.bsuid:
                    done.set_exception(failure)
                    done.exception()
                else:
                    done.set_result(None)

    def _writer_ended(self, writer: asyncio.Task[None]) -> None:
        """The write was cancelled (stopping), before or while it ran: every webhook waiting for a new person's row
        is cancelled too (not acknowledged: delivered again), none is left waiting."""
        if writer is not self._writer or not writer.cancelled():
            return
        for done in self._pending.values():
            done.cancel()
        self._pending.clear()
        self._queued = []

    def _finished(self, person: PersonRecord, done: asyncio.Future[None]) -> None:
        if self._pending.get(person.key) is done:
            del self._pending[person.key]

    async def _stored(self, key: str) -> str:
        """``key``, once the row of that new person is written if it is being written (another webhook of theirs
        in the same burst: its message is not stored before its sender's row either). A write that failed leaves
        the key as it is: they are recorded with a later message."""
        pending = self._pending.get(key)
        if pending is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(pending)
        return key

    async def _settle(self) -> None:
        """Wait until the new people queued are written (a change reads what is stored, or writes after it)."""
        while self._writer is not None and not self._writer.done():
            await asyncio.shield(self._writer)

    def _forget(self, person: PersonRecord) -> None:
        self.people.pop(person.key, None)
        if person.phone and self._by_phone.get(person.phone) == person.key:
            del self._by_phone[person.phone]
        if person.bsuid and self._by_bsuid.get(person.bsuid) == person.key:
            del self._by_bsuid[person.bsuid]

    async def _sight(self, phone: str | None, bsuid: str | None) -> PersonRecord:
        """The person named by ``phone`` and/or ``bsuid``: found, paired, merged or new.

        Another replica may have recorded the same person (or given one of these ids to someone) a
        moment ago, unseen in this replica's copy: the row breaks a unique key, the copy is read again
        from the table, and the sighting is applied to what is there now."""
        try:
            return await self._sight_once(phone, bsuid)
        except DuplicateKey:
            log.info("whatsapp: another replica recorded %s first; reading the people table again",
                     " / ".join(i for i in (phone, bsuid) if i))
            await self.load()
            return await self._sight_once(phone, bsuid)

    async def _sight_once(self, phone: str | None, bsuid: str | None) -> PersonRecord:
        by_phone = self._by_phone.get(phone) if phone else None
        by_bsuid = self._by_bsuid.get(bsuid) if bsuid else None
        if by_phone is None and by_bsuid is None:
            key = self._fresh_key(phone or bsuid or "?")
            person = PersonRecord(key, phone, bsuid)
            await self._save(person, new=True)
            if phone and bsuid:
                await self._event(ChangeKind.PAIRED, key, phone, bsuid)
            for ident in (phone, bsuid):
                await self._absorb_legacy(ident, key)
            return person
        key = by_phone or by_bsuid or ""
        if by_phone and by_bsuid and by_phone != by_bsuid:
            await self._merge(by_bsuid, by_phone)
        person = self.people[key]
        if (phone and person.phone != phone) or (bsuid and person.bsuid != bsuid):
            before = person
            person = PersonRecord(key, phone or person.phone, bsuid or person.bsuid)
            await self._save(person)
            # An id replacing another without a system webhook is a change (the old one stays the person's).
            if before.phone and before.phone != person.phone:
                await self._event(ChangeKind.NUMBER_CHANGED, key, before.phone, person.phone)
            if before.bsuid and before.bsuid != person.bsuid:
                await self._event(ChangeKind.USER_ID_CHANGED, key, before.bsuid, person.bsuid)
            await self._event(ChangeKind.PAIRED, key, phone, bsuid)
            log.info("whatsapp: %s and %s are one person (%s)", phone, bsuid, key)
            for ident in (phone, bsuid):
                await self._absorb_legacy(ident, key)
        return person

    async def _apply(self, change: Change) -> None:
        """A number or user id change: the person keeps their key (history, role, access)."""
        if change.new_phone is None and change.new_bsuid is None:
            return
        if not (change.phone or change.old_bsuid):
            log.warning("whatsapp: a %s webhook named nobody (no previous number or user id); ignored", change.kind)
            return
        found = (self._by_phone.get(change.phone or "") or self._by_bsuid.get(change.old_bsuid or ""))
        person = self.people[found] if found else await self._sight(change.phone, change.old_bsuid)
        phone, bsuid = person.phone, person.bsuid
        if change.new_phone and change.new_phone != phone:
            await self._detach(change.new_phone, person.key)
            await self._event(ChangeKind.NUMBER_CHANGED, person.key, phone, change.new_phone)
            phone = change.new_phone
        if change.new_bsuid and change.new_bsuid != bsuid:
            await self._detach(change.new_bsuid, person.key)
            await self._event(ChangeKind.USER_ID_CHANGED, person.key, bsuid, change.new_bsuid)
            bsuid = change.new_bsuid
        await self._save(PersonRecord(person.key, phone, bsuid))
        log.info("whatsapp: %s: %s is now %s (the same person, %s: history and access kept)", change.kind,
                 change.phone or change.old_bsuid, " / ".join(i for i in (phone, bsuid) if i), person.key)

    # -- the rows ----------------------------------------------------------------------

    def _fresh_key(self, ident: str) -> str:
        """``ident``, or ``ident-2``... when a person whose id changed already holds that key."""
        key, n = ident, 2
        while key in self.people:
            key, n = f"{ident}-{n}", n + 1
        return key

    async def _save(self, person: PersonRecord, *, new: bool = False) -> None:
        now = _now()
        if new:
            await self.db.execute(
                "INSERT INTO whatsapp_people(person, phone, bsuid, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                (person.key, person.phone, person.bsuid, now, now))
        else:
            await self.db.execute("UPDATE whatsapp_people SET phone = ?, bsuid = ?, updated_at = ? WHERE person = ?",
                                  (person.phone, person.bsuid, now, person.key))
        self._remember(person)

    async def _detach(self, ident: str, keep: str) -> None:
        """``ident`` now belongs to ``keep``: another person holding it loses it (Meta gave it on)."""
        other = self._by_phone.get(ident) or self._by_bsuid.get(ident)
        if other is None or other == keep:
            return
        was = self.people[other]
        await self._save(PersonRecord(other, None if was.phone == ident else was.phone,
                                      None if was.bsuid == ident else was.bsuid))

    async def _event(self, kind: ChangeKind, person: str, old: str | None, new: str | None) -> None:
        at = _now()
        await self.db.execute("INSERT INTO whatsapp_identity_events(at, kind, person, old, new) VALUES (?, ?, ?, ?, ?)",
                              (at, kind.value, person, old, new))
        if kind in (ChangeKind.NUMBER_CHANGED, ChangeKind.USER_ID_CHANGED):
            if old:
                self._former.setdefault(person, set()).add(old)
            self.changes.append((at, kind.value, old or "?", new or "?"))

    async def _merge(self, old: str, new: str) -> None:
        """Two people are one: ``old``'s row goes, its data moves to ``new``."""
        gone = self.people.pop(old)
        self._by_phone.pop(gone.phone or "", None)
        self._by_bsuid.pop(gone.bsuid or "", None)
        await self.db.execute("DELETE FROM whatsapp_people WHERE person = ?", (old,))
        await self.db.execute("UPDATE whatsapp_identity_events SET person = ? WHERE person = ?", (new, old))
        self._former.setdefault(new, set()).update(self._former.pop(old, set()))
        await self._event(ChangeKind.MERGED, new, old, new)
        self._merged[old] = new
        log.info("whatsapp: %s and %s are one person: their conversations are merged", old, new)
        if self.on_merge is not None:
            await self.on_merge(old, new)

    async def _absorb_legacy(self, ident: str | None, key: str) -> None:
        """Data kept under a bare id (before people were stored) joins the person it belongs to."""
        if ident and ident != key and ident not in self.people and self.on_merge is not None:
            await self.on_merge(ident, key)


def listed_changes(changes: Iterable[tuple[str, str, str, str]], allowed: Iterable[str]) -> list[str]:
    """Lines for the owner: listed numbers (or user ids) that changed to one not listed yet.
    ``changes`` are ``(at, kind, old, new)`` number and user id changes."""
    listed = set(allowed)
    lines = []
    for at, kind, old, new in changes:
        if old in listed and new not in listed:
            what = "number" if kind == ChangeKind.NUMBER_CHANGED.value else "user id"
            lines.append(f"  listed {what} {old} changed to {new} on {at[:16]} (the same person: history and "
                         f"access kept); put {new} in whatsapp.allowed_numbers in place of {old}, which may now "
                         "belong to someone else")
    return ["WhatsApp people whose listed id changed:", *lines] if lines else []


async def changed_listed(db: Database, allowed: Iterable[str]) -> list[str]:
    """:func:`listed_changes` from the state db (``sabha status``)."""
    try:
        rows = await db.fetchall(
            "SELECT at, kind, old, new FROM whatsapp_identity_events WHERE kind IN (?, ?) ORDER BY id",
            (ChangeKind.NUMBER_CHANGED.value, ChangeKind.USER_ID_CHANGED.value))
    except Exception:  # noqa: BLE001 - a db from before the people table
        return []
    return listed_changes(((str(r["at"]), str(r["kind"]), str(r["old"] or "?"), str(r["new"] or "?"))
                           for r in rows), allowed)
