"""What a standing item's meeting costs this month (:meth:`StandingMeetings.month_cost`): its tagged calls of
this calendar month, and the untagged calls of its meetings (made after a restart resumed one), nothing of last
month or of other items; the one line a run gets while meetings are off; no second meeting while the item's
previous one still runs. On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from board.app import Board
from board.room.meeting import MeetingSettings
from board.room.settings import MEETINGS_OFF
from board.schedule import Place
from tests.board.room.test_meeting import brain
from tests.support.board import board_with
from tests.support.fakes.scripted_model import ScriptedModel

pytestmark = pytest.mark.backends


async def call(board: Board, ts: datetime, cost: float, *, item: int | None = None, meeting: str | None = None) -> None:
    await board.parts.db.execute(
        "INSERT INTO llm_calls(ts, provider, model, outcome, cost_usd, schedule_item, meeting_id) "
        "VALUES (?, 'offline', 'offline', 'ok', ?, ?, ?)", (ts.isoformat(timespec="seconds"), cost, item, meeting))


async def test_month_cost_counts_this_months_runs_of_the_item(board: Board) -> None:
    now = board.parts.clock.now().astimezone(UTC)
    last_month = now.replace(day=1) - timedelta(days=2)
    await board.parts.db.execute(
        "INSERT INTO standing_meetings(meeting_id, item_id, kind, label, started_at) VALUES ('m-7', 7, 'meeting', "
        "'#7 meeting: burn', ?)", (now.isoformat(timespec="seconds"),))
    await call(board, now, 0.25, item=7)
    await call(board, now, 0.125, meeting="m-7")  # resumed after a restart: no tag, its meeting is the item's
    await call(board, now, 0.5, item=7, meeting="m-7")  # counted once
    await call(board, last_month, 4.0, item=7)
    await call(board, now, 2.0, item=8)
    await call(board, now, 1.0)
    standing = board.parts.standing_meetings
    assert await standing.month_cost(7) == pytest.approx(0.875)
    assert await standing.month_cost(8) == pytest.approx(2.0)
    assert await standing.month_cost(9) == 0.0


async def test_with_meetings_off_a_run_says_so_in_one_line(board: Board) -> None:
    from dataclasses import replace

    board.parts.room.meeting_settings = replace(board.parts.room.meeting_settings, enabled=False)
    reply = await board.parts.standing_meetings.run("roundtable", "growth ideas", Place("telegram", "-100", 5),
                                                    item_id=3)
    assert reply is not None and (reply.channel, reply.chat_id, reply.thread_id) == ("telegram", "-100", 5)
    assert reply.text == f"The standing roundtable #3 is due, but {MEETINGS_OFF}"
    assert await board.parts.room.store.list() == []
    board.parts.room.meeting_settings = replace(board.parts.room.meeting_settings, enabled=True)
    blank = await board.parts.standing_meetings.run("roundtable", "  ", Place("telegram", "-100", 5), item_id=3)
    assert blank is not None and blank.text.startswith("The standing roundtable #3 on \u201c\u201d could not be held:")
    assert await board.parts.room.store.list() == []


async def test_while_its_meeting_still_runs_a_run_holds_no_second_one(workspace: Path, data_dir: Path) -> None:
    """A run while the item's previous meeting still runs on record (a long one, or one resumed after a restart
    whose run was not marked done) holds no second meeting; another item's run in another place does."""
    model = ScriptedModel(default=brain(), latency=0.2)
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1))
    try:
        standing = board.parts.standing_meetings
        assert await standing.run("meeting", "Cut the burn?", Place("telegram", "-100", 5), item_id=4) is None
        assert await standing.run("meeting", "Cut the burn?", Place("telegram", "-100", 5), item_id=4) is None
        assert await standing.run("meeting", "Hire?", Place("telegram", "-100", 6), item_id=5) is None
        assert len(await board.parts.room.store.list()) == 2
        await board.parts.room.drain(60)
        held = await board.parts.db.fetchall("SELECT item_id, kind FROM standing_meetings ORDER BY item_id")
        assert [(int(r["item_id"]), str(r["kind"])) for r in held] == [(4, "meeting"), (5, "meeting")]
    finally:
        await board.close()
