"""WhatsApp webhooks and Slack events: how fast Sabha acknowledges, and how soon everything is answered.

Runs a real ``sabha run`` (one channel only: WhatsApp on a fake Graph API, or with ``--channel slack`` Slack's
Events API on a fake Slack Web API; a fake model of fixed latency) and, in the same run, a bare aiohttp server
whose handler only answers "200 OK" (also its own process). 50 concurrent clients post 1,000 signed webhooks
(Slack: signed ``event_callback`` requests, each a DM with the app: a conversation per user, as on WhatsApp) to
each. Prints:

* acknowledgement latency p50 / p99 for both, and Sabha's ratio to the bare handler
  (goal: p99 ratio <= 2 for WhatsApp, <= 1.5 for Slack: verifying, validating and durably storing costs little);
Bare and Sabha are measured in turn, ``--rounds`` times (each Sabha round once the last
one is answered), and the medians over rounds are printed, so a busy moment on a shared
machine does not decide the figure.

* the time until all 1,000 are answered (the fake Graph API received every reply)
  against the ideal for that model latency: ``max(messages per user, 1000 / turn cap) x latency``.

Usage: ``.venv/bin/python benchmarks/webhook.py [--channel whatsapp|slack] [--count 1000] [--clients 50]
[--users 100] [--latency 0.2]``. It prints figures; it does not assert on time.
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
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, ClientTimeout, TCPConnector

__all__ = ["main"]

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from board.workspace.paths import copy_default_workspace  # noqa: E402
from tests.support.fakes.echo_model import EchoModel  # noqa: E402
from tests.support.fakes.graph_api import FakeGraphAPI  # noqa: E402
from tests.support.fakes.slack_api import SIGNING_SECRET, FakeSlackAPI, event_callback, message_event  # noqa: E402
from tests.support.fakes.slack_api import sign as slack_sign  # noqa: E402
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, sign, text_notification  # noqa: E402

BARE = """
import sys
from aiohttp import web
async def ok(request):
    await request.read()
    return web.Response(text="ok")
app = web.Application(client_max_size=4 * 1024 * 1024)
app.router.add_post("/whatsapp/webhook", ok)
app.router.add_post("/slack/events", ok)
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


@dataclass(frozen=True)
class Target:
    """What differs between the channels measured: the fake service, the config, the bodies and their signature."""

    path: str
    fake: Callable[[], AbstractAsyncContextManager[Any]]
    config: Callable[[Any, list[str]], list[str]]  # the channel's config lines, given the fake and the users
    env: Callable[[Any], dict[str, str]]
    body: Callable[[str, str], bytes]  # (user, text) -> a signed request's body
    headers: Callable[[bytes], dict[str, str]]
    texts: Callable[[Any], Iterator[str]]  # what the fake received so far


_slack_ts = iter(range(1, 10**9))


def _slack_body(user: str, text: str) -> bytes:
    ts = f"{int(time.time())}.{next(_slack_ts):06d}"
    return json.dumps(event_callback(message_event(f"D{user[1:]}", user, text, ts, channel_type="im"))).encode()


TARGETS = {
    "whatsapp": Target(
        "/whatsapp/webhook", FakeGraphAPI,
        lambda graph, users: ["whatsapp:", f'  phone_number_id: "{NUMBER_ID}"',
                              "  access_token: ${WHATSAPP_ACCESS_TOKEN}", "  app_secret: ${WHATSAPP_APP_SECRET}",
                              "  verify_token: ${WHATSAPP_VERIFY_TOKEN}", f"  graph_base_url: {graph.base_url}",
                              f"  allowed_numbers: [{', '.join(repr(u) for u in users)}]"],
        lambda graph: {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET,
                       "WHATSAPP_VERIFY_TOKEN": VERIFY_TOKEN},
        lambda user, text: json.dumps(text_notification(user, text)).encode(),
        lambda body: {"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)},
        lambda graph: (sent.body for sent in graph.sent)),
    "slack": Target(
        "/slack/events", FakeSlackAPI,
        lambda slack, users: ["slack:", "  bot_token: ${SLACK_BOT_TOKEN}", "  signing_secret: ${SLACK_SIGNING_SECRET}",
                              f"  api_base_url: {slack.base_url}", "  board_channel: C0BENCH", "  stream: false",
                              f"  allowed_user_ids: [{', '.join(users)}]"],
        lambda slack: {"SLACK_BOT_TOKEN": slack.token, "SLACK_SIGNING_SECRET": SIGNING_SECRET},
        _slack_body, slack_sign, lambda slack: iter(slack.texts())),
}


async def post_signed(http: ClientSession, url: str, body: bytes,
                      headers_for: Callable[[bytes], dict[str, str]] | None = None) -> float:
    """Post one signed webhook; its latency (seconds). Anything but a 200 stops the benchmark."""
    headers = (headers_for or (lambda b: {"Content-Type": "application/json", "X-Hub-Signature-256": sign(b)}))(body)
    start = time.perf_counter()
    async with http.post(url, data=body, headers=headers) as resp:
        await resp.read()
        if resp.status != 200:
            raise RuntimeError(f"{url} answered {resp.status}")
    return time.perf_counter() - start


def user_id(target: Target, n: int) -> str:
    """The ``n``-th user of the run (a phone number, a Slack user id)."""
    return f"U0BENCH{n:05d}" if target.path.startswith("/slack") else f"1555{n:07d}"


def write_config(root: Path, target: Target, fake: Any, model: EchoModel, users: int, cap: int) -> dict[str, str]:
    """A fresh workspace and ``sabha.yaml`` under ``root`` (the one channel, the fake model, the ``users`` and the
    warm-up user allowed); the environment to run both servers in."""
    copy_default_workspace(root / "workspace")
    allowed = [user_id(target, n) for n in range(users)] + [warm_up_user(target)]
    (root / "sabha.yaml").write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "server: {host: 127.0.0.1, port: 0}",
        f"inbox: {{max_concurrent_turns: {cap}}}",
        "llm:", "  model: openai:echo", "  retry: {retries: 0}", "  providers:", "    openai:",
        "      api_key: ${OPENAI_API_KEY}", f"      base_url: {model.base_url}", "      stream: false",
        *target.config(fake, allowed)]) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(target.env(fake), OPENAI_API_KEY="bench-key", PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    return env


def warm_up_user(target: Target) -> str:
    return "U0WARMUP" if target.path.startswith("/slack") else WARM_UP_NUMBER


async def hammer(url: str, bodies: list[bytes], clients: int,
                 headers_for: Callable[[bytes], dict[str, str]] | None = None) -> list[float]:
    """Post every body with ``clients`` concurrent clients; the latency of each (seconds)."""
    latencies: list[float] = []
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for body in bodies:
        queue.put_nowait(body)

    async def client(http: ClientSession) -> None:
        while not queue.empty():
            latencies.append(await post_signed(http, url, queue.get_nowait(), headers_for))

    async with ClientSession(connector=TCPConnector(limit=clients), timeout=ClientTimeout(total=60)) as http:
        await asyncio.gather(*(client(http) for _ in range(clients)))
    return latencies


async def reply_seen(target: Target, fake: Any, text: str, timeout: float = 60.0) -> None:
    """Wait until a reply containing ``text`` reached the fake service."""
    deadline = time.perf_counter() + timeout
    while not any(text in sent for sent in target.texts(fake)):
        if time.perf_counter() > deadline:
            raise RuntimeError(f"no reply with {text!r} after {timeout:.0f} s")
        await asyncio.sleep(0.02)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


async def main(count: int, clients: int, users: int, latency: float, cap: int, rounds: int,
               channel: str = "whatsapp") -> None:
    root = Path(tempfile.mkdtemp(prefix="sabha-webhook-bench-"))
    results: list[tuple[list[float], list[float], float, float]] = []
    duplicates = 0
    target = TARGETS[channel]
    path = target.path
    async with target.fake() as graph, EchoModel(latency=latency) as model:
        env = write_config(root, target, graph, model, users, cap)
        bare, bare_port = await spawn([sys.executable, "-c", BARE], env, root)
        logged: list[str] = []
        sabha, sabha_port = await spawn([sys.executable, "-m", "bot.cli", "run", "--config",
                                         str(root / "sabha.yaml")], env, root, logged)
        try:
            warm = [target.body(warm_up_user(target), "warm up")]
            await hammer(f"http://127.0.0.1:{sabha_port}{path}", warm, 1, target.headers)
            await reply_seen(target, graph, "ECHO warm up")  # its turn done: the SDK's first-call paths are warm
            pattern = re.compile(r"ECHO R(\d+)Q(\d{4})")
            for round_ in range(rounds):  # bare and Sabha in turn, so load on the machine hits both alike
                bodies = [target.body(user_id(target, i % users), f"R{round_}Q{i:04d} what now?") for i in range(count)]
                if round_ == 0:
                    await hammer(f"http://127.0.0.1:{bare_port}{path}", bodies[:100], clients, target.headers)
                bare_lat = await hammer(f"http://127.0.0.1:{bare_port}{path}", bodies, clients, target.headers)
                started = time.perf_counter()
                sabha_lat = await hammer(f"http://127.0.0.1:{sabha_port}{path}", bodies, clients, target.headers)
                acked = time.perf_counter() - started
                while True:  # the next round starts once this one is answered
                    done = {q for s in target.texts(graph) for r, q in pattern.findall(s) if r == str(round_)}
                    if len(done) >= count or time.perf_counter() - started > 600:
                        break
                    await asyncio.sleep(0.05)
                if len(done) < count:
                    print(f"round {round_ + 1}: gave up after 600 s with {len(done)} answered")
                answers = [q for s in target.texts(graph) for r, q in pattern.findall(s) if r == str(round_)]
                duplicates += len(answers) - len(set(answers))
                results.append((bare_lat, sabha_lat, acked, time.perf_counter() - started))
        finally:
            for proc in (bare, sabha):
                proc.terminate()
                await proc.wait()
    per_user = math.ceil(count / users)
    ideal = max(per_user, math.ceil(count / cap)) * latency
    goal = 1.5 if channel == "slack" else 2.0
    print(f"{channel}: {count} signed webhooks per round, {rounds} rounds, {clients} concurrent clients, "
          f"{users} users, model latency {latency:.2f} s, turn cap {cap}")
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
          f"p99 {statistics.median(ratios99):.2f}x (goal p99 <= {goal:g}); all {count} answered after "
          f"{statistics.median(answers):.2f} s, {statistics.median(answers) / ideal:.2f}x the ideal "
          f"(max({per_user} per user, {math.ceil(count / cap)} per turn slot) x {latency:.2f} s)")
    print(f"answers sent twice: {duplicates}; lines Sabha logged at ERROR: {len(logged)}")
    for line in logged[:5]:
        print(f"  {line[:200]}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--channel", choices=sorted(TARGETS), default="whatsapp", help="whose webhooks to post")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--users", type=int, default=100)
    p.add_argument("--latency", type=float, default=0.2, help="the fake model's latency (s)")
    p.add_argument("--cap", type=int, default=32, help="inbox.max_concurrent_turns")
    p.add_argument("--rounds", type=int, default=3, help="bare and Sabha measured in turn this many times")
    return p.parse_args(argv)


if __name__ == "__main__":
    a = parse()
    asyncio.run(main(a.count, a.clients, a.users, a.latency, a.cap, a.rounds, a.channel))

