"""The web pages: time to first byte of the live meeting page, and how late a meeting event
reaches 50 browsers watching it over SSE, against a bare aiohttp SSE handler.

Each side runs in its own process. Sabha's is the real daemon (:class:`bot.daemon.Daemon`, its
aiohttp server, the ``/ui/`` pages, the login cookie, the meeting feed) on the offline model; a
meeting's events are emitted the way a meeting emits them (every ``BoardRoom`` subscriber is
awaited in turn, the web feed among them), spaced ``--interval`` apart: statements of ~700
characters with stances, disagreements, consensus. The bare one is an aiohttp handler that
writes the same number of events of the same size from a per-connection queue. Both record
the wall-clock time each event was emitted; the 50 clients here record when each arrived.

Prints, medians over ``--rounds`` rounds: time to first byte of ``GET /ui/meetings/{id}``
(p50 / p99 of ``--pages`` requests, a meeting of 40 events on it), and the delay event emitted
-> received by a client, p50 / p99 over every event and client, for Sabha and the bare
handler, and Sabha's p99 ratio (goal: <= 2).

The client signs in as the owner does, with a one-time login link (``POST /ui/login``).

Usage: ``.venv/bin/python benchmarks/web.py [--clients 50] [--events 200] [--interval 0.02] [--quick]``.
It prints figures; it does not assert on time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout, TCPConnector

__all__ = ["main"]

REPO = Path(__file__).resolve().parent.parent

SERVER = r'''
import asyncio, json, sys, time
from pathlib import Path
MODE, ROOT, COUNT, INTERVAL = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
STATEMENT = ("We should test the market with a small pilot before we commit the budget. " * 10)[:700]

def events(meeting_id):
    from board.room.meeting.events import MeetingEvent, MeetingEventKind as K
    roles = ["research", "content", "finance", "strategy", "critic"]
    out = [MeetingEvent(kind=K.STARTED, meeting_id=meeting_id, topic="Should we open an office in Lisbon?",
                        role="general", data={"participants": roles})]
    i = 0
    while len(out) < COUNT:
        role = roles[i % 5]
        if i % 7 == 6:
            out.append(MeetingEvent(kind=K.DISAGREEMENT, meeting_id=meeting_id, topic="t", role=role, round=2,
                                    data={"target": roles[(i + 1) % 5], "topic": "cost", "reasoning": "too early",
                                          "severity": 6}))
        else:
            out.append(MeetingEvent(kind=K.AGENT_SPOKE, meeting_id=meeting_id, topic="t", role=role, round=1 + i // 5,
                                    name=role.title(), emoji="*", text=STATEMENT,
                                    data={"statement": STATEMENT, "stance": {"position": "support", "confidence": 0.7,
                                                                             "assumption": "demand is there"}}))
        i += 1
    return out

async def sabha():
    from bot.app import open_board
    from bot.config.load import load_config
    from bot.daemon import Daemon
    from board.workspace.paths import copy_default_workspace
    copy_default_workspace(ROOT / "workspace")
    (ROOT / "sabha.yaml").write_text("workspace: ./workspace\ndata_dir: ./sessions\nserver:\n  host: 127.0.0.1\n"
                                     "  port: 0\nlogging:\n  level: WARNING\n")
    loaded = load_config(ROOT / "sabha.yaml", env={})
    board = await open_board(loaded)
    daemon = Daemon(loaded, board=board, install_signals=False)
    task = asyncio.create_task(daemon.run())
    await daemon.ready.wait()
    from board.clock import SYSTEM_CLOCK
    from bot.web.auth import create_link
    # a one-time login link, as `sabha web link` makes it: the client signs in with it (POST /ui/login)
    link = await create_link(board.parts.db, SYSTEM_CLOCK, 600, f"http://127.0.0.1:{daemon.port}")
    meeting = "m-bench-page"
    for e in events(meeting)[:40]:  # a meeting with 40 events behind it, for the page
        for s in list(board.parts.room.subscribers):
            await s(e)
    return daemon, task, board, link.split("token=", 1)[1], meeting

async def emit_all(subscribers, evs):
    sent = {}
    loop = asyncio.get_running_loop()
    start = loop.time()
    for n, e in enumerate(evs, 2):  # the first (the meeting's start) went out before anyone watched
        await asyncio.sleep(max(0.0, start + n * INTERVAL - loop.time()))
        sent[n] = time.time()
        for s in subscribers:
            await s(e)
    return sent

async def main():
    from aiohttp import web
    if MODE == "sabha":
        daemon, task, board, token, page = await sabha()
        port = daemon.port
        subscribers = lambda: list(board.parts.room.subscribers)
        watchers = lambda: daemon.web.feed.watchers("m-bench-live")
    else:
        queues = set()
        async def stream(request):
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
            await resp.prepare(request)
            q = asyncio.Queue(256)
            queues.add(q)
            try:
                while True:
                    seq, data = await q.get()
                    await resp.write(f"id: {seq}\ndata: {data}\n\n".encode())
                    if seq >= COUNT:
                        return resp
            finally:
                queues.discard(q)
        payload = "x" * 2400  # about the size of Sabha's event (a statement, its stance row, the phase)
        async def publish(e, n=[0]):
            n[0] += 1
            data = json.dumps({"seq": n[0], "html": payload})
            for q in list(queues):
                q.put_nowait((n[0], data))
        app = web.Application()
        app.router.add_get("/ui/meetings/m-bench-live/events", stream)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        token, page = "", ""
        subscribers = lambda: [publish]
        watchers = lambda: len(queues)
    live = events("m-bench-live")
    for s in subscribers():  # the meeting has started before the pages open
        await s(live[0])
    print(json.dumps({"port": port, "token": token, "page": page}), flush=True)
    want = int(await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline))
    while watchers() < want:
        await asyncio.sleep(0.01)
    sent = await emit_all(subscribers(), live[1:])
    print(json.dumps({"sent": sent}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    if MODE == "sabha":
        daemon.request_stop()
        await task
        await board.close()

asyncio.run(main())
'''


def pct(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _watch(http: ClientSession, url: str, headers: dict[str, str], count: int) -> dict[int, float]:
    got: dict[int, float] = {}
    async with http.get(url, headers=headers, timeout=ClientTimeout(total=300)) as resp:
        assert resp.status == 200, resp.status
        async for raw in resp.content:
            if raw.startswith(b"id: "):
                seq = int(raw[4:])
                got[seq] = time.time()
                if seq >= count:
                    break
    return got


async def sign_in(http: ClientSession, base: str, token: str) -> dict[str, str]:
    """The owner's browser: redeem the login link (``POST /ui/login``), keep the session cookie it sets."""
    async with http.post(f"{base}/ui/login", data={"token": token}, allow_redirects=False) as resp:
        assert resp.status == 303, f"login answered {resp.status}: {(await resp.text())[:300]}"
        cookie = resp.headers["Set-Cookie"].split(";", 1)[0]
    return {"Cookie": cookie, "Accept": "text/html"}


async def one_round(mode: str, args: argparse.Namespace) -> tuple[list[float], list[float]]:
    """(SSE delays in ms, page TTFBs in ms) of one round against ``mode``."""
    with tempfile.TemporaryDirectory() as root:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
        env["PYTHONPATH"] = str(REPO)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", SERVER, mode, root, str(args.events), str(args.interval), env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=None)
        assert proc.stdout is not None and proc.stdin is not None
        hello = json.loads(await proc.stdout.readline())
        base = f"http://127.0.0.1:{hello['port']}"
        ttfb: list[float] = []
        async with ClientSession(connector=TCPConnector(limit=0)) as http:
            headers = await sign_in(http, base, hello["token"]) if hello["token"] else {}
            if hello["page"]:
                for _ in range(args.pages):
                    start = time.perf_counter()
                    async with http.get(f"{base}/ui/meetings/{hello['page']}", headers=headers) as resp:
                        assert resp.status == 200, f"the meeting page answered {resp.status}"
                        await resp.content.readany()
                        ttfb.append((time.perf_counter() - start) * 1000)
                        await resp.read()
            url = f"{base}/ui/meetings/m-bench-live/events"
            watchers = [asyncio.create_task(_watch(http, url, headers, args.events)) for _ in range(args.clients)]
            proc.stdin.write(f"{args.clients}\n".encode())
            await proc.stdin.drain()
            received = await asyncio.gather(*watchers)
        sent = {int(k): v for k, v in json.loads(await proc.stdout.readline())["sent"].items()}
        proc.stdin.write(b"done\n")
        await proc.stdin.drain()
        await proc.wait()
    delays = [(got[seq] - sent[seq]) * 1000 for got in received for seq in got if seq in sent]
    expected = args.clients * (args.events - 1)  # every event after the start, to every client
    assert len(delays) == expected, f"{len(delays)} deliveries, not {expected}"
    return delays, ttfb


async def run(args: argparse.Namespace) -> None:
    rows: dict[str, list[tuple[float, float]]] = {"bare": [], "sabha": []}
    pages: list[tuple[float, float]] = []
    for _ in range(args.rounds):
        for mode in ("bare", "sabha"):
            delays, ttfb = await one_round(mode, args)
            rows[mode].append((pct(delays, 0.5), pct(delays, 0.99)))
            if ttfb:
                pages.append((pct(ttfb, 0.5), pct(ttfb, 0.99)))
    med = {m: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for m, v in rows.items()}
    print(f"web benchmark: {args.clients} clients watching one meeting, {args.events} events "
          f"{args.interval * 1000:g} ms apart, medians of {args.rounds} rounds")
    print(f"live meeting page TTFB ({args.pages} requests, 40 events on it): "
          f"p50 {statistics.median(p[0] for p in pages):.2f} ms, p99 {statistics.median(p[1] for p in pages):.2f} ms")
    for mode in ("bare", "sabha"):
        print(f"SSE delay emitted -> received, {mode:5}: p50 {med[mode][0]:.2f} ms, p99 {med[mode][1]:.2f} ms")
    print(f"p99 ratio sabha / bare: {med['sabha'][1] / med['bare'][1]:.2f} (goal <= 2)")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; prints figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between events")
    parser.add_argument("--pages", type=int, default=200, help="page requests for the TTFB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="5 clients, 20 events, 10 pages, one round (a test runs every benchmark so)")
    args = parser.parse_args(argv)
    if args.quick:
        args.clients, args.events, args.pages, args.rounds = 5, 20, 10, 1
    asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
