"""Per-turn overhead with the offline model, and soul reload latency.

Prints medians; asserts nothing about time. Run: python benchmarks/turn_overhead.py

1. Per-turn overhead for transcripts of 10, 10,000, 100,000 and 1,000,000 lines: a fresh board
   (as after a restart) answers TURNS turns in a session whose transcript already has
   that many lines. The 10-line session is the baseline; the goal is a flat ratio
   (each size / the 10-line case <= 1.2), i.e. a turn never pays for the file's size. The first
   (cold) turn, which fills the tail cache by reading the file backwards (and, for the
   long sessions, compacts the pre-seeded history once), is shown on its own.
2. Soul reload latency over EDITS edits: (a) file write -> the next turn answers with
   the new version (the turn-time stat check), (b) file write -> the watchfiles watcher
   has loaded it with no turn in between.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from board.app import Board, BoardSettings
from board.envelope import Envelope
from board.roles import RosterSpec
from board.workspace.paths import copy_default_workspace

SIZES = (10, 10_000, 100_000, 1_000_000)
TURNS = 40
REPEATS = 3
EDITS = 20


def envelope(text: str) -> Envelope:
    return Envelope(channel="console", text=text, sender="bench")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def prepare(root: Path, lines: int) -> BoardSettings:
    ws = root / "workspace"
    copy_default_workspace(ws)
    settings = BoardSettings(workspace=ws, data_dir=root / "sessions", roster=RosterSpec())
    async with await Board.open(settings) as board:
        transcript = await board.parts.sessions.open("board:finance", "finance")
        await asyncio.to_thread(_append_history, transcript.path, lines - 1)
    return settings


#: One history line, as ``Transcript.append`` writes it (checked against ``json`` below): formatted
#: directly, so the million-line file takes about a second to write.
_LINE = '{"type":"message","role":"%s","text":"earlier message %d ' + "lorem ipsum " * 8 + '"}\n'


def _append_history(path: Path, count: int) -> None:
    sample = _LINE % ("user", 0)
    assert json.loads(sample) == {"type": "message", "role": "user", "text": "earlier message 0 " + "lorem ipsum " * 8}
    with open(path, "ab") as fh:
        for start in range(0, count, 10_000):
            block = "".join(_LINE % ("user" if i % 2 == 0 else "assistant", i)
                            for i in range(start, min(count, start + 10_000)))
            fh.write(block.encode())
        fh.flush()
        os.fsync(fh.fileno())  # on disk before the turns: else the kernel writes it back during them


async def turn_overhead(lines: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = await prepare(Path(tmp), lines)
        size = next((Path(tmp) / "sessions").glob("*.jsonl")).stat().st_size
        async with await Board.open(settings) as board:  # a fresh process's view
            start = time.perf_counter()
            await board.handle(envelope("@finance cold turn"))
            cold = (time.perf_counter() - start) * 1000
            samples = []
            for i in range(TURNS):
                start = time.perf_counter()
                await board.handle(envelope(f"@finance question {i}"))
                samples.append((time.perf_counter() - start) * 1000)
        return statistics.median(samples), cold, size


async def reload_latency() -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = await prepare(Path(tmp), 10)
        soul = settings.workspace / "board" / "finance.soul.md"
        original = soul.read_text(encoding="utf-8")
        async with await Board.open(settings) as board:
            next_turn: list[float] = []
            for i in range(EDITS):
                start = time.perf_counter()
                edited = original.replace("You think in numbers", f"You think in numbers ({i})")
                soul.write_text(edited, encoding="utf-8")
                reply = await board.handle(envelope("@finance edited?"))
                next_turn.append((time.perf_counter() - start) * 1000)
                assert f"({i})" in reply.text, "the edit was not seen by the next turn"
            stop = asyncio.Event()
            watcher = asyncio.create_task(board.parts.souls.watch(stop))
            await asyncio.sleep(0.5)
            watched = board.parts.souls._files["finance"]
            watch_ms: list[float] = []
            for i in range(EDITS):
                marker = f"watched {i}"
                start = time.perf_counter()
                edited = original.replace("You think in numbers", f"You think in numbers ({marker})")
                soul.write_text(edited, encoding="utf-8")
                # no stat: only the watcher updates it
                while watched._value is None or marker not in watched._value.body:
                    await asyncio.sleep(0.001)
                    if time.perf_counter() - start > 10:
                        raise RuntimeError("watcher did not pick up the edit within 10 s")
                watch_ms.append((time.perf_counter() - start) * 1000)
                await asyncio.sleep(0.1)
            stop.set()
            await watcher
        return next_turn, watch_ms


async def main() -> None:
    print(f"turn overhead, offline model, {TURNS} turns per size after one cold turn, "
          f"sizes interleaved {REPEATS} times (median of the runs' medians)")
    print(f"{'lines':>8} {'file MB':>8} {'median ms':>10} {'cold ms':>9} {'ratio':>6}")
    runs: dict[int, list[tuple[float, float, int]]] = {lines: [] for lines in SIZES}
    await turn_overhead(SIZES[0])  # warm-up, not counted: the first board of the process pays its lazy imports
    for _ in range(REPEATS):  # interleaved, so a noisy moment on a shared machine hits every size
        for lines in SIZES:
            runs[lines].append(await turn_overhead(lines))
    medians = {}
    for lines in SIZES:
        median = statistics.median(r[0] for r in runs[lines])
        cold = statistics.median(r[1] for r in runs[lines])
        size = runs[lines][0][2]
        medians[lines] = median
        print(f"{lines:>8} {size / 1e6:>8.2f} {median:>10.3f} {cold:>9.3f} {median / medians[SIZES[0]]:>6.2f}")
    worst = max(medians[lines] / medians[SIZES[0]] for lines in SIZES)
    print(f"ratio largest/smallest (median): {medians[SIZES[-1]] / medians[SIZES[0]]:.2f}, worst size/smallest: "
          f"{worst:.2f}  (goal <= 1.2)")
    next_turn, watch = await reload_latency()
    print(f"soul reload, {EDITS} edits:")
    print(f"  write -> next turn answers with it:  median {statistics.median(next_turn):.2f} ms  "
          f"p95 {pct(next_turn, 0.95):.2f} ms")
    print(f"  write -> watcher loaded it (no turn): median {statistics.median(watch):.1f} ms  "
          f"p95 {pct(watch, 0.95):.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
