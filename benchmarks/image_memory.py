"""Pictures and the daemon's memory: idle, peak and settled RSS over many large PNGs.

Runs a real ``sabha run`` (WhatsApp channel only, the offline model) on the fake Graph API,
which serves ``--pictures`` PNGs of 7000x7000 RGBA (about 190 KB each: one colour compresses
well; each differs by a text chunk, so none is taken from the store), sent by ``--senders``
users at once (several conversations read pictures at the same time). Prints the daemon's
resident memory (``/proc/<pid>/status``): ``VmRSS`` once it is idle, ``VmHWM`` (its peak) once
every picture is answered, and ``VmRSS`` again ``--settle`` seconds later.

Goal (issue 5): settled within 50 MB of idle, peak under 400 MB.

Usage: ``.venv/bin/python benchmarks/image_memory.py [--pictures 32] [--senders 8] [--side 7000]``;
``--repo PATH`` runs the daemon from another checkout (e.g. main's, to compare before and after).
It prints figures; it does not assert on them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, ClientTimeout

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from webhook import spawn  # noqa: E402

from board.workspace.paths import copy_default_workspace  # noqa: E402
from tests.support.fakes.graph_api import FakeGraphAPI  # noqa: E402
from tests.support.media_memory import big_png, numbered, rss  # noqa: E402
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, new_wamid, notification, sign  # noqa: E402

__all__ = ["main"]


def write_config(root: Path, graph: FakeGraphAPI, users: list[str], repo: Path) -> dict[str, str]:
    """A fresh workspace and ``sabha.yaml`` (WhatsApp on the fake, the offline model); the environment."""
    copy_default_workspace(root / "workspace")
    numbers = ", ".join(f'"{u}"' for u in users)
    (root / "sabha.yaml").write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "server: {host: 127.0.0.1, port: 0}",
        "board: {slow_notice_s: 0}",
        "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
        "  app_secret: ${WHATSAPP_APP_SECRET}", "  verify_token: ${WHATSAPP_VERIFY_TOKEN}",
        f"  graph_base_url: {graph.base_url}", f"  allowed_numbers: [{numbers}]"]) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(WHATSAPP_ACCESS_TOKEN=graph.token, WHATSAPP_APP_SECRET=APP_SECRET, WHATSAPP_VERIFY_TOKEN=VERIFY_TOKEN,
               PYTHONPATH=str(repo), PYTHONUNBUFFERED="1")
    return env


def picture_message(user: str, media_id: str, n: int) -> dict[str, Any]:
    """A WhatsApp image message as Meta sends it, with a caption naming it."""
    return {"from": user, "id": new_wamid(), "timestamp": str(int(time.time())), "type": "image",
            "image": {"id": media_id, "mime_type": "image/png", "caption": f"PIC{n:03d} what is this?"}}


async def post(http: ClientSession, url: str, message: dict[str, Any]) -> None:
    body = json.dumps(notification([message])).encode()
    headers = {"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)}
    async with http.post(url, data=body, headers=headers) as resp:
        await resp.read()
        if resp.status != 200:
            raise RuntimeError(f"the webhook answered {resp.status}")


async def all_answered(graph: FakeGraphAPI, wamids: list[str], timeout: float) -> None:
    """Wait until every one of ``wamids`` got its answer."""
    deadline = time.perf_counter() + timeout
    while not all(any(s.context_id == w for s in graph.sent) for w in wamids):
        if time.perf_counter() > deadline:
            done = sum(any(s.context_id == w for s in graph.sent) for w in wamids)
            raise RuntimeError(f"only {done} of {len(wamids)} pictures answered after {timeout:.0f} s")
        await asyncio.sleep(0.05)


async def main(args: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="sabha-image-rss-"))
    users = [f"1557{n:07d}" for n in range(args.senders)]
    png = big_png(args.side)
    async with FakeGraphAPI() as graph:
        env = write_config(root, graph, users, Path(args.repo))
        proc, port = await spawn([sys.executable, "-m", "bot.cli", "run", "--config", str(root / "sabha.yaml")],
                                 env, root)
        url = f"http://127.0.0.1:{port}/whatsapp/webhook"
        try:
            await asyncio.sleep(args.settle)
            idle = rss(proc.pid)
            start = time.perf_counter()
            async with ClientSession(timeout=ClientTimeout(total=120)) as http:
                messages = [picture_message(users[n % len(users)], graph.add_media(numbered(png, n), "image/png"), n)
                            for n in range(args.pictures)]
                await asyncio.gather(*(post(http, url, m) for m in messages))
                await all_answered(graph, [m["id"] for m in messages], args.timeout)
            took = time.perf_counter() - start
            done = rss(proc.pid)
            await asyncio.sleep(args.settle)
            settled = rss(proc.pid)
            sample = next(s.body for s in graph.sent if s.context_id == messages[0]["id"])
        finally:
            proc.terminate()
            await proc.wait()
    print(f"pictures: {args.pictures} PNGs of {args.side}x{args.side} RGBA ({len(png) / 1024:.0f} KB each, "
          f"{args.side * args.side * 4 / 2**20:.0f} MB decoded), from {args.senders} senders at once; daemon from "
          f"{args.repo}")
    print(f"  idle RSS     {idle['VmRSS']:7.1f} MB")
    print(f"  peak RSS     {done['VmHWM']:7.1f} MB  (+{done['VmHWM'] - idle['VmRSS']:.1f} MB over idle; goal < 400 MB)")
    print(f"  answered     {done['VmRSS']:7.1f} MB  (all {args.pictures} answered in {took:.1f} s)")
    print(f"  settled RSS  {settled['VmRSS']:7.1f} MB  (+{settled['VmRSS'] - idle['VmRSS']:.1f} MB over idle, "
          f"{args.settle:g} s later; goal within 50 MB)")
    print(f"  first answer: {' '.join(sample.split())[:200]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pictures", type=int, default=32)
    parser.add_argument("--senders", type=int, default=8)
    parser.add_argument("--side", type=int, default=7000)
    parser.add_argument("--settle", type=float, default=5.0, help="seconds idle before and after (s)")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--repo", default=str(REPO), help="the checkout the daemon runs from")
    asyncio.run(main(parser.parse_args()))
