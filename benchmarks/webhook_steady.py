"""WhatsApp webhook under steady traffic: acknowledgement latency while answers run.

``benchmarks/webhook.py`` measures a burst (1,000 webhooks as fast as 50 clients can post
them); Sabha defers starting answers while a burst is being received, so there the
acknowledgements compete with little else. Here webhooks arrive at a fixed rate
(``--rate`` per second) for ``--count`` notifications, so answers (a fake model of fixed
latency, replies to a fake Graph API) run all along, and each acknowledgement shares the
event loop with up to ``--cap`` turns in flight. The same paced load is posted to a bare
aiohttp "200 OK" handler in the same run, in interleaved rounds. Prints p50 / p99 for both
and the ratios. It prints figures; it does not assert on time.

    .venv/bin/python benchmarks/webhook_steady.py [--rate 100] [--count 1000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout, TCPConnector

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.webhook import (  # noqa: E402
    BARE,
    TARGETS,
    WARM_UP_NUMBER,
    pct,
    post_signed,
    reply_seen,
    spawn,
    write_config,
)
from tests.support.fakes.echo_model import EchoModel  # noqa: E402
from tests.support.fakes.graph_api import FakeGraphAPI  # noqa: E402
from tests.support.whatsapp import text_notification  # noqa: E402

__all__ = ["main"]


async def paced(url: str, bodies: list[bytes], rate: float) -> list[float]:
    """Post ``bodies`` at ``rate`` per second (each on its own schedule); their latencies."""
    latencies: list[float] = []
    async with ClientSession(connector=TCPConnector(limit=200), timeout=ClientTimeout(total=60)) as http:
        async def one(body: bytes) -> None:
            latencies.append(await post_signed(http, url, body))

        began = time.perf_counter()
        tasks = []
        for i, body in enumerate(bodies):
            delay = began + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(body)))
        await asyncio.gather(*tasks)
    return latencies


async def main(rate: float, count: int, users: int, latency: float, cap: int, rounds: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="sabha-webhook-steady-"))
    rows: list[tuple[list[float], list[float], int]] = []
    async with FakeGraphAPI() as graph, EchoModel(latency=latency) as model:
        target = TARGETS["whatsapp"]  # benchmarks/webhook.py measures Slack too; this one WhatsApp
        env = write_config(root, target, graph, model, users, cap)
        logged: list[str] = []
        bare, bare_port = await spawn([sys.executable, "-c", BARE], env, root)
        sabha, sabha_port = await spawn([sys.executable, "-m", "bot.cli", "run", "--config",
                                         str(root / "sabha.yaml")], env, root, logged)
        try:
            warm = [json.dumps(text_notification(WARM_UP_NUMBER, "warm up")).encode()]
            await paced(f"http://127.0.0.1:{sabha_port}/whatsapp/webhook", warm, rate)
            await reply_seen(target, graph, "ECHO warm up")
            for round_ in range(rounds):
                bodies = [json.dumps(text_notification(f"1555{i % users:07d}", f"S{round_}Q{i:04d} what now?"))
                          .encode() for i in range(count)]
                bare_lat = await paced(f"http://127.0.0.1:{bare_port}/whatsapp/webhook", bodies, rate)
                calls = model.calls
                sabha_lat = await paced(f"http://127.0.0.1:{sabha_port}/whatsapp/webhook", bodies, rate)
                rows.append((bare_lat, sabha_lat, model.calls - calls))
                await asyncio.sleep(count / users * latency + 2)  # let this round's answers finish
        finally:
            for proc in (bare, sabha):
                proc.terminate()
                await proc.wait()
    print(f"{count} signed webhooks per round at {rate:.0f}/s, {rounds} rounds, {users} users, "
          f"model latency {latency:.2f} s, turn cap {cap}")
    print("round   bare p50    p99   sabha p50     p99   ratio p50   p99   model calls during the round")
    ratios50, ratios99 = [], []
    for i, (bare_lat, sabha_lat, calls) in enumerate(rows, 1):
        b50, b99, s50, s99 = (pct(bare_lat, 0.5), pct(bare_lat, 0.99), pct(sabha_lat, 0.5), pct(sabha_lat, 0.99))
        ratios50.append(s50 / b50)
        ratios99.append(s99 / b99)
        print(f"{i:>5}  {b50 * 1000:6.2f} {b99 * 1000:6.2f} ms  {s50 * 1000:6.2f} {s99 * 1000:7.2f} ms  "
              f"{s50 / b50:8.2f}x {s99 / b99:5.2f}x  {calls}")
    print(f"median over rounds: ack latency ratio sabha/bare p50 {statistics.median(ratios50):.2f}x, "
          f"p99 {statistics.median(ratios99):.2f}x (answers running meanwhile; no goal is set for this case)")
    print(f"lines Sabha logged at ERROR: {len(logged)}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rate", type=float, default=100.0, help="webhooks per second")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--users", type=int, default=100)
    p.add_argument("--latency", type=float, default=0.2, help="the fake model's latency (s)")
    p.add_argument("--cap", type=int, default=32, help="inbox.max_concurrent_turns")
    p.add_argument("--rounds", type=int, default=2)
    return p.parse_args(argv)


if __name__ == "__main__":
    a = parse()
    asyncio.run(main(a.rate, a.count, a.users, a.latency, a.cap, a.rounds))
