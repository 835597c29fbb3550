"""A due date set from the terminal wakes the running daemon at once (issue item 3), on SQLite and on
PostgreSQL: a real ``sabha run`` on the fake Telegram Bot API, its time read from a file the test writes
(``SABHA_TEST_CLOCK``), and the real ``sabha actions due N WHEN`` run beside it.

The daemon's own look at the table (``state.schedule_recheck_s``) is set to 10 minutes here, so a reminder
that arrives within the test's wait (well under that) can only have come from the wake-up; before it, the
daemon learnt of the new date at that look only (30 s by default: the reminder came 25 s late).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.board.decisions.test_reminders import Board
from tests.support.daemon import DAEMON_REPO, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI

RECHECK_S = 600
WAIT = 120.0  # generous for a loaded machine, and still far below RECHECK_S


async def cli(board: Board, *argv: str) -> tuple[int, str]:
    """Run ``sabha <argv>`` with the daemon's config, clock and environment: (exit code, output)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(board.sabha.env, PYTHONPATH=str(DAEMON_REPO))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from bot.cli import main; raise SystemExit(main.main())", *argv, "--config",
        str(board.sabha.config), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env,
        cwd=str(board.sabha.config.parent))
    out, _ = await asyncio.wait_for(proc.communicate(), WAIT)
    return int(proc.returncode or 0), out.decode(errors="replace")


def on_state(tmp_path: Path, fake: FakeTelegramAPI, url: str | None = None) -> Board:
    """The reminders suite's daemon, with the table looked at every :data:`RECHECK_S` and ``url`` as ``state.url``."""
    running = Board(tmp_path, fake)
    extra = ["state:", f"  schedule_recheck_s: {RECHECK_S}", *([f"  url: {url}"] if url else [])]
    running.sabha.config = write_config(tmp_path, fake, None, extra=extra)
    return running


async def test_a_due_date_set_from_the_terminal_wakes_the_daemon_on_sqlite(tmp_path: Path,
                                                                           fake: FakeTelegramAPI) -> None:
    board = on_state(tmp_path, fake)
    try:
        await a_due_date_set_from_the_terminal_is_acted_on_at_once(board)
    finally:
        await board.sabha.close()


async def test_a_due_date_set_from_the_terminal_wakes_the_daemon_on_postgres(tmp_path: Path, fake: FakeTelegramAPI,
                                                                             pg_url: str) -> None:
    board = on_state(tmp_path, fake, pg_url)
    try:
        await a_due_date_set_from_the_terminal_is_acted_on_at_once(board)
    finally:
        await board.sabha.close()


async def a_due_date_set_from_the_terminal_is_acted_on_at_once(board: Board) -> None:
    await board.start()
    first, second, *_ = await board.meeting()
    loop = asyncio.get_running_loop()
    await board.sabha.wait_for_log("schedule: runner started")
    code, said = await cli(board, "actions", "due", str(second), "+5s")
    assert code == 0, said
    assert "is now due Wed 2026-11-25 09:00:05 UTC" in said, said
    asked = loop.time()
    board.at(6)
    nudge = await board.wait_for(f"owes action #{second} ", timeout=WAIT)
    assert nudge.message_thread_id == board.topic
    assert loop.time() - asked < RECHECK_S
    # and a second change, once the runner slept on nothing due: the marker that nothing came twice
    code, said = await cli(board, "actions", "due", str(first), "+1m")
    assert code == 0, said
    board.at(70)
    await board.wait_for(f"owes action #{first} ", timeout=WAIT)
    assert len(board.reminders_of(second)) == 1 and len(board.reminders_of(first)) == 1
