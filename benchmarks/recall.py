"""What the board's memory costs a meeting: recalling related decisions and scoring the advisors.

Fills a fresh state db (all of the board's migrations) with ``--meetings`` ended meetings, each
with a decision and minutes of about ``--minutes-chars`` characters (the full-text index is
kept by its triggers as they end), and ``--predictions`` resolved predictions spread over five
advisors; then times, ``--runs`` times each, what a new meeting does before its chair speaks
and before it decides:

* ``recall``: :func:`board.decisions.recall.search.related_decisions` for a topic sharing words with
  some decisions, plus :func:`recall_block` (the quoted, bounded text);
* ``track``: every prediction read and scored into the track records the chair sees.

Prints medians and p95 in milliseconds, the size of the db and how long filling it took.
Asserts nothing on time.

Run: python benchmarks/recall.py [--meetings 5000] [--predictions 5000] [--minutes-chars 4000] [--runs 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from board.app import BOARD_MIGRATIONS
from board.db import StateDB
from board.decisions.predictions.scoring import track_records
from board.decisions.predictions.store import PredictionStore
from board.decisions.recall.search import recall_block, related_decisions

WORDS = (
    "pricing", "europe", "germany", "hiring", "engineer", "office", "lisbon", "churn", "retention", "marketing",
    "launch", "partner", "budget", "runway", "fundraising", "seed", "series", "investor", "product", "roadmap",
    "pilot", "customer", "support", "onboarding", "security", "compliance", "vat", "tax", "legal", "contract",
    "vendor", "cloud", "costs", "margin", "growth", "brand"
)
ROLES = ("research", "content", "finance", "strategy", "critic")


def _text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def _rows(meetings: int, predictions: int, minutes_chars: int) -> tuple[list[tuple[str, ...]], list[tuple[object, ...]]]:  # noqa: E501
    rng = random.Random(27)
    ended = [(f"m-{n:06d}", " ".join(rng.sample(WORDS, 4)),
              json.dumps({"recommendation": _text(rng, 200), "rationale": _text(rng, 300)}), _text(rng, minutes_chars))
             for n in range(meetings)]
    said = [(f"m-{n % max(meetings, 1):06d}", ROLES[n % len(ROLES)], f"claim {n}", f"claim {n}",
             round(rng.random(), 2), rng.choice(("yes", "no", "unknown"))) for n in range(predictions)]
    return ended, said


async def _fill(db: StateDB, meetings: int, predictions: int, minutes_chars: int) -> None:
    """One transaction: each meeting inserted running, then ended (the trigger indexes it), then the predictions."""
    ended, said = _rows(meetings, predictions, minutes_chars)

    def work(conn: sqlite3.Connection) -> None:
        conn.executemany("INSERT INTO meetings(id, topic, roster, chair, status, started_at) "
                         "VALUES (?, ?, 'board', 'general', 'running', '2026-01-01T00:00:00+00:00')",
                         [(m, topic) for m, topic, _, _ in ended])
        conn.executemany("UPDATE meetings SET status = 'ended', decision = ?, minutes = ? WHERE id = ?",
                         [(decision, minutes, m) for m, _, decision, minutes in ended])
        conn.executemany(
            "INSERT INTO predictions(meeting_id, round, role, model, claim, claim_key, probability, resolve_by, "
            "created_at, outcome) VALUES (?, 1, ?, 'offline', ?, ?, ?, '2026-02-01', '2026-01-01', ?)", said)

    await db.transaction(work)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"median {statistics.median(ordered) * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms"


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sabha.db"
        async with await StateDB.open(path, BOARD_MIGRATIONS) as db:
            started = time.perf_counter()
            await _fill(db, args.meetings, args.predictions, args.minutes_chars)
            filled = time.perf_counter() - started
            recall, track = [], []
            found = 0
            for _ in range(args.runs):
                t0 = time.perf_counter()
                hits = await related_decisions(db, "Should we change our pricing for Germany and Europe?", limit=3)
                block = recall_block(hits)
                recall.append(time.perf_counter() - t0)
                found = len(hits)
                t0 = time.perf_counter()
                track_records(await PredictionStore(db).query(status="all", limit=1_000_000), min_resolved=5)
                track.append(time.perf_counter() - t0)
        size = _size(path)
    print(f"meetings {args.meetings}, predictions {args.predictions}, minutes ~{args.minutes_chars} chars each")
    print(f"filled in {filled:.1f} s (one transaction; each meeting indexed by the trigger as it ended); "
          f"db {size / 1e6:.1f} MB")
    print(f"recall (FTS5 search, outcomes of {found}, quoted block of {len(block)} chars): {_ms(recall)}")
    print(f"track records ({args.predictions} predictions scored): {_ms(track)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--meetings", type=int, default=5000)
    parser.add_argument("--predictions", type=int, default=5000)
    parser.add_argument("--minutes-chars", type=int, default=4000)
    parser.add_argument("--runs", type=int, default=50)
    asyncio.run(main(parser.parse_args()))
