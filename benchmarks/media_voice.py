"""Voice-note turn latency against the latency of the services it waits for (issue 24).

Prints medians; asserts nothing about time. Run: python benchmarks/media_voice.py [--turns 15]
[--transcribe-latency 0.3] [--model-latency 0.4]

One process: the fake OpenAI server (tests/support/fakes/openai_api.py) answers a transcription after
``--transcribe-latency`` and a chat completion after ``--model-latency``. Measured in the same
run, alternating:

* **services**: one transcription plus one chat completion, called back to back through the
  official SDK alone, i.e. what a voice-note turn cannot avoid;
* **turn**: a voice note (a different note each time: no transcript cache) handed to a real
  intake (tests/support/voice.py: the durable inbox, the lane, the media service fetching
  the note into the blob store, transcription, the board's turn, the reply stored and
  delivered), from ``receive`` to the courier's delivery.

Overhead = median(turn) - median(services); the goal is overhead <= 10 % of the services
+ 50 ms. The channel's own download of the note (WhatsApp/Telegram) is not in it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import openai

from board.workspace.paths import copy_default_workspace
from tests.support.fakes.openai_api import FakeOpenAI, fake_ogg_opus
from tests.support.voice import rig


async def services_once(client: openai.AsyncOpenAI, fake: FakeOpenAI, note: bytes, model_latency: float) -> float:
    """One transcription and one chat completion, back to back, through the SDK alone."""
    fake.script_delay(model_latency, "A short answer.")
    started = time.perf_counter()
    await client.audio.transcriptions.create(model="gpt-4o-mini-transcribe", file=("voice.ogg", note, "audio/ogg"))
    await client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}])
    return time.perf_counter() - started


async def main(turns: int, transcribe_latency: float, model_latency: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace = root / "workspace"
        copy_default_workspace(workspace)
        async with FakeOpenAI() as fake:
            fake.transcribe_delay = transcribe_latency
            client = openai.AsyncOpenAI(api_key="sk-test", base_url=fake.base_url, max_retries=0)
            async with rig(root, workspace, fake, transcribe_model="openai:gpt-4o-mini-transcribe") as r:
                fake.script_delay(model_latency, "warm-up")
                await r.ask("", note=fake_ogg_opus(5.0, b"warm-up"))
                await services_once(client, fake, b"warm-up", model_latency)
                service_times: list[float] = []
                turn_times: list[float] = []
                for n in range(turns):
                    note = fake_ogg_opus(6.0, f"note {n}".encode() * 200)
                    service_times.append(await services_once(client, fake, note, model_latency))
                    fake.script_delay(model_latency, "A short answer.")
                    started = time.perf_counter()
                    reply = await r.ask("", note=note)
                    turn_times.append(time.perf_counter() - started)
                    assert reply.kind == "answer" and "could not" not in reply.text, reply.text
            await client.close()
    services, turn = statistics.median(service_times), statistics.median(turn_times)
    overhead = turn - services
    goal = 0.10 * services + 0.050
    print(f"turns: {turns}; fake latencies: transcription {transcribe_latency * 1000:.0f} ms, "
          f"model {model_latency * 1000:.0f} ms")
    print(f"services (transcription + model), median: {services * 1000:.1f} ms")
    print(f"voice-note turn (intake receive -> delivered), median: {turn * 1000:.1f} ms "
          f"(p90 {sorted(turn_times)[int(0.9 * (turns - 1))] * 1000:.1f} ms)")
    print(f"overhead: {overhead * 1000:.1f} ms = {overhead / services * 100:.1f} % of the services "
          f"(goal <= 10 % + 50 ms = {goal * 1000:.1f} ms: {'met' if overhead <= goal else 'NOT met'})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=15)
    parser.add_argument("--transcribe-latency", type=float, default=0.3)
    parser.add_argument("--model-latency", type=float, default=0.4)
    args = parser.parse_args()
    asyncio.run(main(args.turns, args.transcribe_latency, args.model_latency))
