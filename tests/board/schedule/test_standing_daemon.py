"""Standing work through the real daemon (issue 42, "Must show"): a real ``sabha run`` against the fake
Telegram Bot API on the offline model, its time read from a file the test writes (``SABHA_TEST_CLOCK``, only
with ``SABHA_TEST_MODE=1``), so nothing here sleeps for time to pass.

A weekly brief set by ``/every`` in a forum topic runs at its time in that topic; the second run, with
nothing changed, makes no model call (the ledger says so) and says "Nothing new since Mon 14 Dec."; once an
action item falls due within the week, the next brief names it. A member's ``/standing pause`` is refused and
nothing changes. ``kill -9`` 1 s before, at and 1 s after an item's time (separate runs): the run happens
exactly once, proved by the next day's run (the runner works in due order) arriving after the restart. A run
that fell due while Sabha was stopped is done on start when it is at most ``schedule.catch_up_s`` late, and is
one "Missed" line when it is later (one line for three missed days, the next run scheduled from now).
"""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.schedule import START
from tests.support.standing import StandingBoard
from tests.support.telegram import FRIEND

MONDAY = datetime(2026, 12, 14, 9, 0, tzinfo=UTC)
WEEK = timedelta(days=7)
FIRST_BRIEF = "Nothing to report yet"  # the first run of a brief on an empty board


@pytest.fixture
async def board(tmp_path: Path, fake: FakeTelegramAPI) -> AsyncIterator[StandingBoard]:
    running = StandingBoard(tmp_path, fake)
    try:
        yield running
    finally:
        await running.sabha.close()


async def test_a_weekly_brief_set_by_every_runs_in_its_topic_and_costs_nothing_when_nothing_changed(
        board: StandingBoard) -> None:
    await board.start()
    assert "TEST MODE: the board's time is read from" in board.sabha.log
    items = await board.meeting()  # its action items are due by Wed 9 Dec, its predictions by 26 Nov
    second = items[1]
    board.at(datetime(2026, 12, 10, 9, 0, tzinfo=UTC))  # Thursday: every due date has passed
    said = await board.say("/every monday 9am brief", "Standing item")
    assert "Standing item #1: a brief every Monday at 09:00 (UTC), here. First run Mon 2026-12-14 09:00 UTC." in said
    refused = await board.say("/standing pause 1", "owner only", sender=FRIEND)  # a member: refused
    assert refused.endswith("\n/standing pause is for the board's owner only.")  # under the advisor's name
    assert [r["status"] for r in board.query("SELECT status FROM standing_items")] == ["active"]
    status = await board.say("/status", "Standing work")
    assert "#1 a brief every Monday at 09:00 (UTC) in telegram chat" in status and "next Mon 2026-12-14 09:00" in status

    board.at(MONDAY)
    brief = await board.wait_for("Brief: what changed so far")
    assert brief.message_thread_id == board.topic  # its topic
    assert "Decision awaiting your ratification: Should we open a Pune office?" in brief.text
    assert f"Action #{second} " in brief.text and "overdue since Wed 2026-12-09 09:00 UTC" in brief.text
    briefs = "SELECT COUNT(*) FROM llm_calls WHERE purpose = 'brief' AND session_key = 'standing:1'"
    await board.wait_db(briefs, 1)  # something changed: one model call wrote its opening

    board.at(MONDAY + WEEK)
    quiet = await board.wait_for("Nothing new since")
    assert quiet.text.endswith("\nNothing new since Mon 14 Dec.") and quiet.message_thread_id == board.topic
    assert board.query(briefs)[0][0] == 1  # no model call at all: $0
    run = board.query("SELECT outcome, model_calls FROM standing_runs WHERE due_at LIKE '2026-12-21%'")
    assert [tuple(r) for r in run] == [("nothing_new", 0)]

    await board.say(f"/due {second} 2026-12-31", "is now due")  # ten days on: not this week yet
    seen = len(board.telegram.sent_messages)
    board.at(MONDAY + 2 * WEEK)
    named = await board.wait_for("Brief: what changed since Mon 21 Dec", after=seen)
    assert f"Action #{second} " in named.text and "due Thu 2026-12-31 09:00 UTC" in named.text
    assert named.message_thread_id == board.topic
    await board.wait_db(briefs, 2)
    assert len(board.in_topic("Brief: what changed|Nothing new since")) == 3  # one message per run


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["1s-before", "at", "1s-after"])
async def test_kill_9_around_a_standing_items_time_runs_it_exactly_once(board: StandingBoard, offset: int) -> None:
    await board.start()
    said = await board.say("/every day 10am brief", "Standing item")  # today 10:00 (START is 09:00), then daily
    assert "First run Wed 2026-11-25 10:00 UTC" in said
    board.after(3600 + offset)
    if offset > 0:
        await board.wait_for(FIRST_BRIEF)  # out (marked "sending" before it left), then killed
        await board.wait_db("SELECT status FROM scheduled_work WHERE key LIKE 'standing:1:2026-11-25%'", "done")
    await board.sabha.signal(signal.SIGKILL)
    before = len(board.in_topic(FIRST_BRIEF))
    assert before == (1 if offset > 0 else 0) or offset == 0  # at the moment: sent or not, a race by design
    await board.sabha.start()
    board.after(3601)  # the run is due (or done): within schedule.catch_up_s
    await board.wait_for(FIRST_BRIEF)
    seen = len(board.telegram.sent_messages)
    board.at(START + timedelta(days=1, hours=1))  # Thursday 10:00: the next run, after the first in due order
    await board.wait_for("Nothing new since Wed 25 Nov.", after=seen)
    assert len(board.in_topic(FIRST_BRIEF)) == 1, (offset, before, board.sabha.log)
    assert len(board.in_topic("Nothing new since")) == 1
    await board.wait_db("SELECT COUNT(*) FROM scheduled_work WHERE kind = 'standing' AND status = 'done'", 2)
    keys = board.query("SELECT key, status FROM scheduled_work WHERE kind = 'standing' ORDER BY due_at")
    assert [r["status"] for r in keys] == ["done", "done", "pending"], [tuple(r) for r in keys]


async def test_a_run_missed_while_sabha_was_down_is_done_on_start_within_catch_up_else_said_missed_once(
        board: StandingBoard) -> None:
    await board.start()
    await board.say("/every day 10am brief", "Standing item")
    await board.sabha.signal(signal.SIGTERM)
    board.after(3600 + 1800)  # down over Wednesday's 10:00: started again half an hour late (catch_up_s: 1 h)
    await board.sabha.start()
    late = await board.wait_for(FIRST_BRIEF)
    assert late.message_thread_id == board.topic
    await board.wait_db("SELECT COUNT(*) FROM scheduled_work WHERE kind = 'standing' AND status = 'done'", 1)
    await board.sabha.signal(signal.SIGTERM)
    board.at(START + timedelta(days=3, hours=5))  # down over Thursday's, Friday's and Saturday's runs
    await board.sabha.start()
    missed = await board.wait_for("Missed: ")
    assert "a brief every day at 10:00 (UTC) was due Thu 2026-11-26 10:00 UTC while Sabha was not running" \
           in missed.text and "the next run is Sun 2026-11-29 10:00 UTC" in missed.text
    await board.wait_db("SELECT COUNT(*) FROM scheduled_work WHERE kind = 'standing' AND status = 'done'", 2)
    assert len(board.in_topic("Missed: ")) == 1  # one line, not one per day
    assert len(board.in_topic(FIRST_BRIEF)) == 1
    pending = board.query("SELECT key FROM scheduled_work WHERE kind = 'standing' AND status = 'pending'")
    assert [r["key"] for r in pending] == ["standing:1:2026-11-29T10:00:00.000000Z"]
