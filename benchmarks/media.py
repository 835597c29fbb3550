"""Media: what a voice note costs beyond its transcription and its answer, and memory under big files.

Runs a real ``sabha run`` (WhatsApp channel only) on a fake Graph API that serves the media and a
fake OpenAI-compatible server that transcribes (fixed delay) and answers chats (fixed delay).

1. **Voice-note turn latency.** ``--notes`` voice notes, one after the other (each from its own
   user), from the signed webhook to the answer reaching the fake Graph API; against, in the same
   run, the same transcription + chat calls made directly with the OpenAI SDK to the same fakes
   (the floor: what the providers take). Prints medians and Sabha's overhead (goal: <= 10 % of
   the floor + 50 ms: receipt, download, store, prompt and delivery cost little).
2. **Memory under big documents.** Two fresh daemons: 20 conversations each send one document
   of 1 MB, then (another daemon) of ``--big-mb`` MB, all at once; the daemon's peak resident
   memory (``VmHWM``) after start and after every document is answered. Goal: the growth does not
   follow file size (the bytes are streamed to disk, never held whole).

Usage: ``.venv/bin/python benchmarks/media.py [--notes 20] [--transcribe 0.3] [--chat 0.3] [--big-mb 16]``.
It prints figures; it does not assert on time.
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
from typing import Any

from aiohttp import ClientSession, ClientTimeout, web

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from webhook import spawn  # noqa: E402

from board.workspace.paths import copy_default_workspace  # noqa: E402
from tests.support.fakes.graph_api import FakeGraphAPI  # noqa: E402
from tests.support.fakes.openai_api import FakeOpenAI, fake_ogg_opus  # noqa: E402
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, new_wamid, notification, sign  # noqa: E402

__all__ = ["main"]

ANSWER = "Noted: here is what the board thinks."


class TimedOpenAI(FakeOpenAI):
    """The fake OpenAI server with a fixed chat latency (transcriptions: ``transcribe_delay``)."""

    def __init__(self, chat_delay: float) -> None:
        super().__init__(default_text=ANSWER)
        self.chat_delay = chat_delay

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._slow_chat)
        super().routes(app)

    async def _slow_chat(self, request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(self.chat_delay)
        return await self._handle(request)


def write_config(root: Path, graph: FakeGraphAPI, model: FakeOpenAI, users: list[str]) -> dict[str, str]:
    """A fresh workspace and ``sabha.yaml`` under ``root``; the environment to run the daemon in."""
    import os

    copy_default_workspace(root / "workspace")
    numbers = ", ".join(f'"{u}"' for u in users)
    (root / "sabha.yaml").write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "server: {host: 127.0.0.1, port: 0}",
        "inbox: {max_concurrent_turns: 20}", "board: {slow_notice_s: 0}",
        "llm:", "  model: openai:gpt-4o-mini", "  retry: {retries: 0}", "  providers:", "    openai:",
        "      api_key: ${OPENAI_API_KEY}", f"      base_url: {model.base_url}",
        "media:", "  transcribe_model: openai:gpt-4o-mini-transcribe",
        "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
        "  app_secret: ${WHATSAPP_APP_SECRET}", "  verify_token: ${WHATSAPP_VERIFY_TOKEN}",
        f"  graph_base_url: {graph.base_url}", f"  allowed_numbers: [{numbers}]"]) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(WHATSAPP_ACCESS_TOKEN=graph.token, WHATSAPP_APP_SECRET=APP_SECRET, WHATSAPP_VERIFY_TOKEN=VERIFY_TOKEN,
               OPENAI_API_KEY="bench-key", PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    return env


def media_message(user: str, kind: str, media_id: str, mime: str, **extra: Any) -> dict[str, Any]:
    """A WhatsApp media message as Meta sends it (``audio`` with ``voice: true`` is a voice note)."""
    return {"from": user, "id": new_wamid(), "timestamp": str(int(time.time())), "type": kind,
            kind: {"id": media_id, "mime_type": mime, **extra}}


async def post(http: ClientSession, url: str, message: dict[str, Any]) -> None:
    body = json.dumps(notification([message])).encode()
    headers = {"Content-Type": "application/json", "X-Hub-Signature-256": sign(body)}
    async with http.post(url, data=body, headers=headers) as resp:
        await resp.read()
        if resp.status != 200:
            raise RuntimeError(f"the webhook answered {resp.status}")


async def answered(graph: FakeGraphAPI, user: str, timeout: float = 120.0) -> None:
    """Wait until a text answer reached ``user``."""
    deadline = time.perf_counter() + timeout
    while not any(ANSWER in text for text in graph.texts_to(user)):
        if time.perf_counter() > deadline:
            raise RuntimeError(f"no answer to {user} after {timeout:.0f} s")
        await asyncio.sleep(0.005)


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def floor(model: FakeOpenAI, audio: bytes, notes: int) -> list[float]:
    """Transcription + chat through the SDK straight to the fakes, ``notes`` times (seconds each)."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(api_key="bench-key", base_url=model.base_url)
    times = []
    try:
        for i in range(notes + 1):
            start = time.perf_counter()
            heard = await client.audio.transcriptions.create(model="gpt-4o-mini-transcribe",
                                                             file=("voice.ogg", audio, "audio/ogg"))
            await client.chat.completions.create(model="gpt-4o-mini", max_tokens=64,
                                                 messages=[{"role": "user", "content": heard.text}])
            if i:  # the first call warms the client up
                times.append(time.perf_counter() - start)
    finally:
        await client.close()
    return times


async def voice_latency(args: argparse.Namespace) -> None:
    root = Path(tempfile.mkdtemp(prefix="sabha-media-bench-"))
    users = [f"1555{n:07d}" for n in range(args.notes + 1)]
    async with FakeGraphAPI() as graph, TimedOpenAI(args.chat) as model:
        model.transcribe_delay = args.transcribe
        audio = fake_ogg_opus(7.0, b"\x01" * 20_000)
        env = write_config(root, graph, model, users)
        base = await floor(model, audio, args.notes)
        proc, port = await spawn([sys.executable, "-m", "bot.cli", "run", "--config", str(root / "sabha.yaml")],
                                 env, root)
        url = f"http://127.0.0.1:{port}/whatsapp/webhook"
        sabha: list[float] = []
        try:
            async with ClientSession(timeout=ClientTimeout(total=60)) as http:
                for i, user in enumerate(users):
                    note = fake_ogg_opus(7.0, i.to_bytes(4, "big") * 5_000)  # each its own (no cached transcript)
                    model.script_transcript(note, f"Should we raise prices next quarter? ({i})", seconds=7.0)
                    media_id = graph.add_media(note, "audio/ogg")
                    start = time.perf_counter()
                    await post(http, url, media_message(user, "audio", media_id, "audio/ogg; codecs=opus",
                                                        voice=True, sha256=graph.media[media_id].sha256))
                    await answered(graph, user)
                    if i:  # the first note warms the daemon up
                        sabha.append(time.perf_counter() - start)
        finally:
            proc.terminate()
            await proc.wait()
    floor_p50, sabha_p50 = statistics.median(base), statistics.median(sabha)
    goal = floor_p50 * 1.10 + 0.050
    print(f"voice notes: {len(sabha)} one after the other; fake transcription {args.transcribe * 1000:.0f} ms, "
          f"fake chat {args.chat * 1000:.0f} ms")
    print(f"  floor (SDK straight to the fakes: transcribe + chat)  median {floor_p50 * 1000:7.1f} ms  "
          f"min {min(base) * 1000:7.1f}  max {max(base) * 1000:7.1f}")
    print(f"  sabha (webhook -> answer delivered)                  median {sabha_p50 * 1000:7.1f} ms  "
          f"min {min(sabha) * 1000:7.1f}  max {max(sabha) * 1000:7.1f}")
    print(f"  overhead {1000 * (sabha_p50 - floor_p50):.1f} ms = {100 * (sabha_p50 / floor_p50 - 1):.1f} % "
          f"(ratio {sabha_p50 / floor_p50:.3f}); goal <= {goal * 1000:.1f} ms total (10 % + 50 ms): "
          f"{'met' if sabha_p50 <= goal else 'NOT met'}")


async def documents_memory(size_mb: float, conversations: int) -> tuple[float, float, float]:
    """(peak RSS after start, after ``conversations`` documents of ``size_mb`` each are answered, seconds)."""
    root = Path(tempfile.mkdtemp(prefix="sabha-media-rss-"))
    users = [f"1556{n:07d}" for n in range(conversations)]
    line = b"region,month,revenue,cost\nnorth,2026-10,120000,80000\n"
    data = (line * (int(size_mb * 1024 * 1024) // len(line) + 1))[: int(size_mb * 1024 * 1024)]
    async with FakeGraphAPI() as graph, TimedOpenAI(0.05) as model:
        env = write_config(root, graph, model, users)
        proc, port = await spawn([sys.executable, "-m", "bot.cli", "run", "--config", str(root / "sabha.yaml")],
                                 env, root)
        url = f"http://127.0.0.1:{port}/whatsapp/webhook"
        try:
            await asyncio.sleep(1.0)
            idle = peak_rss_mb(proc.pid)
            start = time.perf_counter()
            async with ClientSession(timeout=ClientTimeout(total=120)) as http:
                ids = [graph.add_media(data, "text/csv", chunk=256 * 1024) for _ in users]
                await asyncio.gather(*(post(http, url, media_message(u, "document", m, "text/csv",
                                                                     filename=f"sales-{n}.csv",
                                                                     sha256=graph.media[m].sha256))
                                       for n, (u, m) in enumerate(zip(users, ids, strict=True))))
                await asyncio.gather(*(answered(graph, u, 300) for u in users))
            took = time.perf_counter() - start
            return idle, peak_rss_mb(proc.pid), took
        finally:
            proc.terminate()
            await proc.wait()


async def main(args: argparse.Namespace) -> None:
    await voice_latency(args)
    small = await documents_memory(1, args.conversations)
    big = await documents_memory(args.big_mb, args.conversations)
    print(f"documents: {args.conversations} conversations at once, each one CSV document (peak RSS of the daemon)")
    for label, (idle, peak, took) in ((" 1 MB each", small), (f"{args.big_mb:2.0f} MB each", big)):
        print(f"  {label}: after start {idle:6.1f} MB, peak {peak:6.1f} MB (+{peak - idle:5.1f} MB), "
              f"all answered in {took:5.1f} s")
    growth_small, growth_big = small[1] - small[0], big[1] - big[0]
    print(f"  files {args.big_mb:.0f}x larger ({args.conversations * args.big_mb:.0f} MB in all): memory growth "
          f"{growth_big:.1f} MB vs {growth_small:.1f} MB (ratio {growth_big / max(growth_small, 0.1):.2f}; "
          f"buffered whole it would grow by ~{args.conversations * (args.big_mb - 1):.0f} MB more)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=20)
    parser.add_argument("--transcribe", type=float, default=0.3, help="fake transcription latency (s)")
    parser.add_argument("--chat", type=float, default=0.3, help="fake chat latency (s)")
    parser.add_argument("--big-mb", type=float, default=16)
    parser.add_argument("--conversations", type=int, default=20)
    asyncio.run(main(parser.parse_args()))
