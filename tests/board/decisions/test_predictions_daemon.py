"""The offline loop through a real ``sabha run`` and the fake Telegram API, no key (issue 27): the owner
convenes a meeting in their chat, each offline member stakes a prediction checkable on the meeting's
date, the resolution requests come to that chat once each with Yes / No / Can't tell, the owner resolves
them and ``/stats`` scores the advisors. Time is the daemon's test clock; nothing sleeps for it."""

from __future__ import annotations

import contextlib
import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from board.clock import FileClock
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, TOKEN, eventually

NOW = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)
NEXT_DAY = datetime(2026, 11, 26, 0, 1, tzinfo=UTC)
BOARD = ["board:", "  meetings:", "    max_turns_per_agent: 1", "    min_resolved_predictions: 1"]
REQUEST = re.compile(r"Time to check a prediction \(#(\d+)\)")


def _ended(root: Path) -> bool:
    with contextlib.closing(sqlite3.connect(root / "sessions" / "sabha.db")) as db:
        return bool(db.execute("SELECT 1 FROM meetings WHERE status = 'ended'").fetchall())


def _texts(fake: FakeTelegramAPI) -> list[str]:
    return [m.text for m in fake.sent_to(OWNER)]


def _requests(fake: FakeTelegramAPI) -> list[str]:
    return [t for t in _texts(fake) if REQUEST.search(t)]


async def test_offline_meeting_predictions_are_asked_resolved_and_scored_through_the_daemon(
    tmp_path: Path, fake: FakeTelegramAPI
) -> None:
    clock_file = tmp_path / "clock"
    FileClock.write(clock_file, NOW)
    env = {"TELEGRAM_BOT_TOKEN": TOKEN, "SABHA_TEST_MODE": "1", "SABHA_TEST_CLOCK": str(clock_file)}
    sabha = SabhaProcess(write_config(tmp_path, fake, None, extra=BOARD), env=env)
    try:
        await sabha.start()
        fake.push_text(OWNER, OWNER, "/meeting Should we raise prices for European customers?")
        await eventually(lambda: _ended(tmp_path), "the meeting's end", timeout=90)
        fake.push_text(OWNER, OWNER, "/predictions")
        await eventually(lambda: any("Open predictions (5)" in t for t in _texts(fake)), "/predictions", timeout=30)
        assert _requests(fake) == []  # checkable tomorrow: nothing asked yet
        FileClock.write(clock_file, NEXT_DAY)  # the resolve-by date comes
        await eventually(lambda: len(_requests(fake)) == 5, "five resolution requests", timeout=90)
        numbers = [REQUEST.search(t).group(1) for t in _requests(fake)]  # type: ignore[union-attr]
        for n, outcome in zip(numbers, ("yes", "no", "yes", "unknown", "yes"), strict=True):
            fake.push_text(OWNER, OWNER, f"/resolve {n} {outcome}")
        fake.push_text(OWNER, OWNER, "/stats")
        await eventually(lambda: "Advisor track record" in _texts(fake)[-1], "/stats", timeout=30)
    finally:
        await sabha.close()
    requests = [m for m in fake.sent_to(OWNER) if REQUEST.search(m.text)]
    assert len(requests) == len({REQUEST.search(m.text).group(1) for m in requests}) == 5  # type: ignore[union-attr]
    assert all("the pilot to raise prices for european customers"
               in m.text.lower() and "by 2026-11-26" in m.text for m in requests), [m.text for m in requests]
    stats = _texts(fake)[-1]
    assert stats.count("Brier") >= 4 and "1 can't tell" in stats, stats  # four scored, one can't tell
    recorded = [t for t in _texts(fake) if "Recorded: #" in t]
    assert len(recorded) == 5
