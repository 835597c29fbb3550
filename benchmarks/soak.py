"""Soak: 200 conversations, 10,000 messages through a running ``sabha run``; throughput, turn
overhead and memory over time, then the same with every transcript pre-filled.

The daemon runs as a subprocess against the fake Telegram Bot API and a fake model of
fixed latency (tests/support/fakes/), all on 127.0.0.1 (the helpers are benchmarks/burst.py's).
Each of ``--chats`` private chats sends ``--messages / --chats`` messages, all queued at
once, so every conversation always has work waiting. Printed per run:

* throughput (answered per second) against the ideal: the lower of
  ``inbox.max_concurrent_turns / model latency`` and the channel's send budget;
* turn overhead: each turn's latency as the daemon logs it minus the model's latency
  (p50 / p99);
* RSS of the daemon at start, at 25/50/75 % answered and at the end (no upward trend
  after warm-up is the goal);
* lost and duplicated answers.

The second run first writes ``--prefill`` lines (default 10,000) into the transcript of
every conversation, as after months of use. Prints figures; asserts nothing.

Run: python benchmarks/soak.py [--chats 200] [--messages 10000] [--latency 0.05] [--cap 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import burst  # noqa: E402  (the daemon, fakes and samplers of the burst benchmark)
import turn_overhead  # noqa: E402  (its way of writing earlier history)

from board.app import Board, BoardSettings  # noqa: E402
from board.roles import RosterSpec  # noqa: E402
from bot.app import all_migrations  # noqa: E402
from tests.support.fakes.echo_model import EchoModel  # noqa: E402
from tests.support.fakes.telegram_api import FakeTelegramAPI  # noqa: E402

LATENCY = re.compile(r"\bturn\b.*\blatency_ms=([\d.]+)")
SEND_BUDGET_PER_S = 1000.0  # the config's telegram.rate_limit.global_per_second (private chats: 100/s each)


def write_config(root: Path, telegram: FakeTelegramAPI, model: EchoModel, users: list[int], cap: int) -> Path:
    config = burst.write_setup(root, REPO, telegram, model, users)
    text = config.read_text(encoding="utf-8")
    config.write_text(text + f"inbox:\n  max_concurrent_turns: {cap}\n", encoding="utf-8")
    return config


async def prefill(root: Path, users: list[int], lines: int) -> None:
    """``lines`` earlier messages in the transcript of each user's conversation with the chair."""
    settings = BoardSettings(workspace=root / "workspace", data_dir=root / "sessions", roster=RosterSpec())
    async with await Board.open(settings, migrations=all_migrations()) as board:
        for i, user in enumerate(users):
            key = "main" if i == 0 else f"board:general:tg-{user}"  # the first allowed user is the owner
            transcript = await board.parts.sessions.open(key, "general")
            await asyncio.to_thread(turn_overhead._append_history, transcript.path, lines - 1)


async def soak(args: argparse.Namespace, prefilled: int) -> dict[str, object]:
    users = [burst.FIRST_USER + i for i in range(args.chats)]
    per_chat = max(1, args.messages // args.chats)
    expected = {(u, n) for u in users for n in range(1, per_chat + 1)}
    root = Path(tempfile.mkdtemp(prefix="sabha-soak-"))
    telegram = FakeTelegramAPI(token=burst.TOKEN)
    model = EchoModel(latency=args.latency)
    await telegram.start()
    await model.start()
    rss: dict[str, float | None] = {}
    daemon: burst.Daemon | None = None
    try:
        config = write_config(root, telegram, model, users, args.cap)
        if prefilled:
            await prefill(root, users, prefilled)
        daemon = await burst.start_daemon(REPO, config)
        await asyncio.wait_for(daemon.port, 120)
        await telegram.wait_for_call("getUpdates", timeout=60)
        pid = daemon.proc.pid

        def sample(label: str) -> None:
            kb = burst.vm_field(pid, "VmRSS")
            rss[label] = round(kb / 1024, 1) if kb else None

        sample("start")
        started = time.monotonic()
        for n in range(1, per_chat + 1):
            for user in users:
                telegram.push_text(user, user, f"M{user}x{n} what do you think?", first_name=f"U{user}",
                                   username=None)
        marks = [(0.25, "25%"), (0.5, "50%"), (0.75, "75%")]
        deadline = started + args.timeout
        answered: set[tuple[int, int]] = set()
        while time.monotonic() < deadline and daemon.proc.returncode is None:
            answered = {key for key in burst._replies(telegram) if key in expected}
            while marks and len(answered) >= marks[0][0] * len(expected):
                sample(marks.pop(0)[1])
            if answered >= expected:
                break
            await asyncio.sleep(0.1)
        wall = time.monotonic() - started
        sample("end")
        await asyncio.sleep(0.5)
    finally:
        if daemon is not None:
            if daemon.proc.returncode is None:
                daemon.proc.send_signal(signal.SIGTERM)
                await asyncio.wait_for(daemon.proc.wait(), 120)
            if daemon.reader is not None:
                await daemon.reader
        await model.stop()
        await telegram.stop()
    per_message = Counter(key for key in burst._replies(telegram) if key in expected)
    turns = [float(m.group(1)) for line in (daemon.lines if daemon else []) if (m := LATENCY.search(line))]
    overhead = [t - args.latency * 1000 for t in turns]
    ideal = min(args.cap / args.latency, SEND_BUDGET_PER_S)
    shutil.rmtree(root, ignore_errors=True)
    return {
        "transcript lines before": prefilled,
        "messages": len(expected),
        "answered": len(per_message),
        "lost": len(expected) - len(per_message),
        "duplicated": sum(1 for c in per_message.values() if c > 1),
        "wall s": round(wall, 1),
        "throughput /s": round(len(per_message) / wall, 1) if wall else None,
        "ideal /s": round(ideal, 1),
        "throughput / ideal": round(len(per_message) / wall / ideal, 3) if wall else None,
        "turns logged": len(turns),
        "turn overhead p50 ms": round(statistics.median(overhead), 1) if overhead else None,
        "turn overhead p99 ms": round(burst.percentile(overhead, 0.99), 1) if overhead else None,
        "rss MB": rss,
    }


async def main_async(args: argparse.Namespace) -> int:
    print(f"soak: {args.chats} conversations, {args.messages} messages, model {args.latency * 1000:.0f} ms, "
          f"cap {args.cap} turns, send budget {SEND_BUDGET_PER_S:.0f}/s", flush=True)
    for prefilled in (0, args.prefill):
        report = await soak(args, prefilled)
        print(json.dumps(report, indent=2), flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.05, help="model latency in seconds")
    parser.add_argument("--cap", type=int, default=32, help="inbox.max_concurrent_turns")
    parser.add_argument("--prefill", type=int, default=10_000, help="transcript lines for the second run")
    parser.add_argument("--timeout", type=float, default=900)
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
