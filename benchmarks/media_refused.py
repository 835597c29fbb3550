"""Files Sabha will not read: what they leave on disk, and how long they take to be answered.

Runs a real ``sabha run`` (WhatsApp in public mode, the offline model) on the fake Graph API:
``--strangers`` strangers each send ``--each`` files no reader takes (a .zip, a program, a video
sent as a file, a HEIC picture, in turn) of ``--mb`` MB, all at once. Prints how many the fake
served (downloads), what ``<data_dir>/media`` holds once every one is answered, and the time.

Issue 6 saw 24 such files from 6 strangers leave 97 MB. Goal: nothing downloaded, nothing kept.

Usage: ``.venv/bin/python benchmarks/media_refused.py [--strangers 6] [--each 4] [--mb 4]``;
``--repo PATH`` runs the daemon from another checkout (e.g. main's, to compare).
It prints figures; it does not assert on them.
"""

from __future__ import annotations

import argparse
import asyncio
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

from image_memory import all_answered, post  # noqa: E402
from webhook import spawn  # noqa: E402

from board.workspace.paths import copy_default_workspace  # noqa: E402
from tests.support.fakes.graph_api import FakeGraphAPI  # noqa: E402
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, new_wamid  # noqa: E402

__all__ = ["main"]

#: (file name, declared type, message type, first bytes) of files no reader takes.
KINDS = [("photos.zip", "application/zip", "document", b"PK\x03\x04"),
         ("setup.exe", "application/x-msdownload", "document", b"MZ"),
         ("clip.mp4", "video/mp4", "document", b"\x00\x00\x00\x18ftypmp42"),
         ("IMG_0001.HEIC", "image/heic", "image", b"\x00\x00\x00\x18ftypheic")]


def write_config(root: Path, graph: FakeGraphAPI, repo: Path) -> dict[str, str]:
    """A fresh workspace and ``sabha.yaml`` (WhatsApp public mode on the fake, the offline model)."""
    copy_default_workspace(root / "workspace")
    (root / "sabha.yaml").write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "server: {host: 127.0.0.1, port: 0}",
        "board: {slow_notice_s: 0}",
        "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
        "  app_secret: ${WHATSAPP_APP_SECRET}", "  verify_token: ${WHATSAPP_VERIFY_TOKEN}",
        f"  graph_base_url: {graph.base_url}", '  allowed_numbers: ["15550001111"]', "  access: public",
        "  public_rate_per_minute: 600"]) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(WHATSAPP_ACCESS_TOKEN=graph.token, WHATSAPP_APP_SECRET=APP_SECRET, WHATSAPP_VERIFY_TOKEN=VERIFY_TOKEN,
               PYTHONPATH=str(repo), PYTHONUNBUFFERED="1")
    return env


def file_message(user: str, media_id: str, n: int) -> dict[str, Any]:
    """The ``n``-th refused kind as Meta sends it."""
    name, mime, kind, _ = KINDS[n % len(KINDS)]
    body: dict[str, Any] = {"id": media_id, "mime_type": mime, "caption": f"FILE{n:03d} what about this?"}
    if kind == "document":
        body["filename"] = name
    return {"from": user, "id": new_wamid(), "timestamp": str(int(time.time())), "type": kind, kind: body}


def stored(root: Path) -> tuple[int, int]:
    """(files, bytes) under the media store."""
    files = [p for p in (root / "sessions" / "media").rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


async def main(args: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="sabha-refused-"))
    users = [f"1558{n:07d}" for n in range(args.strangers)]
    size = int(args.mb * 1024 * 1024)
    async with FakeGraphAPI() as graph:
        env = write_config(root, graph, Path(args.repo))
        proc, port = await spawn([sys.executable, "-m", "bot.cli", "run", "--config", str(root / "sabha.yaml")],
                                 env, root)
        url = f"http://127.0.0.1:{port}/whatsapp/webhook"
        try:
            messages, ids = [], []
            for n in range(args.strangers * args.each):
                head = KINDS[n % len(KINDS)][3]
                ids.append(graph.add_media(head + os.urandom(size - len(head)), KINDS[n % len(KINDS)][1]))
                messages.append(file_message(users[n % len(users)], ids[-1], n))
            start = time.perf_counter()
            async with ClientSession(timeout=ClientTimeout(total=120)) as http:
                await asyncio.gather(*(post(http, url, m) for m in messages))
                await all_answered(graph, [m["id"] for m in messages], args.timeout)
            took = time.perf_counter() - start
            files, kept = stored(root)
            sample = next(s.body for s in graph.sent if s.context_id == messages[0]["id"])
        finally:
            proc.terminate()
            await proc.wait()
    served = sum(graph.media[i].served for i in ids)
    print(f"refused files: {len(messages)} of {args.mb:g} MB ({', '.join(k[0] for k in KINDS)}) from "
          f"{args.strangers} strangers at once; daemon from {args.repo}")
    print(f"  downloaded   {sum(graph.media[i].downloads for i in ids)} files, {served / 2**20:.1f} MB")
    print(f"  kept         {files} files, {kept / 2**20:.1f} MB in the media store")
    print(f"  answered     all {len(messages)} in {took:.1f} s")
    print(f"  first answer: {' '.join(sample.split())[:160]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strangers", type=int, default=6)
    parser.add_argument("--each", type=int, default=4)
    parser.add_argument("--mb", type=float, default=4.0)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--repo", default=str(REPO), help="the checkout the daemon runs from")
    asyncio.run(main(parser.parse_args()))
