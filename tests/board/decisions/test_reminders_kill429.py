"""A reminder Telegram refused with a 429 (nothing posted) is sent after a kill during the
flood-control wait, not written off as "may have arrived" (reviewer's r27 repro)."""

from __future__ import annotations

import asyncio
import signal

from tests.board.decisions.test_reminders import Board, board  # noqa: F401  (the fixture)
from tests.support.telegram import FORUM, OWNER


async def test_a_kill_during_the_429_wait_leaves_the_reminder_to_be_sent(board: Board) -> None:  # noqa: F811
    await board.start()
    first, second, *_ = await board.meeting()
    await board.say(f"/due {second} +60s", "is now due")
    await board.say(f"/due {first} +90s", "is now due")  # the marker, after the restart
    board.telegram.fail_next("sendMessage", 429, retry_after=20)
    board.at(60)

    async def refused_once() -> None:
        said = f"owes action #{second} "
        while not any(said in str(p.get("text", "")) for p in board.telegram.calls_to("sendMessage")):  # noqa: ASYNC110
            await asyncio.sleep(0.05)

    await asyncio.wait_for(refused_once(), 30)
    await board.sabha.wait_for_log(f"reminder:action:{second} was not posted", timeout=30)
    assert not board.reminders_of(second)  # Telegram posted nothing; the daemon waits 20 s
    await board.sabha.signal(signal.SIGKILL)
    await board.sabha.start()
    await board.wait_for(f"owes action #{second} ")  # sent again after the restart
    board.at(95)
    await board.wait_for(f"owes action #{first} ")
    assert len(board.reminders_of(second)) == 1
    assert "may have arrived" not in board.sabha.log


async def test_a_kill_during_the_429_wait_of_a_reply_leaves_it_to_be_sent(board: Board) -> None:  # noqa: F811
    """The intake had the same defect: its reply was 'sending' through the flood-control wait, so a
    kill then recorded "may have arrived" and the answer was never sent."""
    await board.start()
    board.telegram.fail_next("sendMessage", 429, retry_after=20)
    seen = len(board.telegram.calls_to("sendMessage"))
    board.telegram.push_text(FORUM, OWNER, "/actions", thread_id=board.topic)

    async def refused_once() -> None:
        while len(board.telegram.calls_to("sendMessage")) == seen:  # noqa: ASYNC110
            await asyncio.sleep(0.05)

    await asyncio.wait_for(refused_once(), 30)
    await board.sabha.wait_for_log("flood control on chat", timeout=30)
    assert not board.in_topic()  # Telegram posted nothing; the daemon waits 20 s
    await board.sabha.signal(signal.SIGKILL)
    await board.sabha.start()
    await board.wait_for("No open action items|action items")  # answered after the restart
    await board.say("/status", "Scheduled")  # the marker: anything twice would have come by now
    assert len([m for m in board.in_topic() if "action item" in m.text.lower()]) == 1, board.in_topic()
    assert "may have arrived" not in board.sabha.log
