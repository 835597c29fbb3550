"""What the board reads as it grows (issue 44): every page, list, track record and framing at 100, 1,000 and
10,000 meetings.

For each size a fresh state db (this checkout's migrations, SQLite) is filled in one transaction on the express
connection: N ended meetings with a decision, minutes, 3 statements and 2 action items each; 5 predictions a
meeting (50,000 at 10,000; about two thirds resolved); 10 messages a meeting (100,000 at 10,000) as the ledger
keeps them (one model call each, besides 18 per meeting) and as the recall indexer leaves them (``recall_passages``).
Then each figure is read ``--runs`` times through the functions the page, command or meeting calls, and its median
CPU time (``time.process_time``: this process, the db's thread included) and wall time are printed:

* web pages: ``/ui/meetings``, a meeting (``/ui/meetings/<id>``), ``/ui/`` (the board), ``/ui/decisions``,
  ``/ui/track``, ``/ui/cost``: the reads each handler makes (rendering the template aside);
* ``sabha`` lists: ``meetings list``, ``predictions list``, ``board stats`` (the command's reads) and, with
  ``--cli``, the real command as a process (its CPU from ``getrusage``: imports included);
* ``/stats``; track records (what every meeting's decision reads, :func:`track_block`); a meeting's framing
  (:func:`recalled` + :func:`track_block`: what runs before its chair speaks); recall
  (:class:`board.recall.service.RecallService`, a member asking).

``--baseline PATH`` runs the same figures on another checkout's code (``/work/main``) in a subprocess of this
script (``--repo PATH``), one size after the other in the same run, and prints before, after and their ratio.
Goals (issue 44): pages and lists under 100 ms of work, track records and ``/stats`` under 20 ms, framing under
50 ms. Asserts nothing on time; ``--quick`` is the smallest history (the test that keeps this script running).

Run: python benchmarks/scale.py [--sizes 100,1000,10000] [--runs 7] [--baseline /work/main] [--cli] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import random
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve()


def _repo() -> Path:
    """The checkout whose code is measured: ``--repo PATH`` (read before the imports), else this one."""
    if "--repo" in sys.argv:
        return Path(sys.argv[sys.argv.index("--repo") + 1]).resolve()
    return HERE.parent.parent


REPO = _repo()
sys.path.insert(0, str(REPO))

from board.app import BOARD_MIGRATIONS  # noqa: E402
from board.clock import SystemClock  # noqa: E402
from board.commands.predictions import stats_text  # noqa: E402
from board.db import StateDB  # noqa: E402
from board.decisions.predictions.scoring import track_records  # noqa: E402
from board.decisions.predictions.store import PredictionStore  # noqa: E402
from board.decisions.ratify import DecisionBook, verdicts  # noqa: E402
from board.recall.lexical import DecisionSearch, PassageSearch  # noqa: E402
from board.recall.passages import Asker  # noqa: E402
from board.recall.service import RecallService  # noqa: E402
from board.room.meeting.decide import track_block  # noqa: E402
from board.room.meeting.frame import recalled  # noqa: E402
from board.room.store import MeetingStore  # noqa: E402
from board.spending.ledger import Ledger  # noqa: E402
from bot.web.pages import last_activity  # noqa: E402
from bot.web.rulings import meeting_actions  # noqa: E402

WORDS = ("pricing", "europe", "germany", "hiring", "engineer", "office", "lisbon", "churn", "retention", "marketing",
         "launch", "partner", "budget", "runway", "fundraising", "seed", "investor", "product", "roadmap", "pilot",
         "customer", "support", "onboarding", "security", "compliance", "vat", "tax", "legal", "contract", "vendor",
         "cloud", "costs", "margin", "growth", "brand", "warehouse", "pune", "office", "visa", "payroll")
ROLES = ("research", "content", "finance", "strategy", "critic")
TOPIC = "Should we open an office in Pune for the support team?"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def _say(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(WORDS, k=words))


def _fill(conn: sqlite3.Connection, meetings: int) -> None:
    """The history of ``meetings`` meetings, in bulk (see the module docstring)."""
    rng = random.Random(44)
    start = NOW - timedelta(days=3 * 365)
    step = (NOW - start) / max(meetings, 1)
    rows, statements, actions, predictions, calls, passages = [], [], [], [], [], []
    for n in range(meetings):
        mid, at = f"m-{n:06d}", (start + step * n).isoformat(timespec="seconds")
        rows.append((mid, _say(rng, 6), at, json.dumps({"recommendation": _say(rng, 30), "rationale": _say(rng, 40)}),
                     _say(rng, 220), at, round(rng.random() * 0.2, 4)))
        statements += [(mid, 1 + k // 2, ROLES[(n + k) % 5], _say(rng, 60), at) for k in range(3)]
        actions += [(mid, k + 1, _say(rng, 8), ROLES[(n + k) % 5], "open" if k else "done", at) for k in range(2)]
        for k in range(5):
            outcome = rng.choice(("yes", "no", "unknown", None, "yes", "no"))
            predictions.append((mid, ROLES[k], f"claim {n}.{k}", round(rng.random(), 2), at[:10], at, outcome,
                                at if outcome else None))
        calls += [(at, ROLES[(n + k) % 5] if k % 6 else "general", mid, None) for k in range(18)]
        for k in range(10):
            session = f"s-{n % 700:04d}"
            calls.append((at, ROLES[n % 5], None, f"board:{ROLES[n % 5]}:tg-{1000 + n % 200}"))
            passages.append(("conversation", f"{session}-{n}#{k}", f"id:telegram:{1000 + n % 200}",
                             "user" if k % 2 == 0 else ROLES[n % 5], f"[{ROLES[n % 5]}, {at[:10]}]", at, _say(rng, 20)))
    conn.executemany("INSERT INTO meetings(id, topic, roster, chair, status, started_at) "
                     "VALUES (?, ?, 'board', 'general', 'running', ?)", [(r[0], r[1], r[2]) for r in rows])
    conn.executemany("UPDATE meetings SET status = 'ended', decision = ?, minutes = ?, ended_at = ?, cost_usd = ? "
                     "WHERE id = ?", [(r[3], r[4], r[5], r[6], r[0]) for r in rows])
    conn.executemany("INSERT INTO meeting_statements(meeting_id, round, role, text, created_at) "
                     "VALUES (?, ?, ?, ?, ?)", statements)
    conn.executemany("INSERT INTO action_items(meeting_id, position, task, owner, status, created_at) "
                     "VALUES (?, ?, ?, ?, ?, ?)", actions)
    conn.executemany(
        "INSERT INTO predictions(meeting_id, round, role, model, claim, claim_key, probability, resolve_by, "
        "created_at, outcome, resolved_at, resolved_by) VALUES (?1, 1, ?2, 'openai/gpt-5-mini', ?3, ?3, ?4, ?5, ?6, "
        "?7, ?8, CASE WHEN ?7 IS NULL THEN NULL ELSE 'owner' END)", predictions)
    conn.executemany("INSERT INTO llm_calls(ts, provider, model, role, meeting_id, session_key, input_tokens, "
                     "output_tokens, cost_usd, latency_ms, outcome) VALUES (?, 'openai', 'gpt-5-mini', ?, ?, ?, 900, "
                     "200, 0.0012, 800, 'ok')", calls)
    conn.executemany("INSERT INTO recall_passages (source, ref, audience, speaker, cite, said_at, text) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)", passages)


# -- the reads --------------------------------------------------------------------------------


def _meeting(db: StateDB) -> Any:
    """What track_block and recalled read of a meeting (a MeetingContext's parts they use)."""
    members = [SimpleNamespace(role=role) for role in ROLES]
    settings = SimpleNamespace(min_resolved_predictions=5, recall_decisions=3)
    return SimpleNamespace(id="m-new", topic=TOPIC, specialists=members, store=MeetingStore(db), settings=settings,
                           preset_agenda=None)


async def _board_page(db: StateDB) -> Any:
    roles = ["general", *ROLES]
    if len(inspect.signature(last_activity).parameters) == 1:  # before: one scan of the ledger
        return await last_activity(db)  # type: ignore[call-arg]
    return await last_activity(db, roles)


async def _meetings_page(db: StateDB) -> Any:
    rows = await MeetingStore(db).list(100)
    return rows, await verdicts(db, [r.id for r in rows])


async def _meeting_page(db: StateDB, meeting_id: str) -> Any:
    store = MeetingStore(db)
    row = await store.get(meeting_id)
    assert row is not None
    return (row, await store.details(row.id), await DecisionBook(db, SystemClock()).find(row.id),
            await meeting_actions(store, row.id, NOW, UTC), await store.spent(row.id))


async def _decisions_page(db: StateDB) -> Any:
    book = DecisionBook(db, SystemClock())
    decided = [row for row in await MeetingStore(db).list(100) if row.decision]
    records = {r.meeting_id: r for r in await book.recent(limit=200)}
    missing = [await book.find(row.id) for row in decided if row.id not in records]
    return decided, missing, await MeetingStore(db).actions(include_done=True, limit=500)


async def _track_page(db: StateDB) -> Any:
    store = PredictionStore(db)
    if not hasattr(store, "latest_resolved"):  # before: every prediction read and scored (bot/web/track.py on main)
        rows = await store.query(status="all", limit=100_000)
        return track_records(rows, min_resolved=5), [r for r in rows if r.is_open][:300]
    from board.decisions.predictions.tally import read_tallies, records_of

    return (records_of(await read_tallies(db), min_resolved=5), await store.query(status="open", limit=300),
            await store.latest_resolved(limit=300))


async def _cost_page(db: StateDB) -> Any:
    ledger, since = Ledger(db), NOW - timedelta(days=14)
    return (await ledger.summary(since=since, by="day"), await ledger.summary(since=since, by="role"),
            await ledger.total(since=since))


async def _meetings_list(db: StateDB) -> Any:
    rows = await MeetingStore(db).list(20)
    return rows, await verdicts(db, [r.id for r in rows])


async def _framing(db: StateDB) -> Any:
    m = _meeting(db)
    return await recalled(m), await track_block(m)


def _reads(db: StateDB, meetings: int) -> dict[str, Callable[[], Awaitable[Any]]]:
    one = f"m-{meetings // 2:06d}"
    member = Asker(frozenset({"id:telegram:1007"}), board=True)
    return {
        "web /ui/meetings": lambda: _meetings_page(db),
        "web /ui/meetings/<id>": lambda: _meeting_page(db, one),
        "web /ui/ (board)": lambda: _board_page(db),
        "web /ui/decisions": lambda: _decisions_page(db),
        "web /ui/track": lambda: _track_page(db),
        "web /ui/cost": lambda: _cost_page(db),
        "sabha meetings list": lambda: _meetings_list(db),
        "sabha predictions list": lambda: PredictionStore(db).query(status="open", limit=10_000),
        "sabha board stats": lambda: stats_text(PredictionStore(db), min_resolved=5, fenced=False),
        "/stats": lambda: stats_text(PredictionStore(db), min_resolved=5, fenced=True),
        "track records (a meeting's)": lambda: track_block(_meeting(db)),
        "framing (recall + track records)": lambda: _framing(db),
        "recall (a member)": lambda: RecallService([PassageSearch(db), DecisionSearch(db)]).recall(TOPIC, member),
    }


async def _measure(read: Callable[[], Awaitable[Any]], runs: int) -> dict[str, float]:
    await read()  # warm: the first read pays the page cache
    cpus, walls = [], []
    for _ in range(runs):
        c, w = time.process_time(), time.perf_counter()
        await read()
        cpus.append(time.process_time() - c)
        walls.append(time.perf_counter() - w)
    return {"cpu_ms": statistics.median(cpus) * 1000, "wall_ms": statistics.median(walls) * 1000}


def _cli(folder: Path, args: list[str], runs: int) -> dict[str, float]:
    """A real ``sabha`` command on the history: its median CPU (user + system of the child process)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cpus, walls = [], []
    for _ in range(runs):
        before, w = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "bot.cli", *args, "--config", str(folder / "sabha.yaml")],
                              cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"sabha {' '.join(args)} failed: {done.stderr[-2000:]}")
        walls.append(time.perf_counter() - w)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {"cpu_ms": statistics.median(cpus) * 1000, "wall_ms": statistics.median(walls) * 1000}


async def _size(meetings: int, runs: int, cli: bool) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if cli:
            subprocess.run([sys.executable, "-m", "bot.cli", "init", str(folder)], cwd=folder,  # noqa: ASYNC221
                           capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)}, check=True, timeout=300)
        path = folder / "sessions" / "sabha.db"
        path.parent.mkdir(exist_ok=True)
        figures: dict[str, dict[str, float]] = {}
        async with await StateDB.open(path, BOARD_MIGRATIONS) as db:
            started = time.perf_counter()
            await db.express(lambda conn: _fill(conn, meetings))
            figures["(filled, s)"] = {"cpu_ms": 0.0, "wall_ms": (time.perf_counter() - started) * 1000}
            for name, read in _reads(db, meetings).items():
                figures[name] = await _measure(read, runs)
        if cli:
            for name, args in (("process: sabha meetings list", ["meetings", "list"]),
                               ("process: sabha board stats", ["board", "stats"]),
                               ("process: sabha --version", ["--version"])):
                figures[name] = _cli(folder, args, max(1, min(runs, 3)))
    return figures


def _baseline(path: str, sizes: list[int], args: argparse.Namespace) -> dict[str, dict[str, dict[str, float]]]:
    command = [sys.executable, str(HERE), "--repo", path, "--json", "--sizes", ",".join(map(str, sizes)),
               "--runs", str(args.runs), *(["--cli"] if args.cli else [])]
    done = subprocess.run(command, capture_output=True, text=True, timeout=7200, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the baseline ({path}) failed:\n{done.stderr[-3000:]}")
    found: dict[str, dict[str, dict[str, float]]] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _print(size: int, after: dict[str, dict[str, float]], before: dict[str, dict[str, float]] | None) -> None:
    print(f"\n== {size:,} meetings ({5 * size:,} predictions, {10 * size:,} messages) ==")
    head = f"{'figure':36} {'CPU ms':>9} {'wall ms':>9}"
    print(head + (f" {'before CPU':>11} {'before wall':>11} {'CPU after/before':>17}" if before else ""))
    for name, fig in after.items():
        if name == "(filled, s)":
            print(f"{'history filled in (s, wall)':36} {'':>9} {fig['wall_ms'] / 1000:9.1f}")
            continue
        line = f"{name:36} {fig['cpu_ms']:9.2f} {fig['wall_ms']:9.2f}"
        old = (before or {}).get(name)
        if old is not None:
            line += f" {old['cpu_ms']:11.2f} {old['wall_ms']:11.2f} {fig['cpu_ms'] / max(old['cpu_ms'], 1e-6):17.3f}"
        print(line)


async def main(args: argparse.Namespace) -> None:
    sizes = [20] if args.quick else [int(s) for s in args.sizes.split(",")]
    results = {str(size): await _size(size, args.runs, args.cli) for size in sizes}
    if args.json:
        print(json.dumps(results))
        return
    before = _baseline(args.baseline, sizes, args) if args.baseline else {}
    print(f"code measured: {REPO}" + (f"; before: {args.baseline}" if args.baseline else "")
          + f"; median of {args.runs} runs; CPU of this process (the db's thread included); wall measured under load")
    for size in sizes:
        _print(size, results[str(size)], before.get(str(size)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="meetings per history, comma-separated")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="one tiny history (the test's)")
    parser.add_argument("--cli", action="store_true", help="also run the real sabha commands as processes")
    parser.add_argument("--baseline", help="another checkout to measure the same way for 'before' (/work/main)")
    parser.add_argument("--repo", help="measure this checkout's code (the baseline's subprocess)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    asyncio.run(main(parser.parse_args()))
