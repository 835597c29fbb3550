"""A burst of private chats against a real ``sabha run``: replies, failures, /healthz latency, memory.

Starts the daemon as a subprocess (``python -m bot.cli run --config X``) against the fake
Telegram Bot API (tests/support/fakes/telegram_api.py) and a fake OpenAI-compatible model
(tests/support/fakes/echo_model.py) that answers every call after a fixed latency, all on
127.0.0.1. Then pushes ``--per-chat`` messages from each of ``--chats`` distinct private
chats at once (default 500 x 4 = 2000), waits until every message has an answer (or
``--timeout``), stops the daemon with SIGTERM and prints:

* messages sent in, replies the fake received, messages never answered, duplicates
  (messages answered more than once);
* what the daemon recorded as failed: ERROR log lines about sending or answering, "Pool
  timeout" lines, tracebacks, its own "stopped (sent N, failed M)" counters, and the
  state db's inbox rows per status;
* /healthz latency p50/p99/max, sampled every 100 ms during the burst (one request at a
  time; a request that takes longer delays the next sample);
* the daemon's peak RSS (VmHWM from /proc/<pid>/status) and the wall time;
* the daemon's CPU (user + system from ``/proc/<pid>/stat``) over the burst, per answered message and as a
  share of one core over the wall (near 1.0: the daemon's main thread is the bound);
* how long a message waited from its push to its turn's model call (p50/p90/max), and how ``getUpdates``
  handed the burst over (calls that returned updates, their sizes);
* turns in flight: the model calls in flight at the fake model, sampled every 20 ms while the burst is
  being answered (max and median), against the turn cap (``inbox.max_concurrent_turns``, ``--cap``), and the
  wall against the cap-bound ideal ``max(per chat, ceil(messages / cap)) x model latency``: a burst limited by
  the cap and the model reaches the cap and comes near that ideal; one limited by the daemon's CPU does not.

Every question carries a marker ``M<chat>x<n>`` on its first line; the model echoes the first
line of the last user message it was sent, so a reply in Telegram is matched to its question.

The config it writes is valid for the previous version too (nothing version-specific):
``--repo /tmp/before`` runs another checkout (PYTHONPATH and the workspace from there,
the fakes from this one). Prints figures; asserts nothing on time.

Run: python benchmarks/burst.py [--chats 500] [--per-chat 4] [--model-latency 1.0]
                                [--tg-latency 0.05] [--timeout 150] [--cap 32] [--repo PATH] [--quick]

Issue 44's figure: ``--chats 300 --per-chat 1 --model-latency 0.5`` (300 messages, a 0.5 s model).
``--quick`` is the smallest run (10 chats, one message each, a 0.1 s model), for a test.

A slow Telegram (``--per-chat 2 --model-latency 2 --tg-latency 1.0``) is what exhausts
an HTTP pool that is not sized to the turns in flight: look at ``pool_timeout_lines``.
One run of the defaults takes about 70 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import logging
import math
import os
import re
import shutil
import signal
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import ClientError, ClientSession, ClientTimeout

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.fakes.echo_model import EchoModel  # noqa: E402
from tests.support.fakes.telegram_api import FakeTelegramAPI  # noqa: E402

TOKEN = "123456:BENCH-token_abc"
FIRST_USER = 100_001
TICKS = os.sysconf("SC_CLK_TCK")
MARKER = re.compile(r"\bM(\d+)x(\d+)\b")
PORT_LINE = re.compile(r"http on [^\s:]+:(\d+)")
STOPPED_LINE = re.compile(r"stopped \(sent (\d+), failed (\d+)")
FAILED_LINE = re.compile(r"(sending to chat|answering message|could not send|giving up|failed after)", re.IGNORECASE)


class _Count(logging.Handler):
    """Counts the fakes' aiohttp server errors (a client that hung up mid-request) instead of
    printing their tracebacks."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


SERVER_ERRORS = _Count()


# -- the daemon ---------------------------------------------------------------------------


def write_setup(root: Path, repo: Path, telegram: FakeTelegramAPI, model: EchoModel,
                users: list[int], cap: int = 32) -> Path:
    """A workspace copied from ``repo`` and a config both versions accept."""
    shutil.copytree(repo / "workspace", root / "workspace", ignore=shutil.ignore_patterns("__pycache__"))
    config = root / "sabha.yaml"
    config.write_text("\n".join([
        "workspace: ./workspace",
        "data_dir: ./sessions",
        "server:",
        "  host: 127.0.0.1",
        "  port: 0",
        f"inbox: {{max_concurrent_turns: {cap}}}",
        "llm:",
        "  model: openai:bench-model",
        "  providers:",
        "    openai:",
        "      api_key: bench-key",
        f"      base_url: {model.base_url}",
        "telegram:",
        "  token: ${TELEGRAM_BOT_TOKEN}",
        f"  api_base_url: {telegram.base_url}",
        f"  allowed_user_ids: [{', '.join(map(str, users))}]",
        "  rate_limit: {group_per_minute: 6000, private_per_second: 100, global_per_second: 1000, max_retries: 3}",
    ]) + "\n", encoding="utf-8")
    return config


@dataclass
class Daemon:
    proc: asyncio.subprocess.Process
    lines: list[str] = field(default_factory=list)
    port: asyncio.Future[int] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    reader: asyncio.Task[None] | None = None

    async def read_log(self) -> None:
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            text = line.decode("utf-8", "replace")
            self.lines.append(text)
            if not self.port.done() and (m := PORT_LINE.search(text)):
                self.port.set_result(int(m.group(1)))
        if not self.port.done():
            self.port.set_exception(RuntimeError("the daemon exited before it served /healthz"))


async def start_daemon(repo: Path, config: Path) -> Daemon:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SABHA_", "OPENAI_", "ANTHROPIC_"))}
    env.update(TELEGRAM_BOT_TOKEN=TOKEN, PYTHONPATH=str(repo), PYTHONUNBUFFERED="1")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "run", "--config", str(config),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        env=env, cwd=str(config.parent),
    )
    daemon = Daemon(proc)
    daemon.reader = asyncio.create_task(daemon.read_log())
    return daemon


def vm_field(pid: int, name: str) -> int | None:
    """A ``/proc/<pid>/status`` field in kB (VmHWM: peak RSS)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(name + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


async def sample_health(port: int, stop: asyncio.Event, out: list[float], errors: Counter[str]) -> None:
    """GET /healthz every 100 ms (one at a time) until ``stop``; latencies in seconds."""
    url = f"http://127.0.0.1:{port}/healthz"
    async with ClientSession(timeout=ClientTimeout(total=30)) as http:
        while not stop.is_set():
            started = time.monotonic()
            try:
                async with http.get(url) as resp:
                    await resp.read()
                    if resp.status != 200:
                        errors[f"HTTP {resp.status}"] += 1
            except (ClientError, OSError, TimeoutError) as exc:  # a timeout or refused connection is a figure too
                errors[type(exc).__name__] += 1
            out.append(time.monotonic() - started)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), max(0.0, 0.1 - (time.monotonic() - started)))


async def sample_in_flight(model: EchoModel, stop: asyncio.Event, out: list[int]) -> None:
    """The model calls in flight every 20 ms until ``stop`` (the turns waiting at the model)."""
    while not stop.is_set():
        out.append(model.in_flight)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.02)


def cpu_of(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (its threads included), None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS


def update_batches(telegram: FakeTelegramAPI, since: float, first_update: int) -> list[int]:
    """The updates each ``getUpdates`` after ``since`` confirmed (its offset over the previous one, from the burst's
    first update id), in order: how the daemon took the burst in."""
    offsets = [first_update] + [int(params.get("offset") or 0) for (method, params), at
                                in zip(telegram.calls, telegram.call_times, strict=False)
                                if method.lower() == "getupdates" and at >= since]
    return [b - a for a, b in itertools.pairwise(offsets) if b > a]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def inbox_statuses(db: Path) -> dict[str, int]:
    if not db.exists():
        return {}
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute("SELECT status, COUNT(*) FROM inbound_messages GROUP BY status ORDER BY status"))
    except sqlite3.Error as exc:
        return {f"unreadable ({exc})": 0}
    finally:
        conn.close()


# -- the run ------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> int:
    repo: Path = args.repo
    users = [FIRST_USER + i for i in range(args.chats)]
    expected = {(u, n) for u in users for n in range(1, args.per_chat + 1)}
    root = Path(tempfile.mkdtemp(prefix="sabha-burst-"))
    telegram = FakeTelegramAPI(token=TOKEN)
    if args.tg_latency > 0:
        for method in ("sendMessage", "sendChatAction", "editMessageText"):
            telegram.set_delay(method, args.tg_latency)
    model = EchoModel(latency=args.model_latency)
    await telegram.start()
    await model.start()
    daemon: Daemon | None = None
    wall = 0.0
    health: list[float] = []
    health_errors: Counter[str] = Counter()
    in_flight: list[int] = []
    peak_kb: int | None = None
    daemon_cpu: float | None = None
    first_update = sys.maxsize
    started = time.monotonic()
    try:
        daemon = await start_daemon(repo, write_setup(root, repo, telegram, model, users, args.cap))
        port = await asyncio.wait_for(daemon.port, 60)
        await telegram.wait_for_call("getUpdates", timeout=60)
        print(f"sabha from {repo} running (pid {daemon.proc.pid}, /healthz on port {port}); "
              f"pushing {len(expected)} messages from {args.chats} chats", file=sys.stderr)

        stop_sampling = asyncio.Event()
        sampler = asyncio.create_task(sample_health(port, stop_sampling, health, health_errors))
        flight = asyncio.create_task(sample_in_flight(model, stop_sampling, in_flight))
        cpu_before = cpu_of(daemon.proc.pid)
        started = time.monotonic()
        for n in range(1, args.per_chat + 1):
            for user in users:
                pushed = telegram.push_text(user, user, f"M{user}x{n} what do you think about this?",
                                   first_name=f"User{user}", username=None)
                first_update = min(first_update, int(pushed["update_id"]))
        deadline = started + args.timeout
        answered: set[tuple[int, int]] = set()
        while time.monotonic() < deadline and daemon.proc.returncode is None:
            answered = {key for key in _replies(telegram) if key in expected}
            if answered >= expected:
                break
            await asyncio.sleep(0.2)
        wall = time.monotonic() - started
        cpu_after = cpu_of(daemon.proc.pid)
        if cpu_before is not None and cpu_after is not None:
            daemon_cpu = cpu_after - cpu_before
        stop_sampling.set()
        await flight
        await asyncio.sleep(args.settle)  # late duplicates
        await sampler
        peak_kb = vm_field(daemon.proc.pid, "VmHWM")
    finally:
        if daemon is not None:
            if daemon.proc.returncode is None:
                daemon.proc.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(daemon.proc.wait(), 60)
                except TimeoutError:
                    daemon.proc.kill()
                    await daemon.proc.wait()
            if daemon.reader is not None:
                await daemon.reader
        await model.stop()
        await telegram.stop()

    ideal = max(args.per_chat, math.ceil(len(expected) / args.cap)) * args.model_latency
    replies = _replies(telegram)
    per_message = Counter(key for key in replies if key in expected)
    unlinked = sum(1 for key in replies if key not in expected)
    log = daemon.lines if daemon is not None else []
    error_lines = [line for line in log if " ERROR " in line or " CRITICAL " in line]
    stopped = [m.groups() for line in log if (m := STOPPED_LINE.search(line))]
    statuses = inbox_statuses(root / "sessions" / "sabha.db")
    waits = [at - started for at in model.started]  # every message was pushed at ``started``
    batches = update_batches(telegram, started, first_update)
    report = {
        "version": str(repo),
        "chats": args.chats,
        "messages_in": len(expected),
        "model_latency_s": args.model_latency,
        "telegram_latency_s": args.tg_latency,
        "replies_received": len(replies),
        "messages_answered": len(per_message),
        "never_answered": len(expected) - len(per_message),
        "duplicates": sum(count - 1 for count in per_message.values() if count > 1),
        "replies_without_marker": unlinked,
        "model_calls": model.calls,
        "model_max_in_flight": model.max_in_flight,
        "typing_calls": len(telegram.calls_to("sendChatAction")),
        "telegram_max_in_flight": dict(telegram.max_in_flight),
        "logged_failed_sends": sum(1 for line in error_lines if FAILED_LINE.search(line)),
        "error_lines": len(error_lines),
        "pool_timeout_lines": sum("Pool timeout" in line for line in log),
        "tracebacks": sum(line.startswith("Traceback") for line in log),
        "daemon_counters_sent_failed": [list(map(int, s)) for s in stopped],
        "inbox_status": statuses,
        "requests_dropped_by_client": SERVER_ERRORS.count,
        "healthz_samples": len(health),
        "healthz_errors": dict(health_errors),
        "healthz_p50_ms": round(1000 * statistics.median(health), 1) if health else None,
        "healthz_p99_ms": round(1000 * percentile(health, 0.99), 1) if health else None,
        "healthz_max_ms": round(1000 * max(health), 1) if health else None,
        "peak_rss_mb": round(peak_kb / 1024, 1) if peak_kb else None,
        "turn_cap": args.cap,
        "turns_in_flight_max": model.max_in_flight,
        "turns_in_flight_median": statistics.median(in_flight) if in_flight else None,
        "daemon_cpu_s": round(daemon_cpu, 2) if daemon_cpu is not None else None,
        "daemon_cpu_ms_per_answer": round(1000 * daemon_cpu / len(per_message), 2)
        if daemon_cpu is not None and per_message else None,
        "daemon_cpu_over_wall": round(daemon_cpu / wall, 2) if daemon_cpu is not None and wall else None,
        "push_to_model_call_p50_s": round(percentile(waits, 0.5), 2) if waits else None,
        "push_to_model_call_p90_s": round(percentile(waits, 0.9), 2) if waits else None,
        "push_to_model_call_max_s": round(max(waits), 2) if waits else None,
        "getupdates_batches": batches,
        "wall_s": round(wall, 1),
        "ideal_s": round(ideal, 2),
        "wall_over_ideal": round(wall / ideal, 2) if ideal else None,
        "exit_code": daemon.proc.returncode if daemon is not None else None,
        "workdir": str(root),
    }
    _print(report)
    if daemon is not None:
        _write_log(root / "daemon.log", daemon.lines)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def _write_log(path: Path, lines: list[str]) -> None:
    path.write_text("".join(lines), encoding="utf-8")


def _replies(telegram: FakeTelegramAPI) -> list[tuple[int, int]]:
    """(chat, n) of every message the fake received that carries a marker (or (0, 0)). A streamed answer's
    marker may come only with a later edit of its draft ("ECHO …" first): its text as it stands now is read."""
    keys = []
    for sent in list(telegram.sent_messages):
        now = telegram.messages.get((sent.chat_id, sent.message_id))
        found = MARKER.search(str(now.get("text", sent.text)) if now else sent.text)
        keys.append((int(found.group(1)), int(found.group(2))) if found else (0, 0))
    return keys


def _print(report: dict[str, Any]) -> None:
    width = max(map(len, report))
    for key, value in report.items():
        print(f"{key:<{width}}  {value}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=500, help="distinct private chats (default 500)")
    parser.add_argument("--per-chat", type=int, default=4, help="messages per chat (default 4)")
    parser.add_argument("--model-latency", type=float, default=1.0, help="seconds per model call (default 1.0)")
    parser.add_argument("--tg-latency", type=float, default=0.05,
                        help="seconds the fake Telegram takes per send/typing/edit call (default 0.05)")
    parser.add_argument("--timeout", type=float, default=150.0,
                        help="give up waiting for answers after this many seconds (default 150)")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds to wait for late duplicates (default 2)")
    parser.add_argument("--repo", help="run the daemon from this checkout (default: this script's repo)")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (config, log, state db)")
    parser.add_argument("--cap", type=int, default=32, help="inbox.max_concurrent_turns (default 32)")
    parser.add_argument("--quick", action="store_true", help="the smallest run: 10 chats x 1, a 0.1 s model")
    args = parser.parse_args()
    if args.quick:
        args.chats, args.per_chat, args.model_latency, args.tg_latency, args.settle = 10, 1, 0.1, 0.0, 0.5
    args.repo = Path(args.repo).resolve() if args.repo else REPO
    server_log = logging.getLogger("aiohttp.server")
    server_log.addHandler(SERVER_ERRORS)
    server_log.propagate = False
    if args.chats < 1 or args.per_chat < 1:
        parser.error("--chats and --per-chat must be at least 1")
    return asyncio.run(run(args))


if __name__ == "__main__":
    raise SystemExit(main())
