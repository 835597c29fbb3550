"""WhatsApp people seen by two replicas on one state store (both backends): a replica that has not seen a
person another replica recorded a moment ago still files their message under that person, even when the
store goes out half-way through reading the people table again."""

from __future__ import annotations

import asyncio

import pytest

from board.storage import Database
from board.storage.database import Params, Row
from bot.channels.whatsapp.identity import WhatsAppPeople
from tests.support.fakes.outage_db import OutageDatabase

pytestmark = pytest.mark.backends

PHONE = "15551000080"


async def test_a_person_another_replica_recorded_keeps_their_key_when_the_store_goes_out_while_re_reading(
        database: Database) -> None:
    """Seen in the replica burst test with PostgreSQL restarted: replica r1 had not seen 15551000080, whom r0 had
    just recorded. r1's insert broke the unique key, r1 read the people table again, and the store went out
    between the people and their events. r1 then made up the key "15551000080-2" for them (the number now held
    by "someone else": the person it had just re-read), judged that key not in allowed_numbers, and
    acknowledged the message without storing it: lost."""
    flaky = OutageDatabase(database, lambda sql: "whatsapp_identity_events" in sql)
    mine = WhatsAppPeople(flaky)
    await mine.load()  # replica r1 started before the person wrote
    other = WhatsAppPeople(database)
    await other.load()
    assert await other.person_for(PHONE, None) == PHONE  # replica r0 records the person; r1 does not know
    flaky.armed = True  # the store goes out after the people are read again, before their events are
    key = await mine.person_for(PHONE, None)
    assert flaky.failed, "the outage was not reached: the test no longer pins the moment down"
    assert key == PHONE
    assert PHONE in mine.identifiers(key)  # allowed_numbers lists the number: admitted and stored, not ignored


class ReReadMeanwhile(OutageDatabase):
    """``db`` whose last read of the people table's reload (the merges) is held until a new person's row fails to be
    written, then given back before that failure reaches its caller: the copy is read again at that moment."""

    MERGES = "SELECT person, old FROM whatsapp_identity_events WHERE kind = ?"

    def __init__(self, db: Database) -> None:
        super().__init__(db, lambda sql: sql.startswith("INSERT INTO whatsapp_people"))
        self.reading = asyncio.Event()  # the reload is at its last read
        self.write_failed = asyncio.Event()

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        rows = await super().fetchall(sql, params)
        if sql.startswith(self.MERGES) and self.armed:
            self.reading.set()
            await self.write_failed.wait()
        return rows

    def _check(self, sql: str) -> None:
        if self.armed and self.failing(sql):
            self.write_failed.set()  # the reload resumes first; the failure reaches the webhook after it
        super()._check(sql)


async def test_a_person_another_replica_recorded_keeps_their_key_when_their_row_fails_while_the_copy_is_re_read(
        database: Database) -> None:
    """Seen in CI's replica burst with PostgreSQL restarted (stop 54: Q262 and Q273, two WhatsApp messages
    acknowledged and never stored): a replica that had not seen a person another replica recorded tried to record
    them, the store went out, and the copy of the people table was read again meanwhile (another webhook's re-read).
    The key for the message was then made up beside the copy ("15551000080-2": the number "someone else's"), that
    key was not in allowed_numbers, and the message was acknowledged and ignored: lost."""
    flaky = ReReadMeanwhile(database)
    mine = WhatsAppPeople(flaky)
    await mine.load()  # replica r1 started before the person wrote
    other = WhatsAppPeople(database)
    await other.load()
    assert await other.person_for(PHONE, None) == PHONE  # replica r0 records the person; r1 does not know
    flaky.armed = True
    reload = asyncio.create_task(mine.load())  # another webhook's re-read of the table, at its last statement
    await flaky.reading.wait()
    key = await mine.person_for(PHONE, None)  # r1 tries to record them: the store is out
    await reload
    assert flaky.failed, "the outage was not reached: the test no longer pins the moment down"
    assert key == PHONE
    assert PHONE in mine.identifiers(key)  # allowed_numbers lists the number: admitted and stored, not ignored
