"""A reminder claimed but not yet sent when the daemon is killed is sent after the restart (issue item 18).

The kill -9 tests of tests/board/decisions/test_reminders.py never land in that window on purpose (the "at"
case kills right after writing the clock, before the claim), so removing the redo of claimed rows at start
(``WorkStore.reclaim``: ``claimed`` -> ``pending``) went unnoticed there. Here the window is made to last:
a reply in the same Telegram chat is refused with 429 ``retry_after`` first, so the chat is paused and the
due reminder, once claimed, waits in flood control before its request may leave (still ``claimed``, not
``sending``). The test sees the row claimed in the state db, kills the daemon, restarts it, and the reminder
arrives once; a later reminder is the marker that nothing came twice.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from pathlib import Path

from tests.board.decisions.test_reminders import WAIT, Board, board  # noqa: F401  (the fixture)
from tests.support.telegram import FORUM, OWNER


def status_of(data_dir: Path, key: str) -> str | None:
    """The scheduled row's status, read beside the running daemon (SQLite, WAL)."""
    with sqlite3.connect(f"file:{data_dir / 'sabha.db'}?mode=ro", uri=True, timeout=10) as conn:
        row = conn.execute("SELECT status FROM scheduled_work WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


async def test_a_reminder_claimed_when_the_daemon_is_killed_is_sent_after_the_restart(
        board: Board, tmp_path: Path) -> None:  # noqa: F811
    await board.start()
    first, second, *_ = await board.meeting()
    await board.say(f"/due {second} +60s", "is now due")
    await board.say(f"/due {first} +90s", "is now due")  # the marker, due after it
    board.telegram.fail_next("sendMessage", 429, retry_after=120)  # the chat is paused for two minutes
    board.telegram.push_text(FORUM, OWNER, "/actions", thread_id=board.topic)
    await board.sabha.wait_for_log("flood control on chat", timeout=WAIT)
    board.at(60)
    key = f"reminder:action:{second}"
    for _ in range(int(WAIT * 10)):  # the runner claims it; it waits for the paused chat
        if await asyncio.to_thread(status_of, tmp_path / "sessions", key) == "claimed":
            break
        await asyncio.sleep(0.1)
    assert await asyncio.to_thread(status_of, tmp_path / "sessions", key) == "claimed", board.sabha.log
    assert not board.reminders_of(second)
    assert not any(f"owes action #{second} " in str(p.get("text", ""))
                   for p in board.telegram.calls_to("sendMessage"))  # no request left for it

    await board.sabha.signal(signal.SIGKILL)
    await board.sabha.start()
    await board.wait_for(f"owes action #{second} ")
    assert "claimed by a runner that stopped before sending them: doing them again" in board.sabha.log
    board.at(95)
    await board.wait_for(f"owes action #{first} ")  # sent in due order: the first one's fate is settled
    assert len(board.reminders_of(second)) == 1, board.sabha.log
    assert len(board.reminders_of(first)) == 1
    assert "may have arrived" not in board.sabha.log
