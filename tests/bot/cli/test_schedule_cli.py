"""``sabha schedule`` beside a running daemon (issue 42): an item added from the terminal wakes the daemon and
runs in the place it names (a forum topic) at its time; ``list`` shows it with its next run, as ``sabha status``
does; a phrase that cannot be read exits 2 with what would be read, and nothing is stored; ``pause`` cancels the
next run (the daemon sends nothing at its time), ``resume`` schedules the next one from now. A real ``sabha run``
on the fake Telegram Bot API, its time read from a file the test writes (``SABHA_TEST_CLOCK``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.schedule import START
from tests.support.standing import StandingBoard, sabha_cli
from tests.support.telegram import FORUM


@pytest.fixture
async def board(tmp_path: Path, fake: FakeTelegramAPI) -> AsyncIterator[StandingBoard]:
    running = StandingBoard(tmp_path, fake)
    try:
        yield running
    finally:
        await running.sabha.close()


async def test_schedule_add_list_pause_resume_from_the_terminal(board: StandingBoard) -> None:
    await board.start()
    where = ["--channel", "telegram", "--chat", str(FORUM), "--thread", str(board.topic)]
    code, out = await sabha_cli(board, "schedule", "add", "every", "hour", "brief", *where)
    assert code == 2 and "at most once a day" in out and "I understand: /every monday 9am brief" in out
    code, out = await sabha_cli(board, "schedule", "add", "day 10am brief", *where)
    assert code == 0, out
    assert f"Standing item #1: a brief every day at 10:00 (UTC), in telegram chat {FORUM} topic {board.topic}. " \
           "First run Wed 2026-11-25 10:00 UTC." in out
    code, out = await sabha_cli(board, "schedule", "list")
    assert code == 0 and "#1 a brief every day at 10:00 (UTC) in telegram chat" in out
    assert "next Wed 2026-11-25 10:00 UTC; $0.00 this month" in out
    code, out = await sabha_cli(board, "status")
    assert "Standing work (1;" in out and "next Wed 2026-11-25 10:00 UTC" in out

    board.after(3600)  # the daemon learnt of the item from the terminal: it runs it at its time, in the topic
    first = await board.wait_for("Nothing to report yet")
    assert first.message_thread_id == board.topic

    code, out = await sabha_cli(board, "schedule", "pause", "1")
    assert code == 0 and "\nPaused #1 a brief every day at 10:00 (UTC); no run scheduled." in out
    code, out = await sabha_cli(board, "schedule", "pause", "1")
    assert code == 2 and "is paused already; sabha schedule resume 1 starts it again" in out
    board.at(START + timedelta(days=1, hours=1, minutes=1))  # Thursday's run would be due: paused
    code, out = await sabha_cli(board, "schedule", "resume", "1")
    assert code == 0 and "next run Fri 2026-11-27 10:00 UTC" in out
    board.at(START + timedelta(days=2, hours=1))
    await board.wait_for("Nothing new since Wed 25 Nov.")
    await board.wait_db("SELECT COUNT(*) FROM scheduled_work WHERE kind = 'standing' AND status = 'done'", 2)
    assert len(board.in_topic("Nothing to report yet|Nothing new since")) == 2  # Thursday's never ran
    rows = board.query("SELECT key, status FROM scheduled_work WHERE kind = 'standing' ORDER BY due_at")
    assert [r["status"] for r in rows] == ["done", "cancelled", "done", "pending"], [tuple(r) for r in rows]
