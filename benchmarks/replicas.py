"""Replicas: throughput with 1, 2 and 3 ``sabha run`` replicas on one PostgreSQL behind nginx, and the per-turn
overhead of PostgreSQL against SQLite on one replica.

Prints medians and ratios measured in the same run; asserts nothing about time.
Run: python benchmarks/replicas.py  (needs Debian's postgresql and nginx: what .ci/run installs);
``--quick``: the smallest size (a test runs it so); ``--throughput-only``: skip 2; ``--baseline /work/main``: run
that checkout's replicas too, interleaved with this one's (same machine, same moment); ``--timeline``: each
replica's turns at the model over time (one echo model per replica), to see idle gaps; ``--logs DIR``: keep the
replicas' logs.

1. Throughput: CONVERSATIONS Telegram conversations of PER messages each, posted as webhooks through nginx (each
   conversation in order, every message redelivered until acknowledged), answered by a fake model of fixed
   latency (MODEL_LATENCY_S) with a per-replica turn cap (``inbox.max_concurrent_turns: TURN_CAP``): one replica
   answers at most TURN_CAP / MODEL_LATENCY_S turns a second, so more replicas should answer proportionally
   more. Turns per second from the first post to the last answer, after each replica answered one warm-up
   message of its own (a first turn opens pool connections and reads souls and templates: not throughput, as
   the per-turn figure skips its first turns too); goal: 2 replicas >= 1.9x one, 3 replicas >= 2.8x one
   (issue 44: a conversation waiting behind a busy replica's turns is handed to one with room).
2. Per-turn overhead: one replica, a model that answers at once, TURNS messages one after another (each posted
   after the previous one's answer): the median time from post to answer, on SQLite and on PostgreSQL.
   Goal: PostgreSQL <= 1.5x SQLite.

Each figure is the median of REPEATS runs, the configurations interleaved so a noisy moment on a shared
machine hits each of them. The replicas share this machine's cores with PostgreSQL, nginx and the load
generator: when those cores, not the turn cap, bound a replica, more replicas cannot answer more (real replicas
run on machines of their own). ``--cap`` / ``--latency`` set the cap that should bound each replica; the run
prints the ideal rate next to the measured one, so it shows which bound it met.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiohttp import ClientSession, ClientTimeout

import tests.support.daemon as daemon_support
from tests.support.daemon import WEBHOOK_SECRET
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.pg import PgServer, fresh_database, throwaway_cluster
from tests.support.replicas import TG_BASE, Burst, Nginx, Replicas
from tests.support.telegram import TOKEN

_HANDED = re.compile(r"handed (\d+) conversation\(s\)")
CONVERSATIONS = 60
PER = 2
MODEL_LATENCY_S = 0.5
TURN_CAP = 2
TURNS = 40
REPEATS = 3  # issue 44: median of 3


async def throughput(server: PgServer, replicas: int, timeline: bool = False, logs: Path | None = None) -> float:
    """Turns per second answered by ``replicas`` replicas behind nginx (``timeline``: print each replica's
    turns at the model over time)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        async with contextlib.AsyncExitStack() as stack:
            url = await stack.enter_async_context(fresh_database(server))
            telegram = await stack.enter_async_context(FakeTelegramAPI(token=TOKEN))
            # one model per replica, so each replica's turns can be told apart (the same latency, the same answers)
            models = [await stack.enter_async_context(EchoModel(latency=MODEL_LATENCY_S)) for _ in range(replicas)]
            # one more allowed user per replica: its warm-up conversation
            group = Replicas(root, url, telegram, None, models[0], count=replicas, users=CONVERSATIONS + replicas,
                             lease_s=5, extra=["inbox:", f"  max_concurrent_turns: {TURN_CAP}"])
            for proc, model in zip(group.procs, models, strict=True):
                proc.config.write_text(proc.config.read_text().replace(models[0].base_url, model.base_url))
            nginx = Nginx(root / "nginx", group.ports)
            try:
                nginx.start()
                await group.start()
                await warm_up(group, telegram)
                burst = Burst(nginx.url, conversations=CONVERSATIONS, per=PER, telegram_share=1.0)
                start = time.perf_counter()
                sampler = asyncio.create_task(sample(models)) if timeline else None
                await burst.run(telegram)
                await burst.wait_answered(telegram, None, timeout=300)
                took = time.perf_counter() - start
                if sampler is not None:
                    sampler.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await sampler
                    print_timeline(_SAMPLES.pop(), replicas)
                answered = burst.answered_count(telegram, None)
                if answered < burst.total:
                    print(f"  ({replicas} replicas: only {answered} of {burst.total} answered)")
                if replicas > 1:
                    print(f"  ({replicas} replicas: {took:.1f} s, {handed_over(group)} conversation(s) handed over "
                          "to a replica with room)")
                return answered / took
            finally:
                nginx.stop()
                await group.close()
                if logs is not None:
                    folder = logs / f"{replicas}-replicas-{time.strftime('%H%M%S')}"
                    print(f"    logs: {group.save_logs(folder)}")


_SAMPLES: list[list[tuple[float, tuple[int, ...]]]] = []
TICK_S = 0.05


async def sample(models: list[EchoModel]) -> None:
    """Every TICK_S: each replica's turns at its model (kept in _SAMPLES until cancelled)."""
    samples: list[tuple[float, tuple[int, ...]]] = []
    _SAMPLES.append(samples)
    start = time.perf_counter()
    while True:
        samples.append((time.perf_counter() - start, tuple(m.in_flight for m in models)))
        await asyncio.sleep(TICK_S)


def print_timeline(samples: list[tuple[float, tuple[int, ...]]], replicas: int, bucket_s: float = 0.5) -> None:
    """Each replica's mean turns at the model per ``bucket_s`` (one digit per bucket, tenths of the cap
    shown as 0-9, '#' = the cap), and the time each replica sat below its cap while another had work."""
    buckets: dict[int, list[tuple[int, ...]]] = {}
    for at, busy in samples:
        buckets.setdefault(int(at / bucket_s), []).append(busy)
    for n in range(replicas):
        row = ""
        for key in sorted(buckets):
            mean = statistics.mean(b[n] for b in buckets[key]) / TURN_CAP
            row += "#" if mean >= 0.95 else str(int(mean * 10))
        print(f"    r{n} {row}")
    short = [sum(TURN_CAP - b[n] for _, b in samples) * TICK_S for n in range(replicas)]
    print(f"    turn-seconds below the cap, per replica: {' '.join(f'{s:.1f}' for s in short)} "
          f"(timeline: one column per {bucket_s} s)")


def handed_over(group: Replicas) -> int:
    """Conversations the replicas handed over to one with room (their log lines, bot/intake/leasing.py)."""
    return sum(int(found[1]) for proc in group.procs for line in proc.lines
               if (found := _HANDED.search(line)) is not None)


async def warm_up(group: Replicas, telegram: FakeTelegramAPI) -> None:
    """Each replica answers one message of a conversation of its own, posted to it directly, before the clock
    starts: its first turn (pool connections, souls and templates read, a first session) is not throughput."""
    before = len(telegram.sent_messages)
    async with ClientSession(timeout=ClientTimeout(total=30)) as http:
        for n, port in enumerate(group.ports):
            user = TG_BASE + CONVERSATIONS + n
            update = telegram.build_text_update(user, user, "warm-up: hello", is_forum=False, chat_type="private",
                                                update_id=1_000_000 + n)
            async with http.post(f"http://127.0.0.1:{port}/telegram/webhook", data=json.dumps(update).encode(),
                                 headers={"Content-Type": "application/json",
                                          "X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}) as resp:
                assert resp.status == 200, resp.status
    deadline = time.monotonic() + 60
    while len(telegram.sent_messages) < before + len(group.ports):
        assert time.monotonic() < deadline, "the replicas did not answer their warm-up messages in 60 s"
        await asyncio.sleep(0.02)


async def per_turn(server: PgServer | None) -> float:
    """Median ms from post to answer on one replica, turns one after another (``server`` None: SQLite)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        async with contextlib_db(server) as url, FakeTelegramAPI(token=TOKEN) as telegram, \
                EchoModel(latency=0.0) as model:
            group = Replicas(root, url, telegram, None, model, count=1, users=1, lease_s=5)
            try:
                await group.start()
                target = f"http://127.0.0.1:{group.ports[0]}/telegram/webhook"
                samples = []
                async with ClientSession(timeout=ClientTimeout(total=30)) as http:
                    for i in range(TURNS + 3):
                        update = telegram.build_text_update(TG_BASE, TG_BASE, f"Q{i:03d} what do you think?",
                                                            is_forum=False, chat_type="private")
                        before = len(telegram.sent_messages)
                        start = time.perf_counter()
                        async with http.post(target, data=json.dumps(update).encode(), headers={
                                "Content-Type": "application/json",
                                "X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}) as resp:
                            assert resp.status == 200, resp.status
                        while len(telegram.sent_messages) == before:  # noqa: ASYNC110 - a fake's counter
                            await asyncio.sleep(0.001)
                        if i >= 3:  # the first turns warm the session up
                            samples.append((time.perf_counter() - start) * 1000)
                return statistics.median(samples)
            finally:
                await group.close()


class contextlib_db:
    """A fresh PostgreSQL database's URL, or "" (SQLite in the replica's data dir) when ``server`` is None."""

    def __init__(self, server: PgServer | None) -> None:
        self.server = server
        self._inner = fresh_database(server) if server is not None else None

    async def __aenter__(self) -> str:
        return await self._inner.__aenter__() if self._inner is not None else '""'

    async def __aexit__(self, *exc: object) -> None:
        if self._inner is not None:
            await self._inner.__aexit__(*exc)


def report(label: str, rates: dict[int, list[float]]) -> None:
    """The medians and ratios of one checkout's runs."""
    one = statistics.median(rates[1])
    print(f"{label}:\n{'replicas':>8} {'turns/s':>8} {'x one':>6}")
    for count, values in rates.items():
        rate = statistics.median(values)
        runs = " ".join(f"{value:.1f}" for value in values)
        print(f"{count:>8} {rate:>8.1f} {rate / one:>6.2f}   (ideal {count * TURN_CAP / MODEL_LATENCY_S:.0f}; "
              f"runs: {runs})")
    for count in [c for c in rates if c > 1]:  # each run's own ratio: its configurations ran back to back
        paired = [many / single for many, single in zip(rates[count], rates[1], strict=True)]
        print(f"{count} replicas / 1 in each run: {' '.join(f'{r:.2f}' for r in paired)} "
              f"(median {statistics.median(paired):.2f})")
    for count, goal in ((2, 1.9), (3, 2.8)):
        if count in rates:
            print(f"{count} replicas / 1: {statistics.median(rates[count]) / one:.2f}  (goal >= {goal})")


async def main() -> None:
    global CONVERSATIONS, PER, MODEL_LATENCY_S, TURN_CAP, REPEATS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=CONVERSATIONS)
    parser.add_argument("--per", type=int, default=PER, help="messages per conversation")
    parser.add_argument("--latency", type=float, default=MODEL_LATENCY_S, help="the fake model's latency (s)")
    parser.add_argument("--cap", type=int, default=TURN_CAP, help="inbox.max_concurrent_turns of each replica")
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--quick", action="store_true", help="the smallest size: 4 conversations, one run")
    parser.add_argument("--throughput-only", action="store_true", help="skip the per-turn overhead (2)")
    parser.add_argument("--timeline", action="store_true",
                        help="print each replica's turns at the model over time (where the idle gaps are)")
    parser.add_argument("--logs", type=Path, help="keep each run's replica logs under this folder")
    parser.add_argument("--baseline", type=Path,
                        help="another checkout (e.g. /work/main) whose replicas run too, interleaved with these")
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 3], help="the configurations to run")
    args = parser.parse_args()
    if args.quick:
        args.conversations, args.latency, args.repeats = 4, 0.05, 1
    CONVERSATIONS, PER, MODEL_LATENCY_S, TURN_CAP, REPEATS = (args.conversations, args.per, args.latency, args.cap,
                                                               args.repeats)
    with throwaway_cluster() as server:
        print(f"throughput: {CONVERSATIONS} conversations x {PER} messages through nginx, model latency "
              f"{MODEL_LATENCY_S * 1000:.0f} ms, turn cap {TURN_CAP} per replica (ideal one replica: "
              f"{TURN_CAP / MODEL_LATENCY_S:.0f} turns/s); median of {REPEATS} runs")
        checkouts = {"this checkout": daemon_support.DAEMON_REPO}
        if args.baseline is not None:
            checkouts["baseline " + str(args.baseline)] = args.baseline.resolve()
        rates = {label: {count: [] for count in sorted({1, *args.replicas})} for label in checkouts}
        for _ in range(REPEATS):
            for label, repo in checkouts.items():  # interleaved: a noisy moment hits each of them
                daemon_support.DAEMON_REPO = repo  # the replicas run this checkout's code
                for count in rates[label]:
                    rates[label][count].append(await throughput(server, count, args.timeline, args.logs))
        for label in checkouts:
            report(label, rates[label])
        if args.throughput_only:
            return
        print(f"\nper-turn overhead, one replica, model answers at once, {TURNS} turns one after another "
              f"(post -> answer), median of {REPEATS} runs")
        sqlite: list[float] = []
        postgres: list[float] = []
        for _ in range(REPEATS):
            sqlite.append(await per_turn(None))
            postgres.append(await per_turn(server))
        s, p = statistics.median(sqlite), statistics.median(postgres)
        print(f"  SQLite     {s:8.1f} ms")
        print(f"  PostgreSQL {p:8.1f} ms")
        print(f"PostgreSQL / SQLite: {p / s:.2f}  (goal <= 1.5)")


if __name__ == "__main__":
    asyncio.run(main())
