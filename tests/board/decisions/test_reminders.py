"""Reminders through the real daemon (issue 27, "Must show"): a real ``sabha run`` against the fake
Telegram Bot API, on the offline model, its time read from a file the test writes (``SABHA_TEST_CLOCK``,
honoured only with ``SABHA_TEST_MODE=1``), so nothing here sleeps for time to pass.

A meeting in a forum topic decides; ``/due <n> +5s`` sets an item's date; when the clock reaches it
the owner is nudged once in that topic with Done and Snooze; the commands the buttons send work. A
``kill -9`` 1 s before, at and 1 s after a reminder's due moment (separate runs) still sends it
exactly once: proved by a later reminder (the runner sends in due order) arriving after the restart.
"""

from __future__ import annotations

import re
import signal
from datetime import timedelta
from pathlib import Path

import pytest

from board.clock import FileClock
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI, SentMessage
from tests.support.schedule import START
from tests.support.telegram import FORUM, OWNER, TOKEN

WAIT = 30.0  # seconds a step may take on a loaded machine (a meeting, a restart)


class Board:
    """One daemon, the fake Telegram it talks to, the clock file, and the topic the meeting runs in."""

    def __init__(self, tmp_path: Path, telegram: FakeTelegramAPI) -> None:
        self.telegram = telegram
        self.clock = tmp_path / "clock"
        FileClock.write(self.clock, START)
        self.sabha = SabhaProcess(write_config(tmp_path, telegram, None), env={
            "TELEGRAM_BOT_TOKEN": TOKEN, "SABHA_TEST_MODE": "1", "SABHA_TEST_CLOCK": str(self.clock)})
        self.topic: int | None = None

    async def start(self) -> None:
        await self.sabha.start()
        if self.topic is None:
            topics = {t["name"].lower(): t["message_thread_id"] for t in self.telegram.created_topics}
            self.topic = next(thread for name, thread in topics.items() if "finance" in name)

    def at(self, seconds: float) -> None:
        """Set the daemon's clock to ``seconds`` after :data:`START`."""
        FileClock.write(self.clock, START + timedelta(seconds=seconds))

    def in_topic(self) -> list[SentMessage]:
        return [m for m in self.telegram.sent_messages if m.chat_id == FORUM and m.message_thread_id == self.topic]

    async def say(self, text: str, expect: str) -> str:
        """Send ``text`` in the topic as the owner; the first new message there matching ``expect``."""
        seen = len(self.telegram.sent_messages)
        self.telegram.push_text(FORUM, OWNER, text, thread_id=self.topic)
        return (await self.wait_for(expect, after=seen)).text

    async def wait_for(self, pattern: str, *, after: int = 0, timeout: float = WAIT) -> SentMessage:
        regex = re.compile(pattern)
        found: list[SentMessage] = []

        def seen() -> bool:
            found[:] = [m for m in self.telegram.sent_messages[after:] if regex.search(m.text)]
            return bool(found)

        await self.telegram.wait_until(seen, f"a message matching {pattern!r}", timeout)
        return found[0]

    def reminders_of(self, item: int) -> list[SentMessage]:
        return [m for m in self.telegram.sent_messages if f"owes action #{item} " in m.text]

    async def meeting(self) -> list[int]:
        """Hold a meeting in the topic to its decision; the ids of its action items."""
        await self.say("/meeting Should we open a Pune office?", "Convening the board")
        await self.wait_for(r"Recommendation", timeout=60)
        listed = await self.say("/actions", r"Open action items")
        return [int(n) for n in re.findall(r"^#(\d+) ", listed, re.MULTILINE)]


@pytest.fixture
async def board(tmp_path: Path, fake: FakeTelegramAPI) -> Board:
    running = Board(tmp_path, fake)
    try:
        yield running  # type: ignore[misc]
    finally:
        await running.sabha.close()


async def test_an_action_due_in_five_seconds_is_nudged_once_in_its_topic_with_done_and_snooze(board: Board) -> None:
    await board.start()
    assert "TEST MODE: the board's time is read from" in board.sabha.log
    first, second, *_ = await board.meeting()
    said = await board.say(f"/due {second} +5s", "is now due")
    assert "is now due Wed 2026-11-25 09:00:05 UTC; I will remind you here then." in said
    board.at(4)
    marker = await board.say("/status", r"Scheduled: ")  # nothing is due yet: asked after the clock moved
    assert not board.reminders_of(second) and f"reminder:action:{second}" in marker
    board.at(5)
    nudge = await board.wait_for(f"owes action #{second} ")
    assert nudge.message_thread_id == board.topic  # the meeting's topic
    assert f"/done {second}" not in nudge.text  # the buttons say it, once (issue 38)
    assert board.telegram.buttons_of(FORUM, nudge.result["message_id"]) == [
        ("Done", f"/done {second}"), ("Snooze", f"/snooze {second}")]
    # Snooze, pressed: again in a day, once
    seen = len(board.telegram.sent_messages)
    board.telegram.push_press(FORUM, nudge.result["message_id"], OWNER, "Snooze")
    snoozed = (await board.wait_for("Snoozed", after=seen)).text
    assert f"Snoozed #{second}" in snoozed and "again Thu 2026-11-26 09:00:05 UTC" in snoozed
    board.at(5 + 86_400)
    again = await board.wait_for(f"owes action #{second} ", after=board.telegram.sent_messages.index(nudge) + 1)
    # Done, pressed: closed, the reminder cancelled; pressed twice: said so, nothing changed
    await board.say(f"/snooze {second} 2h", "Snoozed")
    seen = len(board.telegram.sent_messages)
    board.telegram.push_press(FORUM, again.result["message_id"], OWNER, "Done")
    assert f"Done: #{second}" in (await board.wait_for("Done: #", after=seen)).text
    seen = len(board.telegram.sent_messages)
    board.telegram.push_press(FORUM, again.result["message_id"], OWNER, "Done", data=f"/done {second}")
    assert "done already" in (await board.wait_for("done already", after=seen)).text
    await board.say(f"/due {first} +3h", "is now due")  # the marker: due after the cancelled one
    mark = len(board.telegram.sent_messages)
    board.at(5 + 86_400 + 3 * 3600 + 60)
    await board.wait_for(f"owes action #{first} ", after=mark)
    assert len(board.reminders_of(second)) == 2
    assert all(m.message_thread_id == board.topic for m in board.reminders_of(second))


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["1s-before", "at", "1s-after"])
async def test_kill_9_around_a_reminders_due_moment_sends_it_exactly_once(board: Board, offset: int) -> None:
    await board.start()
    first, second, *_ = await board.meeting()
    await board.say(f"/due {second} +60s", "is now due")
    await board.say(f"/due {first} +90s", "is now due")  # the marker: due after it
    board.at(60 + offset)
    if offset > 0:
        await board.wait_for(f"owes action #{second} ")  # out, then killed
    await board.sabha.signal(signal.SIGKILL)
    before = len(board.reminders_of(second))
    assert before == (1 if offset > 0 else 0) or offset == 0  # at the moment: sent or not, a race by design
    await board.sabha.start()
    board.at(95)
    await board.wait_for(f"owes action #{first} ")  # sent in due order: the first one's fate is settled
    assert len(board.reminders_of(second)) == 1, (offset, before, board.sabha.log)
    assert len(board.reminders_of(first)) == 1
