"""Track records from stored tallies (issue 44: "/stats under 20 ms, scores kept up to date on /resolve, not
recomputed"): the tallies the db's triggers keep give exactly what scoring every prediction gives, after every
kind of write (recorded, restated, resolved through ``/resolve``'s words, the demo removed), on SQLite and
PostgreSQL; and a track-record read is one statement whatever the number of predictions."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from board.decisions.predictions.resolving import resolve_words
from board.decisions.predictions.scoring import TrackRecord, track_records
from board.decisions.predictions.store import PredictionStore
from board.decisions.predictions.tally import read_tallies, records_of, stored_track_records, totals_of
from board.storage import Database

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
ROLES = ("finance", "research", "critic")


@dataclass(frozen=True)
class _Claim:
    claim: str
    probability: float
    resolve_by: str = "2026-12-01"


def _same(stored: list[TrackRecord], computed: list[TrackRecord]) -> None:
    assert [r.role for r in stored] == [r.role for r in computed]
    for s, c in zip(stored, computed, strict=True):
        assert (s.n, s.unknown, s.open, s.models, s.scored) == (c.n, c.unknown, c.open, c.models, c.scored), s.role
        assert s.brier == pytest.approx(c.brier, abs=1e-12), s.role
        assert len(s.bins) == len(c.bins), s.role
        for a, b in zip(s.bins, c.bins, strict=True):
            assert (a.low, a.high, a.count) == (b.low, b.high, b.count)
            assert a.mean_p == pytest.approx(b.mean_p, abs=1e-12) and a.observed == pytest.approx(b.observed)


async def _meeting(db: Database, meeting_id: str) -> None:
    await db.execute("INSERT INTO meetings(id, topic, roster, chair, status, started_at, channel, chat_id) "
                     "VALUES (?, 'pricing', 'board', 'general', 'ended', '2026-11-01T00:00:00+00:00', 'telegram', "
                     "'100')", (meeting_id,))


async def _check(db: Database, minimum: int = 3) -> None:
    rows = await PredictionStore(db).query(status="all", limit=1_000_000)
    tallies = await read_tallies(db)
    _same(records_of(tallies, min_resolved=minimum), track_records(rows, min_resolved=minimum))
    mine = [r for r in rows if r.role in ("finance", "critic") and not r.meeting_id.startswith("demo-")]
    _same(records_of(tallies, min_resolved=minimum, roles={"finance", "critic"}, demo=False),
          track_records(mine, min_resolved=minimum))
    totals = totals_of(tallies)
    assert (totals.total, totals.open, totals.demo) == (
        len(rows), sum(1 for r in rows if r.is_open), any(r.meeting_id.startswith("demo-") for r in rows))


@pytest.mark.backends
async def test_stored_track_records_equal_a_full_recomputation_after_every_kind_of_write(database: Database) -> None:
    store = PredictionStore(database)
    rng = random.Random(44)
    for n in range(6):
        await _meeting(database, f"m-{n}")
    await _meeting(database, "demo-1")
    await _check(database)  # nothing yet: no record
    assert await stored_track_records(database) == []
    ids = []
    edges = (0.0, 0.3, 0.7, 1.0, 0.05, 0.95, 0.1, 0.9, 0.5, 0.6999999999)
    for n in range(40):
        model = rng.choice(("openai/gpt-5-mini", "anthropic/claude", None))
        prob = edges[n] if n < len(edges) else round(rng.random(), 3)
        ids.append(await store.record(f"m-{n % 6}", 1, ROLES[n % 3], _Claim(f"claim {n}", prob), model=model, now=NOW))
    for n in range(5):
        ids.append(await store.record("demo-1", 1, ROLES[n % 3], _Claim(f"demo claim {n}", 0.8), model="demo",
                                      now=NOW))
    await _check(database)
    # a member restates an open claim: its probability and model change, one row still
    await store.record("m-0", 2, "finance", _Claim("Claim 0.", 0.65), model="anthropic/claude", now=NOW)
    await _check(database)
    for number, word in zip(ids[:30], ("yes", "no", "unknown") * 10, strict=True):
        changed, _ = await resolve_words(store, [str(number), word], by="owner", now=NOW)
        assert changed
        await _check(database)
    for number in ids[-5:]:
        await resolve_words(store, [str(number), "yes"], by="demo", now=NOW)
    changed, said = await resolve_words(store, [str(ids[0]), "no"], by="owner", now=NOW)  # twice: nothing moves
    assert not changed and "already resolved" in said
    await _check(database)
    # a restatement of a resolved claim changes nothing (store_claim's WHERE outcome IS NULL)
    await store.record("m-1", 3, "research", _Claim("claim 1", 0.01), model="x", now=NOW)
    await _check(database)
    # `sabha demo --remove`: the made-up predictions go, and their share of the tallies with them
    await database.execute("DELETE FROM predictions WHERE meeting_id LIKE ?", ("demo-%",))
    await _check(database)
    assert not totals_of(await read_tallies(database)).demo


async def test_a_track_record_read_is_one_statement_however_many_predictions(database: Database) -> None:
    """Counted on SQLite's connection (its trace callback); the PostgreSQL run checks the equality above."""
    store = PredictionStore(database)
    conn: Any = database
    seen: list[str] = []
    counts = []
    for size in (10, 500):
        await _meeting(database, f"m-{size}")
        for n in range(size):
            number = await store.record(f"m-{size}", 1, ROLES[n % 3], _Claim(f"claim {n}", (n % 10) / 10),
                                        model="m", now=NOW)
            await resolve_words(store, [str(number), ("yes", "no")[n % 2]], by="owner", now=NOW)
        await conn.conn.set_trace_callback(seen.append)
        try:
            records = await stored_track_records(database, min_resolved=5)
        finally:
            await conn.conn.set_trace_callback(None)
        counts.append(len(seen))
        rows_read = await database.fetchone("SELECT count(*) AS n FROM prediction_tallies")
        assert rows_read is not None and int(rows_read["n"]) <= len(ROLES) * 11
        assert sum(r.n for r in records) == sum((10, 500)[: len(counts)])
        seen.clear()
    assert counts == [1, 1], counts
