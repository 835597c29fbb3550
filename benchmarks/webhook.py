"""WhatsApp webhook: how fast Sabha acknowledges, and how soon everything is answered.

Runs a real ``sabha run`` (WhatsApp channel only, on a fake Graph API and a fake model of
fixed latency) and, in the same run, a bare aiohttp server whose handler only answers
"200 OK" (also its own process). 50 concurrent clients post 1,000 signed webhooks to
each. Prints:

* acknowledgement latency p50 / p99 for both, and Sabha's ratio to the bare handler
  (goal: p99 ratio <= 2: verifying, validating and durably storing costs little);
Bare and Sabha are measured in turn, ``--rounds`` times (each Sabha round once the last
one is answered), and the medians over rounds are printed, so a busy moment on a shared
machine does not decide the figure.

* the time until all 1,000 are answered (the fake Graph API received every reply)
  against the ideal for that model latency: ``max(messages per user, 1000 / turn cap) x latency``.

Usage: ``.venv/bin/python benchmarks/webhook.py [--count 1000] [--clients 50] [--users 100]
[--latency 0.2]``. It prints figures; it does not assert on time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout, TCPConnector

__all__ = ["main"]

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from board.workspace.paths import copy_default_workspace  # noqa: E402
from tests.support.fakes.echo_model import EchoModel  # noqa: E402
from tests.support.fakes.graph_api import FakeGraphAPI  # noqa: E402
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, sign, text_notification  # noqa: E402

BARE = """
import sys
from aiohttp import web
async def ok(request):
    await request.read()
    return web.Response(text="ok")
app = web.Application(client_max_size=4 * 1024 * 1024)
app.router.add_post("/whatsapp/webhook", ok)
async def main():
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print("port", site._server.sockets[0].getsockname()[1], file=sys.stderr, flush=True)
    import asyncio
    await asyncio.Event().wait()
import asyncio
asyncio.run(main())
"""

_PORT = re.compile(r"(?:http on [^\s:]+:|^port )(\d+)")


async def spawn(args: list[str], env: dict[str, str], cwd: Path,
                errors: list[str] | None = None) -> tuple[asyncio.subprocess.Process, int]:
    """Start a process and read its port from stderr (then keep draining stderr, keeping
    the lines logged at ERROR or above in ``errors``)."""
    proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.PIPE, env=env, cwd=str(cwd))
    assert proc.stderr is not None
    while True:
        line = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode(errors="replace")
        if not line:
            raise RuntimeError(f"{args[0]} exited before listening")
        found = _PORT.search(line)
        if found:
            break

    async def drain() -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            if errors is not None and re.search(r" (ERROR|CRITICAL) ", line.decode(errors="replace")):
                errors.append(line.decode(errors="replace").rstrip())

    asyncio.get_running_loop().create_task(drain())
    return proc, int(found.group(1))


WARM_UP_NUMBER = "1555" + "9" * 7


async def post_signed(http: ClientSession, url: str, body: bytes) -> float:
    """Post one signed webhook; its latency (seconds). Anything but a 200 stops the benchmark."""
    headers = {"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)}
    start = time.perf_counter()
    async with http.post(url, data=body, headers=headers) as resp:
        await resp.read()
        if resp.status != 200:
            raise RuntimeError(f"{url} answered {resp.status}")
    return time.perf_counter() - start


def write_config(root: Path, graph: FakeGraphAPI, model: EchoModel, users: int, cap: int) -> dict[str, str]:
    """A fresh workspace and ``sabha.yaml`` under ``root`` (WhatsApp only, the fake model, the
    ``users`` numbers and the warm-up number allowed); the environment to run both servers in."""
    copy_default_workspace(root / "workspace")
    numbers = ", ".join([f'"1555{n:07d}"' for n in range(users)] + [f'"{WARM_UP_NUMBER}"'])
    (root / "sabha.yaml").write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "server: {host: 127.0.0.1, port: 0}",
        f"inbox: {{max_concurrent_turns: {cap}}}",
        "llm:", "  model: openai:echo", "  retry: {retries: 0}", "  providers:", "    openai:",
        "      api_key: ${OPENAI_API_KEY}", f"      base_url: {model.base_url}",
        "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
        "  app_secret: ${WHATSAPP_APP_SECRET}", "  verify_token: ${WHATSAPP_VERIFY_TOKEN}",
        f"  graph_base_url: {graph.base_url}", f"  allowed_numbers: [{numbers}]"]) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(WHATSAPP_ACCESS_TOKEN=graph.token, WHATSAPP_APP_SECRET=APP_SECRET, WHATSAPP_VERIFY_TOKEN=VERIFY_TOKEN,
               OPENAI_API_KEY="bench-key", PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    return env


async def hammer(url: str, bodies: list[bytes], clients: int) -> list[float]:
    """Post every body with ``clients`` concurrent clients; the latency of each (seconds)."""
    latencies: list[float] = []
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)

    async def client(http: ClientSession) -> None:
        while not queue.empty():
            latencies.append(await post_signed(http, url, queue.get_nowait()))

    async with ClientSession(connector=TCPConnector(limit=clients), timeout=ClientTimeout(total=60)) as http:
        await asyncio.gather(*(client(http) for _ in range(clients)))
    return latencies


async def reply_seen(graph: FakeGraphAPI, text: str, timeout: float = 60.0) -> None:
    """Wait until a reply containing ``text`` reached the fake Graph API."""
    deadline = time.perf_counter() + timeout
    while not any(text in sent.body for sent in graph.sent):
        if time.perf_counter() > deadline:
            raise RuntimeError(f"no reply with {text!r} after {timeout:.0f} s")
        await asyncio.sleep(0.02)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


async def main(count: int, clients: int, users: int, latency: float, cap: int, rounds: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="sabha-webhook-bench-"))
    results: list[tuple[list[float], list[float], float, float]] = []
    duplicates = 0
    async with FakeGraphAPI() as graph, EchoModel(latency=latency) as model:
        env = write_config(root, graph, model, users, cap)
        bare, bare_port = await spawn([sys.executable, "-c", BARE], env, root)
        logged: list[str] = []
        sabha, sabha_port = await spawn([sys.executable, "-m", "bot.cli", "run", "--config",
                                         str(root / "sabha.yaml")], env, root, logged)
        try:
            warm = [json.dumps(text_notification(WARM_UP_NUMBER, "warm up")).encode()]
            await hammer(f"http://127.0.0.1:{sabha_port}/whatsapp/webhook", warm, 1)
            await reply_seen(graph, "ECHO warm up")  # its turn done: the SDK's first-call paths are warm
            pattern = re.compile(r"ECHO R(\d+)Q(\d{4})")
            for round_ in range(rounds):  # bare and Sabha in turn, so load on the machine hits both alike
                bodies = [json.dumps(text_notification(f"1555{i % users:07d}", f"R{round_}Q{i:04d} what now?"))
                          .encode() for i in range(count)]
                if round_ == 0:
                    await hammer(f"http://127.0.0.1:{bare_port}/whatsapp/webhook", bodies[:100], clients)
                bare_lat = await hammer(f"http://127.0.0.1:{bare_port}/whatsapp/webhook", bodies, clients)
                started = time.perf_counter()
                sabha_lat = await hammer(f"http://127.0.0.1:{sabha_port}/whatsapp/webhook", bodies, clients)
                acked = time.perf_counter() - started
                while True:  # the next round starts once this one is answered
                    done = {q for s in graph.sent for r, q in pattern.findall(s.body) if r == str(round_)}
                    if len(done) >= count or time.perf_counter() - started > 600:
                        break
                    await asyncio.sleep(0.05)
                if len(done) < count:
                    print(f"round {round_ + 1}: gave up after 600 s with {len(done)} answered")
                answers = [q for s in graph.sent for r, q in pattern.findall(s.body) if r == str(round_)]
                duplicates += len(answers) - len(set(answers))
                results.append((bare_lat, sabha_lat, acked, time.perf_counter() - started))
        finally:
            for proc in (bare, sabha):
                proc.terminate()
                await proc.wait()
    per_user = math.ceil(count / users)
    ideal = max(per_user, math.ceil(count / cap)) * latency
    print(f"{count} signed webhooks per round, {rounds} rounds, {clients} concurrent clients, {users} users, "
          f"model latency {latency:.2f} s, turn cap {cap}")
    print("round   bare p50    p99   sabha p50     p99   ratio p50   p99   all acked   all answered (ideal "
          f"{ideal:.2f} s)")
    ratios50, ratios99, answers = [], [], []
    for i, (bare_lat, sabha_lat, acked, answered) in enumerate(results, 1):
        b50, b99, s50, s99 = (pct(bare_lat, 0.5), pct(bare_lat, 0.99), pct(sabha_lat, 0.5), pct(sabha_lat, 0.99))
        ratios50.append(s50 / b50)
        ratios99.append(s99 / b99)
        answers.append(answered)
        print(f"{i:>5}  {b50 * 1000:6.2f} {b99 * 1000:6.2f} ms  {s50 * 1000:6.2f} {s99 * 1000:7.2f} ms  "
              f"{s50 / b50:8.2f}x {s99 / b99:5.2f}x  {acked:8.2f} s  {answered:8.2f} s = {answered / ideal:.2f}x ideal")
    print(f"median over rounds: ack latency ratio sabha/bare p50 {statistics.median(ratios50):.2f}x, "
          f"p99 {statistics.median(ratios99):.2f}x (goal p99 <= 2); all {count} answered after "
          f"{statistics.median(answers):.2f} s, {statistics.median(answers) / ideal:.2f}x the ideal "
          f"(max({per_user} per user, {math.ceil(count / cap)} per turn slot) x {latency:.2f} s)")
    print(f"answers sent twice: {duplicates}; lines Sabha logged at ERROR: {len(logged)}")
    for line in logged[:5]:
        print(f"  {line[:200]}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--users", type=int, default=100)
    p.add_argument("--latency", type=float, default=0.2, help="the fake model's latency (s)")
    p.add_argument("--cap", type=int, default=32, help="inbox.max_concurrent_turns")
    p.add_argument("--rounds", type=int, default=3, help="bare and Sabha measured in turn this many times")
    return p.parse_args(argv)


if __name__ == "__main__":
    a = parse()
    asyncio.run(main(a.count, a.clients, a.users, a.latency, a.cap, a.rounds))

