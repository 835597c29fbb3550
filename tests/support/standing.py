"""Helpers for the standing-work suites through the real daemon: a ``sabha run`` on the fake Telegram Bot API
and the offline model, its time read from a file the test writes (``SABHA_TEST_CLOCK``), a forum topic to set
items in, and reads of its state db (the marks a test waits for before it counts or kills)."""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from board.clock import FileClock
from tests.support.daemon import DAEMON_REPO, SabhaProcess, write_config
from tests.support.fakes.local_server import LocalServer
from tests.support.fakes.telegram_api import FakeTelegramAPI, SentMessage
from tests.support.schedule import START
from tests.support.telegram import FORUM, OWNER, TOKEN

#: seconds a step may take on a loaded machine (a meeting, a restart): a bound for a hung daemon only
WAIT = 60.0


class StandingBoard:
    """One daemon, the fake Telegram it talks to, the clock file, and the topic items are set in; the offline
    model, or ``model`` (an OpenAI-compatible fake such as :class:`tests.support.meeting_model.MeetingModel`,
    priced, not streamed)."""

    def __init__(self, tmp_path: Path, telegram: FakeTelegramAPI, extra: list[str] | None = None,
                 model: LocalServer | None = None) -> None:
        self.telegram = telegram
        self.clock = tmp_path / "clock"
        self.db_path = tmp_path / "sessions" / "sabha.db"
        FileClock.write(self.clock, START)
        config = (write_config(tmp_path, telegram, None, extra=extra) if model is None else  # the offline model
                  write_config(tmp_path, telegram, model, stream=False, price=True, extra=extra))  # type: ignore[arg-type]
        self.sabha = SabhaProcess(config, env={
            "TELEGRAM_BOT_TOKEN": TOKEN, "SABHA_TEST_MODE": "1", "SABHA_TEST_CLOCK": str(self.clock)})
        self.topic: int | None = None

    async def start(self) -> None:
        await self.sabha.start()
        if self.topic is None:
            topics = {t["name"].lower(): t["message_thread_id"] for t in self.telegram.created_topics}
            self.topic = next(thread for name, thread in topics.items() if "finance" in name)

    def at(self, moment: datetime) -> None:
        """Set the daemon's clock."""
        FileClock.write(self.clock, moment)

    def after(self, seconds: float) -> None:
        """Set the daemon's clock to ``seconds`` after :data:`START`."""
        self.at(START + timedelta(seconds=seconds))

    def in_topic(self, pattern: str) -> list[SentMessage]:
        regex = re.compile(pattern)
        return [m for m in self.telegram.sent_messages
                if m.chat_id == FORUM and m.message_thread_id == self.topic and regex.search(m.text)]

    async def say(self, text: str, expect: str, *, sender: int = OWNER) -> str:
        """Send ``text`` in the topic (as the owner, or ``sender``); the first new message matching ``expect``."""
        seen = len(self.telegram.sent_messages)
        self.telegram.push_text(FORUM, sender, text, thread_id=self.topic)
        return (await self.wait_for(expect, after=seen)).text

    async def wait_for(self, pattern: str, *, after: int = 0, timeout: float = WAIT) -> SentMessage:
        regex = re.compile(pattern)
        found: list[SentMessage] = []

        def seen() -> bool:
            found[:] = [m for m in self.telegram.sent_messages[after:] if regex.search(m.text)]
            return bool(found)

        await self.telegram.wait_until(seen, f"a message matching {pattern!r}", timeout)
        return found[0]

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        """Rows of the daemon's state db (read beside it: WAL lets a reader in while it writes)."""
        with sqlite3.connect(self.db_path, timeout=30) as con:
            con.row_factory = sqlite3.Row
            return list(con.execute(sql, params))

    async def wait_db(self, sql: str, expected: object, params: tuple[Any, ...] = (), timeout: float = WAIT) -> None:
        """Wait until ``sql``'s first column of its first row is ``expected`` (a durable mark)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            rows = self.query(sql, params)
            value = rows[0][0] if rows else None
            if value == expected:
                return
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"{sql} gave {value!r}, not {expected!r}, within {timeout} s\n{self.sabha.log}")
            await asyncio.sleep(0.05)

    async def meeting(self) -> list[int]:
        """Hold a meeting in the topic to its decision; the ids of its action items."""
        await self.say("/meeting Should we open a Pune office?", "Convening the board")
        await self.wait_for(r"Recommendation", timeout=120)
        listed = await self.say("/actions", r"Open action items")
        return [int(n) for n in re.findall(r"^#(\d+) ", listed, re.MULTILINE)]


async def sabha_cli(board: StandingBoard, *argv: str, timeout: float = 120.0) -> tuple[int, str]:
    """Run the real ``sabha <argv>`` beside the daemon, with its config, clock and environment: (exit code,
    output and errors)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(board.sabha.env, PYTHONPATH=str(DAEMON_REPO))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from bot.cli import main; raise SystemExit(main.main())", *argv, "--config",
        str(board.sabha.config), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=env,
        cwd=str(board.sabha.config.parent))
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return int(proc.returncode or 0), out.decode(errors="replace")
