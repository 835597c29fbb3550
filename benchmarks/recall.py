"""What the board's memory costs as it grows: recall and the advisors' track records (issue 43's "Scale").

Fills a fresh state db (all of the board's migrations) in one transaction on SQLite's express connection with
``--meetings`` ended meetings, each with a decision and minutes of about ``--minutes-chars`` characters (the
decision index is kept by its triggers as they end), ``--predictions`` predictions over five advisors (about
two thirds resolved), and ``--lines`` transcript lines as the recall indexer leaves them in ``recall_passages``
(conversation lines of 200 people, the owner and 20 groups; words drawn Zipf-like from a 5,000-word vocabulary
plus the board's topic words). Then times, ``--runs`` times each:

* ``decision recall``: what a meeting's framing recalls before its chair speaks
  (:func:`board.decisions.recall.search.related_decisions` and :func:`recall_block`);
* ``recall``: :class:`board.recall.service.RecallService` over passages and decisions, for a member (their own
  conversations and the board's record) and for the owner at the terminal (everything);
* ``track records``: the chair's track records as this checkout reads them (stored tallies,
  :mod:`board.decisions.predictions.tally`, when it has them) and, beside them in the same run, as main read them
  (every prediction read and scored in Python): the ratio is the paired before/after.

Prints medians and p95 of wall time (unreliable on a busy machine) and the median CPU time of this process per
read (``time.process_time``: every thread of the process, the db's too). Asserts nothing on time.

Sizes: ``--size small`` (5,000 meetings, 5,000 predictions, 100,000 lines: the figures of the last round),
``--size large`` (10,000 meetings, 50,000 predictions, 1,000,000 lines: issue 43's goal, recall <= 50 ms median,
track records <= 20 ms), ``--quick`` (tiny: the test that keeps this script running); any count can be given.

``--db PATH`` keeps the filled db at PATH (the large fill takes a quarter of an hour under load), or, when PATH
exists, measures it as it is (opened with this checkout's migrations: main's filled db read by a later checkout
measures that checkout's migrations too, e.g. migration 1490's re-index, timed and printed); copy the file first
to keep the original for the other checkout.

``--baseline PATH`` then measures another checkout's code (``/work/main``) on the same filled db, in a subprocess
of its own ``benchmarks/recall.py`` (it must know this db's migrations), and prints each figure's CPU ratio
(this / baseline) from the same run.

Run: python benchmarks/recall.py [--size small|large] [--quick] [--meetings N] [--predictions N] [--lines N]
                                 [--db PATH] [--baseline CHECKOUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from board.app import BOARD_MIGRATIONS
from board.db import StateDB
from board.decisions.predictions.scoring import track_records
from board.decisions.predictions.store import PredictionStore
from board.decisions.recall.search import recall_block, related_decisions
from board.recall.lexical import DecisionSearch, PassageSearch
from board.recall.passages import Asker
from board.recall.service import RecallService

WORDS = (
    "pricing", "europe", "germany", "hiring", "engineer", "office", "lisbon", "churn", "retention", "marketing",
    "launch", "partner", "budget", "runway", "fundraising", "seed", "series", "investor", "product", "roadmap",
    "pilot", "customer", "support", "onboarding", "security", "compliance", "vat", "tax", "legal", "contract",
    "vendor", "cloud", "costs", "margin", "growth", "brand"
)
ROLES = ("research", "content", "finance", "strategy", "critic")
SIZES = {  # meetings, predictions, transcript lines, minutes chars, runs
    "quick": (20, 100, 500, 400, 3),
    "small": (5_000, 5_000, 100_000, 4_000, 50),
    "large": (10_000, 50_000, 1_000_000, 4_000, 50),
}
TOPIC = "Should we change our pricing for Germany and Europe?"
MEMBER = Asker(frozenset({"id:telegram:1007"}), board=True)


def _text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def _vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    """5,000 made-up words with Zipf weights, the board's words among the commonest hundred."""
    letters = "abcdefghijklmnoprstuvwy"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(5_000)]
    for n, word in enumerate(WORDS):
        words[10 + n * 3] = word
    return words, [1.0 / (rank + 1) for rank in range(len(words))]


def _lines(count: int, rng: random.Random) -> list[tuple[str, str, str, str, str, str, str]]:
    words, weights = _vocabulary(rng)
    audiences = (["owner"] * 20 + [f"id:telegram:{1000 + n}" for n in range(200)]
                 + [f"group:telegram:-100{n}" for n in range(20)])
    out = []
    for n in range(count):
        session, audience = f"s-{n // 50:06d}", audiences[(n // 50) % len(audiences)]
        speaker = "user" if n % 2 == 0 else ROLES[(n // 50) % len(ROLES)]
        day = f"2026-{1 + n % 11:02d}-{1 + n % 28:02d}"
        out.append(("conversation", f"{session}#{n % 50}", audience, speaker, f"[{speaker}, {day}]", day,
                    " ".join(rng.choices(words, weights, k=rng.randint(6, 30)))))
    return out


def _fill(conn: sqlite3.Connection, meetings: int, predictions: int, lines: int, minutes_chars: int) -> None:
    """Each meeting inserted running, then ended (the trigger indexes it); predictions; transcript lines."""
    rng = random.Random(27)
    ended = [(f"m-{n:06d}", " ".join(rng.sample(WORDS, 4)),
              json.dumps({"recommendation": _text(rng, 200), "rationale": _text(rng, 300)}), _text(rng, minutes_chars))
             for n in range(meetings)]
    conn.executemany("INSERT INTO meetings(id, topic, roster, chair, status, started_at) "
                     "VALUES (?, ?, 'board', 'general', 'running', '2026-01-01T00:00:00+00:00')",
                     [(m, topic) for m, topic, _, _ in ended])
    conn.executemany("UPDATE meetings SET status = 'ended', decision = ?, minutes = ? WHERE id = ?",
                     [(decision, minutes, m) for m, _, decision, minutes in ended])
    said = [(f"m-{n % max(meetings, 1):06d}", ROLES[n % len(ROLES)], f"claim {n}", f"claim {n}",
             round(rng.random(), 2), rng.choice(("yes", "no", "unknown", None))) for n in range(predictions)]
    conn.executemany(
        "INSERT INTO predictions(meeting_id, round, role, model, claim, claim_key, probability, resolve_by, "
        "created_at, outcome, resolved_at) VALUES (?, 1, ?, 'offline', ?, ?, ?, '2026-02-01', '2026-01-01', ?, "
        "CASE WHEN ?6 IS NULL THEN NULL ELSE '2026-02-02' END)", said)
    conn.executemany("INSERT INTO recall_passages (source, ref, audience, speaker, cite, said_at, text) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)", _lines(lines, rng))


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"median {statistics.median(ordered) * 1000:8.2f} ms, p95 {p95 * 1000:8.2f} ms"


async def _timed(runs: int, read: Callable[[], Awaitable[Any]]) -> tuple[list[float], list[float], Any]:
    """(wall seconds per run, CPU seconds per run, the last result)."""
    walls, cpus, result = [], [], None
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        result = await read()
        cpus.append(time.process_time() - c)
        walls.append(time.perf_counter() - w)
    return walls, cpus, result


async def _stored_track(db: StateDB) -> Any:
    try:
        from board.decisions.predictions.tally import stored_track_records
    except ImportError:  # a checkout before the tallies (main): what it does
        return track_records(await PredictionStore(db).query(status="all", limit=1_000_000), min_resolved=5)
    return await stored_track_records(db, min_resolved=5, demo=False)


async def _recomputed_track(db: StateDB) -> Any:
    return track_records(await PredictionStore(db).query(status="all", limit=1_000_000), min_resolved=5)


async def main(args: argparse.Namespace) -> None:
    meetings, predictions, lines, minutes_chars, runs = SIZES["quick" if args.quick else args.size]
    meetings = args.meetings if args.meetings is not None else meetings
    predictions = args.predictions if args.predictions is not None else predictions
    lines = args.lines if args.lines is not None else lines
    runs = args.runs or runs
    service = None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.db) if args.db else Path(tmp) / "sabha.db"
        reused = path.exists()
        started = time.perf_counter()
        async with await StateDB.open(path, BOARD_MIGRATIONS) as db:
            opened = time.perf_counter() - started
            if not reused:
                await db.express(lambda conn: _fill(conn, meetings, predictions, lines, minutes_chars))
            filled = time.perf_counter() - started
            service = RecallService([PassageSearch(db), DecisionSearch(db)])
            figures: list[tuple[str, tuple[list[float], list[float], Any]]] = [
                ("decision recall (framing)", await _timed(runs, lambda: _decision_recall(db))),
                ("recall, a member", await _timed(runs, lambda: service.recall(TOPIC, MEMBER))),
                ("recall, the owner", await _timed(runs, lambda: service.recall(TOPIC, Asker.owner_view()))),
                ("track records (this checkout)", await _timed(runs, lambda: _stored_track(db))),
                ("track records, recomputed (main)", await _timed(max(3, runs // 5), lambda: _recomputed_track(db))),
            ]
        size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
        before = _baseline(args.baseline, path, runs) if args.baseline else {}
    print(f"meetings {meetings}, predictions {predictions}, transcript lines {lines}, minutes ~{minutes_chars} chars")
    made = (f"reused {path} (opened and migrated in {opened:.1f} s)" if reused
            else f"filled in {filled:.1f} s (one transaction)")
    print(f"{made}; db {size / 1e6:.1f} MB; {runs} runs each")
    for name, (walls, cpus, result) in figures:
        found = f" ({len(result)} found)" if isinstance(result, list) else f" ({len(result)} chars)"
        print(f"{name:34} {_ms(walls)}; CPU median {statistics.median(cpus) * 1000:8.2f} ms{found}")
    if before:
        print(f"before: {args.baseline}, on the same db, right after (CPU medians; ratio = this / before)")
        for name, (_, cpus, _) in figures:
            if name in before:
                now = statistics.median(cpus) * 1000
                print(f"{name:34} before {before[name]:8.2f} ms, this {now:8.2f} ms, ratio {now / before[name]:.3f}")
    stored, recomputed = figures[3][1], figures[4][1]
    print(f"track records: stored / recomputed CPU = "
          f"{statistics.median(stored[1]) / max(statistics.median(recomputed[1]), 1e-9):.4f} (same run)")


def _baseline(checkout: str, path: Path, runs: int) -> dict[str, float]:
    """The CPU medians (ms) another checkout's recall.py prints for the same filled db."""
    done = subprocess.run([sys.executable, str(Path(checkout) / "benchmarks" / "recall.py"), "--db", str(path),
                           "--runs", str(runs)], capture_output=True, text=True, cwd=checkout, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the baseline ({checkout}) failed:\n{done.stderr[-3000:]}")
    found = (re.match(r"(.+?)\s+median .*CPU median\s+([\d.]+) ms", line) for line in done.stdout.splitlines())
    return {m.group(1).strip(): float(m.group(2)) for m in found if m}


async def _decision_recall(db: StateDB) -> str:
    return recall_block(await related_decisions(db, TOPIC, limit=3))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("small", "large"), default="large")
    parser.add_argument("--quick", action="store_true", help="the smallest history (the test's)")
    parser.add_argument("--meetings", type=int)
    parser.add_argument("--predictions", type=int)
    parser.add_argument("--lines", type=int, help="transcript lines in the recall index")
    parser.add_argument("--runs", type=int)
    parser.add_argument("--db", help="keep the filled db here, or measure this one when it exists (not filled again)")
    parser.add_argument("--baseline", help="another checkout measured on the same db after this one (/work/main)")
    asyncio.run(main(parser.parse_args()))
