"""A meeting drawn from its stored record (another replica runs it) reads as a sequence that only grows.

The stream that follows the record (``?source=record``) reads it again every second and sends what is past
what it sent; when a later reading no longer begins with what was sent, it sends ``reload`` and the page is
drawn again. CI saw that ``reload`` on the other replica's page mid-meeting: a member's stance (the
scoreboard's ``disagreement`` event) is stored while the member is still speaking, its statement only once
the member has finished, and a reading between the two placed the stance at the end, the next one after its
statement.
"""

from __future__ import annotations

import itertools

import pytest

from board.room.store import MeetingStore
from board.storage import Database
from bot.web.view import events_from_record

pytestmark = pytest.mark.backends  # the record stream serves replicas on PostgreSQL; SQLite alike


async def _reading(store: MeetingStore, meeting_id: str) -> list[tuple[str, str, str]]:
    row = await store.get(meeting_id)
    assert row is not None
    return [(str(e.kind), e.role or "", e.text or "")
            for e in events_from_record(row, await store.details(meeting_id))]


async def test_a_stance_stored_before_its_statement_never_reorders_a_later_reading(database: Database) -> None:
    store = MeetingStore(database)
    await store.create("m1", "Open an office in Lisbon?", "board", "general")
    await store.participant("m1", "finance", "present")
    await store.participant("m1", "critic", "present")
    await store.statement("m1", 1, "finance", "Lisbon costs less than Berlin.", model="offline", cost_usd=0.0)
    readings = [await _reading(store, "m1")]
    # the critic, mid-statement, records a stance through the scoreboard tool ...
    await store.event("m1", "disagreement", "critic", {"role": "critic", "with": "finance", "score": 4}, 1)
    readings.append(await _reading(store, "m1"))
    # ... and its statement is stored once it has finished speaking
    await store.statement("m1", 1, "critic", "The hiring market is thin.", model="offline", cost_usd=0.0)
    readings.append(await _reading(store, "m1"))
    await store.finish("m1", stop_reason="decided", cost_usd=0.0, decision={"recommendation": "Wait a quarter."},
                       minutes="Wait a quarter.")
    readings.append(await _reading(store, "m1"))
    for earlier, later in itertools.pairwise(readings):
        assert later[:len(earlier)] == earlier, (earlier, later)  # what was sent is still where it was
    assert ("disagreement", "critic", "") in readings[-1]  # the stance is shown once its statement is
