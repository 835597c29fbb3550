"""A real ``sabha run`` process for tests: its config (fake Telegram, echo model), its log,
its port, killing and restarting it; and a burst of messages spread over many places.

:meth:`SabhaProcess.start` waits for the daemon's "running" line as long as the process lives (up to
:data:`START_TIMEOUT_S`, a bound only a hung process hits: a loaded machine starts slowly, it does not stop);
if the start fails in any way (the process exits, the bound passes, the test is cancelled) it kills the process
before raising. Every started process is registered (tests/support/process.py): the autouse fixture in
tests/conftest.py kills any the test left running, whatever happened in it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sqlite3
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from board.app import Board
from board.workspace.paths import copy_default_workspace
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.process import register
from tests.support.telegram import FAST, FORUM, FRIEND, OWNER, SPECIALISTS, TOKEN

REPO = Path(__file__).resolve().parents[2]
#: Which checkout ``sabha run`` comes from: this one, or another to compare (e.g. the previous
#: version: ``SABHA_TEST_DAEMON_REPO=/path/to/old/checkout pytest tests/system/test_durability.py``).
DAEMON_REPO = Path(os.environ.get("SABHA_TEST_DAEMON_REPO", str(REPO)))
WEBHOOK_SECRET = "webhook-secret_1"
_PORT = re.compile(r"http on [^\s:]+:(\d+)")
_ECHO = re.compile(r"ECHO [^\n]*?\b(Q\d{3})\b")
#: How long ``sabha run`` may take to log "running" while it is alive: only a hung process reaches it (one that
#: exits fails at once). Under load (2 cores, 4 workers, other runs beside) starts took well over 30 s.
START_TIMEOUT_S = 300.0
#: The default wait for a log line: a bound for a hung or broken daemon, not a measure of speed.
LOG_TIMEOUT_S = 120.0


def write_config(root: Path, telegram: FakeTelegramAPI, model: EchoModel | None, *, mode: str = "polling",
                 inbox: dict[str, Any] | None = None, extra: list[str] | None = None, price: bool = False,
                 stream: bool | None = None) -> Path:
    """A workspace and a sabha.yaml for ``root``: Telegram on the fake (owner and friend
    allowed, the forum with topics), the echo model (or the offline one). ``stream`` sets the provider's
    ``stream`` key (unset: the default, streaming where the answer is watched; the echo model: off)."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    rate = ", ".join(f"{k}: {v}" for k, v in FAST.items())
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0"]
    if model is not None:
        lines += ["llm:", "  model: openai:echo", "  retry: {retries: 0}", "  providers:", "    openai:",
                  "      api_key: test-key", f"      base_url: {model.base_url}"]
        if stream is not None:
            lines += [f"      stream: {str(stream).lower()}"]
        elif isinstance(model, EchoModel):  # it answers whole: said, streaming being the default
            lines += ["      stream: false"]
        if price:  # so cost is counted
            lines += ["  prices:", "    openai:echo: {input: 1000, output: 2000}",
                      "    echo: {input: 1000, output: 2000}"]
    if inbox:
        lines += ["inbox:"] + [f"  {k}: {v}" for k, v in inbox.items()]
    lines += [
        "telegram:",
        "  token: ${TELEGRAM_BOT_TOKEN}",
        f"  api_base_url: {telegram.base_url}",
        f"  group_id: {FORUM}",
        f"  allowed_user_ids: [{OWNER}, {FRIEND}]",
        f"  rate_limit: {{{rate}}}",
        f"  mode: {mode}",
    ]
    if mode == "webhook":
        lines += [f"  webhook_secret: {WEBHOOK_SECRET}"]
    lines += extra or []
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class SabhaProcess:
    """One ``sabha run`` subprocess; its stderr is collected in :attr:`log`."""

    config: Path
    env: dict[str, str] = field(default_factory=lambda: {"TELEGRAM_BOT_TOKEN": TOKEN})
    proc: asyncio.subprocess.Process | None = None
    lines: list[str] = field(default_factory=list)
    port: int | None = None
    _reader: asyncio.Task[None] | None = None
    _line_event: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self, timeout: float = START_TIMEOUT_S) -> SabhaProcess:
        """Start it and wait until it logs "running" (its HTTP server listens); on any failure it is killed
        before the error is raised."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
        env.update(self.env, PYTHONPATH=str(DAEMON_REPO), PYTHONUNBUFFERED="1")
        self.lines.clear()
        self.port = None
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from bot.cli import main; raise SystemExit(main.main() if hasattr(main, 'main') "
            "else main())", "run", "--config", str(self.config),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=env, cwd=str(self.config.parent),
        )
        register(self)
        self._reader = asyncio.create_task(self._read())
        try:
            await self.wait_for_log(r"sabha \S+ running", timeout=timeout)
        except BaseException:
            self._kill_now()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.shield(self.close())
            raise
        return self

    def alive_pid(self) -> int | None:
        """Its process id while it runs (None before the start and after the exit)."""
        if self.proc is None or self.proc.returncode is not None:
            return None
        return self.proc.pid

    def describe(self) -> str:
        """Which daemon this is (for a report of what was left running)."""
        return f"sabha run --config {self.config}"

    def _kill_now(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while True:
            raw = await self.proc.stderr.readline()
            if not raw:
                break
            line = raw.decode(errors="replace").rstrip("\n")
            self.lines.append(line)
            found = _PORT.search(line)
            if found and self.port is None:
                self.port = int(found.group(1))
            self._line_event.set()

    @property
    def log(self) -> str:
        """Everything it wrote to stderr so far."""
        return "\n".join(self.lines)

    async def wait_for_log(self, pattern: str, timeout: float = LOG_TIMEOUT_S) -> str:
        """The first log line matching ``pattern`` (waits for it)."""
        regex = re.compile(pattern)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            for line in self.lines:
                if regex.search(line):
                    return line
            if self.proc is not None and self.proc.returncode is not None and self._reader is not None \
                    and self._reader.done():
                raise AssertionError(f"sabha exited ({self.proc.returncode}) before logging {pattern!r}:\n{self.log}")
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"sabha did not log {pattern!r} in {timeout} s:\n{self.log}")
            self._line_event.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._line_event.wait(), min(left, 0.5))

    async def signal(self, sig: signal.Signals, timeout: float = LOG_TIMEOUT_S) -> int:
        """Send ``sig`` and wait for the exit code."""
        assert self.proc is not None
        self.proc.send_signal(sig)
        return await self.wait(timeout)

    async def wait(self, timeout: float = LOG_TIMEOUT_S) -> int:
        """Wait for the process to exit; its code."""
        assert self.proc is not None
        code = await asyncio.wait_for(self.proc.wait(), timeout)
        if self._reader is not None and not self._reader.cancelled():
            await asyncio.wait_for(self._reader, 30)
        return code

    async def close(self) -> None:
        """Kill it if it still runs."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


@dataclass(frozen=True)
class Place:
    """Where a burst message is written: a chat, a topic (None: General / a DM), who writes."""

    chat_id: int
    thread_id: int | None
    user_id: int


def burst_places(telegram: FakeTelegramAPI) -> list[Place]:
    """The forum's specialist topics (as the first start created them), General, and two DMs."""
    topics = {t["name"]: t["message_thread_id"] for t in telegram.created_topics}
    threads = [thread for name, thread in topics.items() if any(r in name.lower() for r in SPECIALISTS)]
    assert len(threads) == len(SPECIALISTS), topics
    return [Place(FORUM, t, OWNER) for t in threads] + [Place(FORUM, None, OWNER), Place(OWNER, None, OWNER),
                                                        Place(FRIEND, None, FRIEND)]


def burst_updates(telegram: FakeTelegramAPI, places: list[Place], count: int, first: int = 0) -> list[dict[str, Any]]:
    """``count`` text updates ``Q<first>``, ``Q<first+1>`` ... spread round robin over ``places``."""
    updates = []
    for i in range(first, first + count):
        place = places[i % len(places)]
        kind = {} if place.chat_id < 0 else {"is_forum": False, "chat_type": "private"}
        updates.append(telegram.build_text_update(place.chat_id, place.user_id, f"Q{i:03d} what do you think?",
                                                  thread_id=place.thread_id, **kind))  # type: ignore[arg-type]
    return updates


def answered(telegram: FakeTelegramAPI) -> Counter[str]:
    """How often each question was answered (from the replies Telegram received)."""
    return Counter(m for sent in telegram.sent_messages for m in _ECHO.findall(sent.text))


def markers(count: int, first: int = 0) -> list[str]:
    """The question markers of a burst."""
    return [f"Q{i:03d}" for i in range(first, first + count)]


def tally(telegram: FakeTelegramAPI, count: int, first: int = 0) -> tuple[list[str], list[str]]:
    """(lost, duplicated) question markers of a burst of ``count`` starting at ``first``."""
    seen = answered(telegram)
    mine = markers(count, first)
    return [m for m in mine if seen[m] == 0], [m for m in mine if seen[m] > 1]


async def wait_answered(telegram: FakeTelegramAPI, count: int, first: int = 0, at_least: int | None = None,
                        timeout: float = 180.0) -> None:
    """Wait until ``at_least`` (default all ``count``) questions of a burst have an answer (``timeout``: a bound
    for a daemon that stopped answering, not a measure of speed)."""
    want = count if at_least is None else at_least
    mine = markers(count, first)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        seen = answered(telegram)
        if sum(1 for m in mine if seen[m]) >= want:
            return
        if loop.time() > deadline:
            lost, _ = tally(telegram, count, first)
            raise AssertionError(f"only {count - len(lost)} of {count} answered in {timeout} s; missing {lost[:20]}")
        await asyncio.sleep(0.02)


async def answered_everywhere_after(telegram: FakeTelegramAPI, places: list[Place], first: int,
                                    send: Callable[[dict[str, Any]], Awaitable[object]] | None = None,
                                    timeout: float = 180.0) -> None:
    """Send one marker question per place (``Q<first>`` ...; pushed to the fake, or through ``send``, e.g. a
    webhook post) and wait until each is answered. A conversation keeps its order, so once its marker is answered
    anything queued before it (a duplicate too) has been answered: count after this, never after a sleep."""
    for update in burst_updates(telegram, places, len(places), first):
        if send is None:
            telegram.push_update(update)
        else:
            await send(update)
    await wait_answered(telegram, len(places), first, timeout=timeout)


async def fill_the_db(board: Board) -> None:
    """Make the state db full the way a full disk does: SQLite answers 'database or disk is full'."""
    conn = board.parts.db.conn
    await board.parts.db.pragma("max_page_count = 1")  # at most the pages it has now (every connection)
    for size in (4000, 400, 40, 1):  # use up the free room left inside those pages, big rows first
        with pytest.raises(sqlite3.OperationalError, match="full"):
            for i in range(100_000):
                await conn.execute("INSERT INTO inbound_messages(channel, chat_id, message_id, received_at, "
                                   "status) VALUES ('filler', ?, ?, '2000-01-01', 'answered')", (str(size), "x" * size
                                                                                                  + str(i)))
                await conn.commit()


def where_they_stand(data_dir: Path, missing: list[str]) -> str:
    """For a failing durability test: the inbox rows of the ``missing`` questions (status,
    attempts, detail), so the failure says where each message was left."""
    import sqlite3

    lines = []
    with sqlite3.connect(data_dir / "sabha.db") as conn:
        rows = conn.execute("SELECT message_id, status, attempts, detail, envelope, reply IS NOT NULL "
                            "FROM inbound_messages ORDER BY rowid").fetchall()
    for marker in missing:
        found = [r for r in rows if f"{marker} " in (r[4] or "")]
        lines += [f"{marker}: message {r[0]} {r[1]} (attempts {r[2]}, reply stored: {bool(r[5])}) {r[3] or ''}"
                  for r in found] or [f"{marker}: not in the inbox"]
    return "\n".join(lines)
