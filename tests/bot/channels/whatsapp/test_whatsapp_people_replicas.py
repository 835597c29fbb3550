"""WhatsApp people seen by two replicas on one state store (both backends): a replica that has not seen a
person another replica recorded a moment ago still files their message under that person, even when the
store goes out half-way through reading the people table again."""

from __future__ import annotations

import pytest

from board.storage import Database
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
