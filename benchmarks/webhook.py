"""WhatsApp, Slack and Telegram webhooks: how fast Sabha acknowledges, what an acknowledgement costs in CPU, and
how soon everything is answered.

Runs a real ``sabha run`` (one channel only: WhatsApp on a fake Graph API, with ``--channel slack`` Slack's
Events API on a fake Slack Web API, with ``--channel telegram`` Telegram's webhook mode on a fake Bot API; a fake
model of fixed latency) and, in the same run, a bare aiohttp server whose handler only answers "200 OK" (also its
own process). 50 concurrent clients post 1,000 signed webhooks (Slack: signed ``event_callback`` requests, each a
DM with the app; Telegram: updates of private chats, with the secret token; a conversation per user, as on
WhatsApp) to each. With ``--baseline PATH`` a second ``sabha run`` from another checkout (e.g. ``/work/main``) is
measured in the same rounds, so a change is compared with the code before it under the same load. Prints:

* acknowledgement latency p50 / p99 for both, and Sabha's ratio to the bare handler
  (goal, issue 44: p99 ratio <= 1.5 on every channel: verifying, validating and durably storing costs little);
Bare and Sabha are measured in turn, ``--rounds`` times (each Sabha round once the last
one is answered, and once every daemon is idle; with a baseline, who goes first turns round by round), and the
medians over rounds are printed, so a busy moment on a shared machine does not decide the figure. The client (this
process) collects its garbage before each burst and not during it: its own pauses are not the server's latency.

* the CPU each acknowledgement costs (user + system time of the whole process, all threads, from
  ``/proc/<pid>/stat``, over a burst / the webhooks posted): it holds on a busy machine where wall times do
  not (goal: under 2 ms for Sabha, issue 44). Measured on a ``sabha run`` of its own whose turns cannot take
  CPU meanwhile (``inbox.max_concurrent_turns: 1``, and the one turn that starts waits at the model until the
  end), after a warm-up burst, in ``--rounds`` bursts alternating with the bare handler (and the baseline);
* the time until all 1,000 are answered (the fake Graph API received every reply)
  against the ideal for that model latency: ``max(messages per user, 1000 / turn cap) x latency``.

With ``--send-latency S`` (WhatsApp only) the fake Graph API answers each request after ``S`` seconds, as Meta's
servers do from afar (the default 0 answers at once): a reply's delivery then takes a real round trip.

With ``--front-desk`` the same checkout is measured a second time in the same rounds with its front desk on
(``server.front_desk_port: 0``: the webhooks go to that port, received on a thread of their own; label ``desk``).

Usage: ``.venv/bin/python benchmarks/webhook.py [--channel whatsapp|slack|telegram] [--count 1000] [--clients 50]
[--users 100] [--latency 0.2] [--send-latency 0] [--baseline /work/main] [--front-desk] [--quick]``.
``--quick`` is the smallest run (50 webhooks, 5 clients, 5 users, one round: a test runs it so the script cannot
rot). It prints figures; it does not assert on time.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
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
from tests.support.fakes.telegram_api import FakeTelegramAPI  # noqa: E402
from tests.support.telegram import FAST, TOKEN  # noqa: E402
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
app.router.add_post("/telegram/webhook", ok)
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
_DESK = re.compile(r"front desk: webhooks .* received on http://[^\s]+:(\d+) ")  # server.front_desk_port


async def spawn(args: list[str], env: dict[str, str], cwd: Path,
                errors: list[str] | None = None) -> tuple[asyncio.subprocess.Process, int]:
    """Start a process and read its port from stderr (then keep draining stderr, keeping
    the lines logged at ERROR or above in ``errors``). The port its webhooks go to: the front desk's when it
    logged one (``server.front_desk_port``), else the server's."""
    proc = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.PIPE, env=env, cwd=str(cwd))
    assert proc.stderr is not None
    desk = None
    while True:
        line = (await asyncio.wait_for(proc.stderr.readline(), 30)).decode(errors="replace")
        if not line:
            raise RuntimeError(f"{args[0]} exited before listening")
        desk = desk or _DESK.search(line)
        found = _PORT.search(line)
        if found:
            break

    async def drain() -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            if errors is not None and re.search(r" (ERROR|CRITICAL) ", line.decode(errors="replace")):
                errors.append(line.decode(errors="replace").rstrip())

    asyncio.get_running_loop().create_task(drain())
    return proc, int((desk or found).group(1))


WARM_UP_NUMBER = "1555" + "9" * 7


@dataclass(frozen=True)
class Target:
    """What differs between the channels measured: the fake service, the config, the bodies and their signature."""

    path: str
    fake: Callable[[], AbstractAsyncContextManager[Any]]
    config: Callable[[Any, list[str]], list[str]]  # the channel's config lines, given the fake and the users
    env: Callable[[Any], dict[str, str]]
    body: Callable[[Any, str, str], bytes]  # (fake, user, text) -> a signed request's body
    headers: Callable[[bytes], dict[str, str]]
    texts: Callable[[Any], Iterator[str]]  # what the fake received so far


_slack_ts = iter(range(1, 10**9))
TELEGRAM_SECRET = "bench-webhook-secret"


def _slack_body(_: Any, user: str, text: str) -> bytes:
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
        lambda _, user, text: json.dumps(text_notification(user, text)).encode(),
        lambda body: {"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)},
        lambda graph: (sent.body for sent in graph.sent)),
    "slack": Target(
        "/slack/events", FakeSlackAPI,
        lambda slack, users: ["slack:", "  bot_token: ${SLACK_BOT_TOKEN}", "  signing_secret: ${SLACK_SIGNING_SECRET}",
                              f"  api_base_url: {slack.base_url}", "  board_channel: C0BENCH", "  stream: false",
                              f"  allowed_user_ids: [{', '.join(users)}]"],
        lambda slack: {"SLACK_BOT_TOKEN": slack.token, "SLACK_SIGNING_SECRET": SIGNING_SECRET},
        _slack_body, slack_sign, lambda slack: iter(slack.texts())),
    "telegram": Target(
        "/telegram/webhook", lambda: FakeTelegramAPI(token=TOKEN),
        lambda telegram, users: ["telegram:", "  token: ${TELEGRAM_BOT_TOKEN}", f"  api_base_url: {telegram.base_url}",
                                 f"  allowed_user_ids: [{', '.join(users)}]",
                                 "  rate_limit: {" + ", ".join(f"{k}: {v}" for k, v in FAST.items()) + "}",
                                 "  mode: webhook", "  webhook_secret: ${TELEGRAM_WEBHOOK_SECRET}"],
        lambda telegram: {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": TELEGRAM_SECRET},
        lambda telegram, user, text: json.dumps(telegram.build_text_update(
            int(user), int(user), text, is_forum=False, chat_type="private")).encode(),
        lambda body: {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET},
        lambda telegram: (m.text for m in telegram.sent_messages)),
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
    """The ``n``-th user of the run (a phone number, a Slack user id, a Telegram user id)."""
    if target.path.startswith("/telegram"):
        return str(7100000 + n)
    return f"U0BENCH{n:05d}" if target.path.startswith("/slack") else f"1555{n:07d}"


def write_config(root: Path, target: Target, fake: Any, model: EchoModel, users: int, cap: int,
                 repo: Path = REPO, desk: bool = False) -> dict[str, str]:
    """A fresh workspace and ``sabha.yaml`` under ``root`` (the one channel, the fake model, the ``users`` and the
    warm-up user allowed); the environment to run both servers in (Sabha's code from ``repo``)."""
    copy_default_workspace(root / "workspace")
    allowed = [user_id(target, n) for n in range(users)] + [warm_up_user(target)]
    (root / "sabha.yaml").write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions",
        f"server: {{host: 127.0.0.1, port: 0{', front_desk_port: 0' if desk else ''}}}",
        f"inbox: {{max_concurrent_turns: {cap}}}",
        "llm:", "  model: openai:echo", "  retry: {retries: 0}", "  providers:", "    openai:",
        "      api_key: ${OPENAI_API_KEY}", f"      base_url: {model.base_url}", "      stream: false",
        *target.config(fake, allowed)]) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(target.env(fake), OPENAI_API_KEY="bench-key", PYTHONPATH=str(repo), PYTHONUNBUFFERED="1")
    return env


def warm_up_user(target: Target) -> str:
    if target.path.startswith("/telegram"):
        return "7199999"
    return "U0WARMUP" if target.path.startswith("/slack") else WARM_UP_NUMBER


def collected() -> None:
    """Collect this process's garbage and keep what is left out of later collections' sight (before a burst, so the
    collections :func:`hammer` puts off are short when they run)."""
    gc.collect()
    gc.freeze()


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

    # The client's own collections would be measured as the server's latency (a full one of 60-180 ms, the heap of
    # the bursts before, landed inside a burst and put 20-50 posts 60-90 ms late): none during a burst; the caller
    # collects before it (:func:`collected`), outside what it times.
    gc.disable()
    try:
        async with ClientSession(connector=TCPConnector(limit=clients), timeout=ClientTimeout(total=60)) as http:
            await asyncio.gather(*(client(http) for _ in range(clients)))
    finally:
        gc.enable()
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


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` so far (all its threads), from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def settled(pid: int, idle_s: float = 0.5, most_s: float = 30.0) -> None:
    """Wait until process ``pid`` is idle (under 2 % of a core over ``idle_s``): what its start or the last burst
    left to do (a first indexing pass, a flush) is not counted in the next burst."""
    deadline = time.perf_counter() + most_s
    while time.perf_counter() < deadline:
        before = cpu_seconds(pid)
        await asyncio.sleep(idle_s)
        if cpu_seconds(pid) - before <= 0.02 * idle_s:
            return


@dataclass
class Daemon:
    """One ``sabha run`` measured: its code, fake service, model, process and each round's figures."""

    label: str
    repo: Path
    desk: bool = False  # webhooks to its front desk (server.front_desk_port)
    fake: Any = None
    proc: asyncio.subprocess.Process | None = None
    port: int = 0
    logged: list[str] = field(default_factory=list)
    rounds: list[tuple[list[float], float, float]] = field(default_factory=list)  # latencies, acked, answered
    calls: list[int] = field(default_factory=list)  # each round's model calls (memory extractions apart)
    cpu: list[float] = field(default_factory=list)  # each round's daemon CPU (s): first post to all answered
    duplicates: int = 0
    model: EchoModel | None = None

    async def start(self, target: Target, stack: AsyncExitStack, latency: float, users: int, cap: int,
                    send_latency: float = 0.0) -> None:
        self.fake = await stack.enter_async_context(target.fake())
        if send_latency:
            self.fake.latency = send_latency  # FakeGraphAPI: each request answered after it
        model = self.model = await stack.enter_async_context(EchoModel(latency=latency))
        root = Path(tempfile.mkdtemp(prefix=f"sabha-webhook-bench-{self.label}-"))
        env = write_config(root, target, self.fake, model, users, cap, self.repo, self.desk)
        self.proc, self.port = await spawn([sys.executable, "-m", "bot.cli", "run", "--config",
                                            str(root / "sabha.yaml")], env, root, self.logged)
        warm = [target.body(self.fake, warm_up_user(target), "warm up")]
        await hammer(self.url(target), warm, 1, target.headers)
        await reply_seen(target, self.fake, "ECHO warm up")  # its turn done: the SDK's first-call paths are warm

    def url(self, target: Target) -> str:
        return f"http://127.0.0.1:{self.port}{target.path}"

    async def round(self, target: Target, round_: int, count: int, users: int, clients: int) -> None:
        """Post ``count`` webhooks, then wait until all are answered (the next round starts after)."""
        assert self.proc is not None
        bodies = [target.body(self.fake, user_id(target, i % users), f"R{round_}Q{i:04d} what now?")
                  for i in range(count)]
        calls = self.model.calls if self.model is not None else 0
        collected()
        cpu = cpu_seconds(self.proc.pid)
        started = time.perf_counter()
        latencies = await hammer(self.url(target), bodies, clients, target.headers)
        acked = time.perf_counter() - started
        pattern = re.compile(r"ECHO R(\d+)Q(\d{4})")
        while True:
            done = {q for s in target.texts(self.fake) for r, q in pattern.findall(s) if r == str(round_)}
            if len(done) >= count or time.perf_counter() - started > 600:
                break
            await asyncio.sleep(0.05)
        if len(done) < count:
            print(f"{self.label} round {round_ + 1}: gave up after 600 s with {len(done)} answered")
        answers = [q for s in target.texts(self.fake) for r, q in pattern.findall(s) if r == str(round_)]
        self.duplicates += len(answers) - len(set(answers))
        self.rounds.append((latencies, acked, time.perf_counter() - started))
        self.calls.append((self.model.calls if self.model is not None else 0) - calls)
        self.cpu.append(cpu_seconds(self.proc.pid) - cpu)

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()


async def quiet(daemons: list[Daemon]) -> None:
    """Wait until every daemon is idle (:func:`settled`)."""
    for daemon in daemons:
        if daemon.proc is not None:
            await settled(daemon.proc.pid)


async def ack_cpu(target: Target, repos: list[tuple[str, Path, bool]], count: int, clients: int, users: int,
                  rounds: int) -> dict[str, float]:
    """CPU seconds per acknowledgement of each of ``repos`` and of the bare handler (medians over ``rounds``
    bursts taken in turn), on daemons whose turns cannot run meanwhile (see the module docstring)."""
    cpu: dict[str, list[float]] = {label: [] for label, *_ in [("bare", REPO, False), *repos]}
    async with AsyncExitStack() as stack:
        model = await stack.enter_async_context(EchoModel(latency=0.0))
        model.hold()  # the one turn that starts waits here: the bursts measure acknowledgements only
        procs: dict[str, tuple[asyncio.subprocess.Process, str, Any]] = {}
        try:
            for label, repo, desk in repos:
                fake = await stack.enter_async_context(target.fake())
                root = Path(tempfile.mkdtemp(prefix=f"sabha-webhook-cpu-{label}-"))
                env = write_config(root, target, fake, model, users, 1, repo, desk)
                proc, port = await spawn([sys.executable, "-m", "bot.cli", "run", "--config",
                                          str(root / "sabha.yaml")], env, root)
                procs[label] = (proc, f"http://127.0.0.1:{port}{target.path}", fake)
            fake = await stack.enter_async_context(target.fake())
            root = Path(tempfile.mkdtemp(prefix="sabha-webhook-cpu-bare-"))
            bare, port = await spawn([sys.executable, "-c", BARE], {**os.environ, "PYTHONUNBUFFERED": "1"}, root)
            procs["bare"] = (bare, f"http://127.0.0.1:{port}{target.path}", fake)
            for round_ in range(-1, rounds):  # round -1 warms every path up and is not counted
                for label, (proc, url, fake) in procs.items():
                    bodies = [target.body(fake, user_id(target, i % users), f"C{round_}Q{i:04d} cpu")
                              for i in range(count)]
                    await settled(proc.pid)
                    collected()
                    before = cpu_seconds(proc.pid)
                    await hammer(url, bodies, clients, target.headers)
                    if round_ >= 0:
                        cpu[label].append((cpu_seconds(proc.pid) - before) / count)
        finally:
            model.release()
            for proc, _, _ in procs.values():
                proc.terminate()
                await proc.wait()
    return {label: statistics.median(values) for label, values in cpu.items()}


async def main(count: int, clients: int, users: int, latency: float, cap: int, rounds: int,
               channel: str = "whatsapp", baseline: Path | None = None, desk: bool = False,
               send_latency: float = 0.0) -> None:
    target = TARGETS[channel]
    if send_latency and channel != "whatsapp":
        raise SystemExit("--send-latency: only the fake Graph API (--channel whatsapp) can answer late")
    daemons = ([Daemon("sabha", REPO)] + ([Daemon("desk", REPO, desk=True)] if desk else [])
               + ([Daemon("baseline", baseline)] if baseline else []))
    cpu = await ack_cpu(target, [(d.label, d.repo, d.desk) for d in daemons], count, clients, users, rounds)
    bare_lat: list[list[float]] = []
    async with AsyncExitStack() as stack:
        fake = await stack.enter_async_context(target.fake())
        root = Path(tempfile.mkdtemp(prefix="sabha-webhook-bench-"))
        bare, bare_port = await spawn([sys.executable, "-c", BARE], {**os.environ, "PYTHONUNBUFFERED": "1"}, root)
        bare_url = f"http://127.0.0.1:{bare_port}{target.path}"
        try:
            for daemon in daemons:
                await daemon.start(target, stack, latency, users, cap, send_latency)
            warm = [target.body(fake, user_id(target, i % users), "warm") for i in range(min(100, count))]
            await hammer(bare_url, warm, clients, target.headers)
            for round_ in range(rounds):  # each process in turn, so load on the machine hits them alike
                bodies = [target.body(fake, user_id(target, i % users), f"R{round_}Q{i:04d} what now?")
                          for i in range(count)]
                await quiet(daemons)
                collected()
                bare_lat.append(await hammer(bare_url, bodies, clients, target.headers))
                # Who goes first turns round by round, and each burst waits until the daemons are idle: a daemon's
                # burst right after another's round otherwise shared the CPU with that one's trailing work (its
                # last outcomes recorded, memory extractions, the recall indexer), one position worse than the other.
                for daemon in daemons[round_ % len(daemons):] + daemons[:round_ % len(daemons)]:
                    await quiet(daemons)
                    await daemon.round(target, round_, count, users, clients)
        finally:
            bare.terminate()
            await bare.wait()
            for daemon in daemons:
                await daemon.stop()
    report(channel, daemons, bare_lat, cpu, count=count, clients=clients, users=users, latency=latency, cap=cap,
           send_latency=send_latency)


def report(channel: str, daemons: list[Daemon], bare_rounds: list[list[float]], cpu: dict[str, float], *,
           count: int, clients: int, users: int, latency: float, cap: int, send_latency: float = 0.0) -> None:
    """Print each round and the medians over rounds."""
    per_user = math.ceil(count / users)
    ideal = max(per_user, math.ceil(count / cap)) * latency
    goal = 1.5  # issue 44: "ack p99 over bare <= 1.5" on every channel (an older label said 2 for all but Slack)
    print(f"{channel}: {count} signed webhooks per round, {len(bare_rounds)} rounds, {clients} concurrent clients, "
          f"{users} users, model latency {latency:.2f} s, turn cap {cap}"
          + (f", the service answers each send after {send_latency:.2f} s" if send_latency else ""))
    print("CPU per acknowledgement (turns held back; median over rounds): "
          + ", ".join(f"{label} {value * 1000:.3f} ms" for label, value in cpu.items())
          + " (goal for Sabha: under 2 ms)")
    if "baseline" in cpu:
        print(f"CPU per ack, this checkout / baseline (same rounds): {cpu['sabha'] / cpu['baseline']:.2f}x; "
              f"over the bare handler's: this {cpu['sabha'] / cpu['bare']:.2f}x, baseline "
              f"{cpu['baseline'] / cpu['bare']:.2f}x")
    if "desk" in cpu:
        print(f"CPU per ack with the front desk / without (same rounds): {cpu['desk'] / cpu['sabha']:.2f}x")
    print("round  who       bare p50    p99   sabha p50     p99   ratio p50   p99   all acked   all answered (ideal "
          f"{ideal:.2f} s)   model calls (one a turn: {count})   daemon CPU per answer")
    for daemon in daemons:
        ratios50, ratios99, answers = [], [], []
        for i, (bare_lat, (lat, acked, answered), made, cpu_s) in enumerate(
                zip(bare_rounds, daemon.rounds, daemon.calls, daemon.cpu, strict=False), 1):
            b50, b99, s50, s99 = pct(bare_lat, 0.5), pct(bare_lat, 0.99), pct(lat, 0.5), pct(lat, 0.99)
            ratios50.append(s50 / b50)
            ratios99.append(s99 / b99)
            answers.append(answered)
            print(f"{i:>5}  {daemon.label:<8}  {b50 * 1000:6.2f} {b99 * 1000:6.2f} ms  {s50 * 1000:6.2f} "
                  f"{s99 * 1000:7.2f} ms  {s50 / b50:8.2f}x {s99 / b99:5.2f}x  {acked:8.2f} s  {answered:8.2f} s = "
                  f"{answered / ideal:.2f}x ideal   {made:>5}   {cpu_s / count * 1000:6.2f} ms")
        print(f"{daemon.label} ({daemon.repo}), median over rounds: ack latency ratio sabha/bare p50 "
              f"{statistics.median(ratios50):.2f}x, p99 {statistics.median(ratios99):.2f}x (goal p99 <= {goal:g}); "
              f"all {count} answered after {statistics.median(answers):.2f} s, "
              f"{statistics.median(answers) / ideal:.2f}x the ideal (max({per_user} per user, "
              f"{math.ceil(count / cap)} per turn slot) x {latency:.2f} s)")
        print(f"{daemon.label}: answers sent twice: {daemon.duplicates}; lines logged at ERROR: {len(daemon.logged)}")
        for line in daemon.logged[:5]:
            print(f"  {line[:200]}")


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--channel", choices=sorted(TARGETS), default="whatsapp", help="whose webhooks to post")
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--users", type=int, default=100)
    p.add_argument("--latency", type=float, default=0.2, help="the fake model's latency (s)")
    p.add_argument("--cap", type=int, default=32, help="inbox.max_concurrent_turns")
    p.add_argument("--send-latency", type=float, default=0.0, help="WhatsApp: the fake Graph API answers each "
                   "request after this many seconds (Meta's servers are a round trip away; default 0)")
    p.add_argument("--rounds", type=int, default=3, help="bare and Sabha measured in turn this many times")
    p.add_argument("--baseline", type=Path, help="another checkout whose sabha run is measured in the same rounds")
    p.add_argument("--front-desk", action="store_true", help="also measure this checkout with its front desk "
                   "(server.front_desk_port: webhooks received on a thread of their own), in the same rounds")
    p.add_argument("--quick", action="store_true", help="the smallest run: 50 webhooks, 5 clients, 5 users, 1 round")
    args = p.parse_args(argv)
    if args.baseline is not None:
        args.baseline = args.baseline.resolve()
    if args.quick:
        args.count, args.clients, args.users, args.rounds = 50, 5, 5, 1
    return args


if __name__ == "__main__":
    a = parse()
    asyncio.run(main(a.count, a.clients, a.users, a.latency, a.cap, a.rounds, a.channel, a.baseline, a.front_desk,
                     a.send_latency))

