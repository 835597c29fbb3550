"""A burst of first messages from people Sabha has not seen (both backends): each new person is recorded before
their webhook is acknowledged (``whatsapp_people``), and a burst of them is recorded in a few statements, not one
each behind one lock (issue 44: in the benchmark's first round, 100 new senders, every acknowledgement of theirs
waited for the ones before: p99 4.7-10x the bare handler's where later rounds were ~2x)."""

from __future__ import annotations

import asyncio

import pytest

from board.storage import Database
from board.storage.database import Params
from bot.channels.whatsapp.identity import Sighting, WhatsAppPeople
from tests.support.fakes.outage_db import OutageDatabase

pytestmark = pytest.mark.backends

PHONES = [f"1555200{n:04d}" for n in range(50)]
NEW_PERSON = "INSERT INTO whatsapp_people"


class CountingDatabase(OutageDatabase):
    """``db``, counting the statements that record a new person (and out for them while armed)."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, lambda sql: sql.startswith(NEW_PERSON))
        self.inserts = 0
        self.written: set[str] = set()  # the numbers whose rows are stored

    def _check(self, sql: str) -> None:
        self.inserts += sql.startswith(NEW_PERSON)
        super()._check(sql)

    async def execute(self, sql: str, params: Params = ()) -> None:
        await super().execute(sql, params)
        if sql.startswith(NEW_PERSON):
            self.written.update(str(v) for v in list(params)[1::5])


async def stored(database: Database) -> dict[str, str]:
    """Who the people table holds, as a fresh copy reads it: number -> key."""
    fresh = WhatsAppPeople(database)
    await fresh.load()
    return {phone: fresh.key_of(phone) for phone in PHONES if fresh.key_of(phone) in fresh.people}


async def test_a_burst_of_new_senders_is_recorded_in_a_few_statements_each_before_its_answer(
        database: Database) -> None:
    counting = CountingDatabase(database)
    people = WhatsAppPeople(counting)
    await people.load()

    async def first_message(phone: str) -> str:
        key = await people.person_for(phone, None)
        assert phone in counting.written, "a new sender's key was given before their row was stored"
        return key

    keys = await asyncio.gather(*(first_message(phone) for phone in PHONES for _ in range(2)))
    assert keys == [phone for phone in PHONES for _ in range(2)]
    assert await stored(database) == {phone: phone for phone in PHONES}  # every one recorded when answered
    assert counting.inserts <= 5, f"{counting.inserts} statements for {len(PHONES)} new people"


async def test_new_senders_not_recorded_in_an_outage_are_recorded_with_their_next_message(
        database: Database) -> None:
    """The store out while the burst's people are written: each message still gets its person's key (it is
    stored, or refused, by the intake as before) and the people are recorded with a later message."""
    counting = CountingDatabase(database)
    people = WhatsAppPeople(counting)
    await people.load()
    counting.armed = True
    keys = await asyncio.gather(*(people.person_for(phone, None) for phone in PHONES[:10]))
    assert keys == PHONES[:10]
    assert counting.failed
    assert await stored(database) == {}
    counting.armed = False
    assert await asyncio.gather(*(people.person_for(phone, None) for phone in PHONES[:10])) == PHONES[:10]
    assert await stored(database) == {phone: phone for phone in PHONES[:10]}


async def test_a_burst_with_a_person_another_replica_recorded_keeps_every_key(database: Database) -> None:
    """One new person of the burst was recorded by another replica a moment ago: the burst's statement breaks the
    unique key, and each of the burst is recorded on its own, as a single new person always was."""
    mine = WhatsAppPeople(database)
    await mine.load()
    other = WhatsAppPeople(database)
    await other.load()
    assert await other.person_for(PHONES[3], None) == PHONES[3]
    keys = await asyncio.gather(*(mine.person_for(phone, None) for phone in PHONES[:8]))
    assert keys == PHONES[:8]
    assert await stored(database) == {phone: phone for phone in PHONES[:8]}


async def test_a_burst_of_new_senders_named_by_number_and_user_id_is_recorded_in_a_few_statements(
        database: Database) -> None:
    """Since 2026 Meta names a sender by both ids (``contacts[].wa_id`` and ``user_id``): each new pair is one
    person, keyed by the number, with its pairing recorded, before its webhook goes on; the burst in a few
    statements."""
    counting = CountingDatabase(database)
    people = WhatsAppPeople(counting)
    await people.load()
    pairs = [Sighting(phone, f"US.{9000000000 + n}") for n, phone in enumerate(PHONES[:30])]

    async def notification(pair: Sighting) -> None:
        assert await people.learn([pair]) is None
        assert pair.phone in counting.written, "a new sender's pairing was taken before their row was stored"
        assert await people.person_for(pair.phone, pair.bsuid) == pair.phone

    await asyncio.gather(*(notification(pair) for pair in pairs for _ in range(2)))
    assert counting.inserts <= 5, f"{counting.inserts} statements for {len(pairs)} new people"
    fresh = WhatsAppPeople(database)
    await fresh.load()
    assert all(fresh.key_of(p.bsuid) == p.phone == fresh.key_of(p.phone) for p in pairs)
    paired = await database.fetchall("SELECT person, old, new FROM whatsapp_identity_events WHERE kind = 'paired'")
    assert sorted((r["person"], r["old"], r["new"]) for r in paired) == sorted((p.phone, p.phone, p.bsuid)
                                                                             for p in pairs)


@pytest.mark.parametrize("turns", [1, 3])  # the write cancelled before it began, or while it runs
async def test_stopping_while_new_senders_are_written_leaves_no_webhook_waiting(database: Database, turns: int
                                                                                 ) -> None:
    """The daemon stops (the write is cancelled) with new senders' webhooks waiting for their rows: each of them
    is cancelled too (not acknowledged; Meta delivers it again) and none waits for ever."""
    people = WhatsAppPeople(database)
    await people.load()
    waiting = [asyncio.create_task(people.person_for(phone, None)) for phone in PHONES[:5]]
    for _ in range(turns):
        await asyncio.sleep(0)  # each has queued its sender (and the write has begun)
    assert people._writer is not None
    people._writer.cancel()
    for task in waiting:
        with pytest.raises(asyncio.CancelledError):
            await task
    assert not people._pending
