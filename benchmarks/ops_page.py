"""The operations page (``/ui/ops``, issue 44) at 100,000 ledger rows: the time to read its figures and render it.

Fills a fresh state db (every migration of the daemon) in bulk: ``--rows`` model calls (default 100,000) spread
over the last two days (so about half fall in the page's last day), 2 % of them failed and 1 % answered on a
second attempt, with the prompt's blocks; as many inbound messages over three channels, 500 guardrail violations
and 2,000 scheduled items. Then renders the page as the handler does (:func:`bot.web.ops_figures.read_figures`
and the ``ops.html`` template) ``--runs`` times and prints the median wall time and the median CPU time of this
process per render, against a baseline measured in the same run: the same figures read over every row of each
window (no sample bound: what the page would cost without it). The goal is under 200 ms per render at 100,000.

Run: python benchmarks/ops_page.py [--rows 100000] [--runs 9] [--quick]
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
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from board.app import BOARD_MIGRATIONS
from board.db import StateDB
from bot.app import all_migrations
from bot.intake.lanes import LaneLoad
from bot.web import ops_figures
from bot.web.ops import millis
from bot.web.pages import NAV
from bot.web.render import render_page

MODELS = ("anthropic/claude-sonnet", "openai/gpt-mini", "gemini/flash")
CHANNELS = ("telegram", "whatsapp", "slack")
BLOCKS = json.dumps({"static": 1800, "soul": 400, "tools": 600, "dynamic": 80, "history": 900, "message": 40})


def _fill(path: Path, rows: int, now: datetime) -> None:
    rng = random.Random(44)
    span = timedelta(days=2) / rows
    calls, inbound = [], []
    for n in range(rows):
        at = now - span * n
        ts = at.isoformat(timespec="seconds")
        outcome, attempt = ("rate_limit", 1) if n % 50 == 7 else ("ok", 2 if n % 100 == 3 else 1)
        calls.append((ts, MODELS[n % 3], ("finance", "critic", "general")[n % 3], rng.uniform(200, 4000), outcome,
                      "429 slow down" if outcome != "ok" else None, attempt, 3000, 2500, BLOCKS))
        inbound.append((CHANNELS[n % 3], str(n % 500), f"m{n}", at.isoformat(timespec="milliseconds"),
                        (at + timedelta(milliseconds=rng.uniform(300, 6000))).isoformat(timespec="milliseconds")))
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO llm_calls(ts, provider, model, role, latency_ms, outcome, error, attempt, "
                         "input_tokens, cache_read_tokens, blocks) VALUES (?, 'p', ?, ?, ?, ?, ?, ?, ?, ?, ?)", calls)
        conn.executemany("INSERT INTO inbound_messages(channel, chat_id, message_id, received_at, status, answered_at) "
                         "VALUES (?, ?, ?, ?, 'answered', ?)", inbound)
        conn.executemany("INSERT INTO guardrail_violations(ts, role, tier, rule, action, excerpt) "
                         "VALUES (?, 'critic', 'persona', 'prompt_leak', 'replace', 'My instructions say')",
                         [((now - timedelta(minutes=7 * k)).isoformat(timespec="seconds"),) for k in range(500)])
        conn.executemany("INSERT INTO scheduled_work(key, kind, due_at, channel, chat_id, created_at, updated_at, "
                         "status) VALUES (?, 'reminder', ?, 'telegram', '42', ?, ?, ?)",
                         [(f"k{k}", d := (now + timedelta(minutes=30 * k - 600)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                           d, d, "pending" if k % 2 else "done") for k in range(2000)])


async def _render(db: StateDB, now: datetime) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    f = await ops_figures.read_figures(db, now, lease_s=15)
    body = render_page("ops.html", nav=NAV, csrf="x", signed_in=True, prefix="/ui", active="ops", title="Operations",
                       f=f, ms=millis, sample=ops_figures.SAMPLE, now=now.strftime("%Y-%m-%d %H:%M UTC"),
                       load=LaneLoad(running=14, working=12, cap=32, waiting=3, lanes=14, peak=32,
                                    done=100_000))
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000, len(body)


async def _measure(db: StateDB, now: datetime, runs: int, sample: int) -> tuple[float, float, int]:
    ops_figures.SAMPLE = sample
    await _render(db, now)  # warm: templates compiled, pages cached
    walls, cpus, size = [], [], 0
    for _ in range(runs):
        wall, cpu, size = await _render(db, now)
        walls.append(wall)
        cpus.append(cpu)
    return statistics.median(walls), statistics.median(cpus), size


async def main(args: argparse.Namespace) -> None:
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.db"
        async with await StateDB.open(path, [*BOARD_MIGRATIONS, *all_migrations()]):
            pass
        _fill(path, args.rows, now)
        async with await StateDB.open(path, [*BOARD_MIGRATIONS, *all_migrations()]) as db:
            bounded = ops_figures.SAMPLE
            page = await _measure(db, now, args.runs, bounded)
            whole = await _measure(db, now, args.runs, 10 ** 9)
    print(f"ops page at {args.rows:,} ledger rows and {args.rows:,} inbound messages, median of {args.runs} "
          f"(wall measured under whatever else runs; CPU of this process)")
    print(f"  {'':28} {'wall ms':>9} {'cpu ms':>9} {'html bytes':>11}")
    print(f"  {'page (sample ' + format(bounded, ',') + ')':28} {page[0]:9.1f} {page[1]:9.1f} {page[2]:11,}")
    print(f"  {'baseline: every row':28} {whole[0]:9.1f} {whole[1]:9.1f} {whole[2]:11,}")
    print(f"  ratio page / baseline: wall {page[0] / whole[0]:.2f}, cpu {page[1] / max(whole[1], 1e-9):.2f}; "
          f"goal: page under 200 ms: {'met' if page[0] < 200 else 'NOT met'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="ledger rows (and inbound messages) to fill")
    parser.add_argument("--runs", type=int, default=9, help="renders measured (the median is printed)")
    parser.add_argument("--quick", action="store_true", help="2,000 rows, 3 runs (the test's size)")
    parsed = parser.parse_args()
    if parsed.quick:
        parsed.rows, parsed.runs = 2000, 3
    asyncio.run(main(parsed))
