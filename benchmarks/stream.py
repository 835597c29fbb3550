"""Streamed answers: how soon the first words are visible, and how many edits an answer costs.

Prints medians; asserts nothing about time. Run: python benchmarks/stream.py [--rounds 5] [--quick]

A fake OpenAI model streams a 26-word answer, one word every CHUNK_DELAY seconds
(``llm.providers.openai.stream: true``); the moment it writes its first word is the model's
time to first token. Against that:

1. Terminal: a piped ``sabha chat`` (a real process); the first answer bytes on its stdout.
2. Telegram: a real ``sabha run`` against the fake Bot API; the draft's ``sendMessage`` arriving
   at the fake, and the number of ``editMessageText`` per answer (draft edits + the final one)
   with the default ``telegram.stream_edit_interval_s`` (1.5 s).

Goal: first visible word <= model's first token + 100 ms. Only whole words are shown (a secret is
never shown by halves), so the first word is visible when the second begins: one CHUNK_DELAY is
part of the figure, as it would be with a real model (tens of ms between tokens).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiohttp import web

from tests.bot.channels.telegram.test_stream_telegram import streaming_config
from tests.bot.cli.test_stream_terminal import chat_config, piped_chat
from tests.support.daemon import SabhaProcess
from tests.support.fakes.local_server import Answer
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, TOKEN

ANSWER = ("Pricing is a promise about value, so start from the outcome your customer buys, "
          "then test three price points with ten real conversations before you print a number anywhere.")
CHUNK_DELAY = 0.03
ROUNDS = 5


class TimedModel(FakeOpenAI):
    """The fake model, noting when it writes the first word of each streamed answer."""

    def __init__(self) -> None:
        super().__init__()
        self.first_words: list[float] = []

    async def write_stream(self, resp: web.StreamResponse, answer: Answer) -> None:
        write = resp.write
        noted = False

        async def timed(data: bytes) -> None:
            nonlocal noted
            await write(data)
            if not noted and b'"content": "' in data and b'"content": ""' not in data:
                noted = True
                self.first_words.append(time.monotonic())

        resp.write = timed  # type: ignore[method-assign]
        await super().write_stream(resp, answer)


async def terminal(root: Path, rounds: int) -> list[float]:
    """Milliseconds from the model's first word to the first answer bytes on the chat's stdout."""
    delays: list[float] = []
    async with TimedModel() as model:
        config = chat_config(root, model)
        for _ in range(rounds):
            model.script_text(ANSWER, chunk_delay=CHUNK_DELAY)
            reads = await piped_chat(config, "how do I price my product?\n")
            shown = next(t for t, piece in reads if b"Pricing" in piece)
            delays.append((shown - model.first_words[-1]) * 1000)
    return delays


async def telegram(root: Path, rounds: int) -> tuple[list[float], list[int]]:
    """Milliseconds from the model's first word to the draft's sendMessage; edits per answer."""
    delays: list[float] = []
    edits: list[int] = []
    async with TimedModel() as model, FakeTelegramAPI(token=TOKEN) as fake:
        sabha = SabhaProcess(streaming_config(root, fake, model))
        try:
            await sabha.start()
            for n in range(rounds):
                model.script_text(ANSWER, chunk_delay=CHUNK_DELAY * 10)  # about 8 s: several draft edits
                model.script_text(f"MARKER {n}")
                fake.clear_records()
                fake.push_text(OWNER, OWNER, f"how do I price my product? ({n})")
                await fake.wait_for_messages(1, timeout=30)
                sent_at = fake.call_times[next(i for i, (m, _) in enumerate(fake.calls) if m == "sendMessage")]
                delays.append((sent_at - model.first_words[-1]) * 1000)
                fake.push_text(OWNER, OWNER, f"marker {n}")
                # A streamed answer is a draft (sendMessage) finished by an edit: the marker's words are in
                # either, whichever the draft had time to show.
                await fake.wait_until(lambda n=n: any(f"MARKER {n}" in m.text
                                                      for m in (*fake.sent_messages, *fake.edited_messages)),
                                      "the marker", timeout=60)
                edits.append(sum(1 for m, _ in fake.calls if m == "editMessageText"))
        finally:
            await sabha.close()
    return delays, edits


def show(name: str, values: list[float]) -> None:
    print(f"{name}: median {statistics.median(values):.0f} ms, min {min(values):.0f}, max {max(values):.0f} "
          f"(n={len(values)})")


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"answers per channel (default {ROUNDS})")
    parser.add_argument("--quick", action="store_true", help="one answer per channel (a test runs every benchmark so)")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
    os.environ.pop("SABHA_CONFIG", None)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "t").mkdir()
        (root / "g").mkdir()
        term = await terminal(root / "t", rounds)
        tg, edits = await telegram(root / "g", rounds)
    words = len(ANSWER.split())
    print(f"model: {words} words, one every {CHUNK_DELAY * 1000:.0f} ms (terminal) / {CHUNK_DELAY * 10000:.0f} ms "
          "(Telegram); goal: first visible word <= model's first token + 100 ms")
    show("terminal (piped sabha chat): first word after the model's first token", term)
    show("telegram: draft sendMessage after the model's first token", tg)
    answer_s = words * CHUNK_DELAY * 10
    print(f"telegram: edits per answer {edits} (median {statistics.median(edits):.0f}) for a {answer_s:.1f} s "
          f"answer of {words} chunks (interval 1.5 s + the final edit)")


if __name__ == "__main__":
    asyncio.run(main())
