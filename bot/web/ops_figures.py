"""What the operations page (``/ui/ops``) shows, read from the state db with bounded, indexed queries.

*Time to answer* per channel is what a person waits: an inbound message's ``answered_at`` minus its
``received_at`` (table ``inbound_messages``, read per channel through ``inbound_messages_received``). Per
model it is the provider call's own ``latency_ms`` in the ledger (``llm_calls``, read through ``llm_calls_ts``).
Both are percentiles (nearest rank) over the newest :data:`SAMPLE` rows of the window, so a busy day costs
no more than a quiet one; the page says when a window held more rows than the sample.

Model errors and fallbacks come from the ledger's partial index ``llm_calls_trouble`` (migration 1475: rows
whose outcome is not ``ok``, or that answered on a later attempt), so counting them reads only them. Prompt
size per tier (static = static + soul + tools, dynamic, history, message = the new message + the tool loop)
is the ledger's ``blocks`` attribution, averaged over the day's newest :data:`TIER_SAMPLE` calls, with the
share of input tokens read from the prompt cache. The guardrail feed is ``guardrail_violations``; the queue
is the intake's unfinished rows per channel (``inbound_messages_status``); the replicas, their heartbeat and
the conversation leases they hold come from :mod:`bot.replicas.status`; scheduled work is ``scheduled_work``
(``scheduled_work_due``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from board.storage import Database
from bot.replicas.status import BACKLOG_STATUSES, read_report

__all__ = ["SAMPLE", "TIER_SAMPLE", "Latency", "OpsFigures", "Trouble", "percentile", "read_figures"]

SAMPLE = 2000  # newest rows of a window the percentiles and tier sizes are computed over
TIER_SAMPLE = 1000  # newest calls of the day the prompt's tiers and cache share are averaged over
SHOWN = 8  # latest errors, violations, due items listed
TROUBLE = "(outcome <> 'ok' OR attempt > 1)"  # the predicate of the partial index llm_calls_trouble
TIERS = {"static": ("static", "soul", "tools"), "dynamic": ("dynamic",), "history": ("history",),
         "message": ("message", "tool_loop")}


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile of ``values`` (sorted or not); None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


@dataclass(frozen=True)
class Latency:
    """Time to answer of one channel or model in one window, in ms."""

    key: str
    count: int
    p50: float | None
    p95: float | None


@dataclass(frozen=True)
class Trouble:
    """One failed model call, or one answered after a failed attempt (a fallback or a retry)."""

    ts: str
    model: str
    role: str
    what: str  # the error kind and text, or "answered on attempt 2"


@dataclass(frozen=True)
class OpsFigures:
    """Everything the page shows."""

    by_channel: dict[str, list[Latency]]  # window ("hour", "day") -> per channel
    by_model: dict[str, list[Latency]]
    sampled: dict[str, bool]  # window -> the ledger held more rows than the sample
    errors: int  # failed calls in the last day
    fallbacks: int  # calls answered on a later attempt in the last day
    trouble: list[Trouble]
    violations: list[dict[str, Any]]
    violations_day: int
    tiers: dict[str, float]  # tier -> mean tokens per call (the day's sample)
    tiers_calls: int  # calls of the newest TIER_SAMPLE of the day that recorded their blocks
    cache_share: float | None  # cache reads / input tokens over those calls
    queue: dict[str, dict[str, int]]  # channel -> status -> count
    replicas: list[dict[str, Any]]  # name, host, pid, since, seen, polling, leases
    due: list[dict[str, str]]  # next pending scheduled work
    overdue: int


def _ms_between(start: Any, end: Any) -> float | None:
    try:
        return (datetime.fromisoformat(str(end)) - datetime.fromisoformat(str(start))).total_seconds() * 1000
    except ValueError:
        return None


async def channels(db: Database) -> list[str]:
    """The channels that ever stored a message: one index seek each (``inbound_messages_received``)."""
    found: list[str] = []
    while True:
        row = await db.fetchone("SELECT MIN(channel) AS c FROM inbound_messages WHERE channel > ?",
                                (found[-1] if found else "",))
        if row is None or row["c"] is None:
            return found
        found.append(str(row["c"]))


async def _channel_latency(db: Database, names: Iterable[str], hour: str, day: str) -> dict[str, list[Latency]]:
    """Per window, each channel's time to answer, from the newest :data:`SAMPLE` messages of its day."""
    out: dict[str, list[Latency]] = {"hour": [], "day": []}
    for name in names:
        rows = await db.fetchall(
            "SELECT received_at, answered_at FROM inbound_messages WHERE channel = ? AND received_at >= ? "
            "ORDER BY received_at DESC LIMIT ?", (name, day, SAMPLE))
        waits = [(str(r["received_at"]) >= hour, w) for r in rows if r["answered_at"] is not None
                 and (w := _ms_between(r["received_at"], r["answered_at"])) is not None]
        for window, kept in (("hour", [w for recent, w in waits if recent]), ("day", [w for _, w in waits])):
            if kept:
                out[window].append(Latency(name, len(kept), percentile(kept, 0.5), percentile(kept, 0.95)))
    return out


def _model_latency(rows: Sequence[Any]) -> list[Latency]:
    per: dict[str, list[float]] = {}
    for r in rows:
        if r["outcome"] == "ok" and r["latency_ms"] is not None:
            per.setdefault(str(r["model"]), []).append(float(r["latency_ms"]))
    return [Latency(k, len(v), percentile(v, 0.5), percentile(v, 0.95)) for k, v in sorted(per.items())]


def _tiers(rows: Sequence[Any]) -> tuple[dict[str, float], int, float | None]:
    sums = dict.fromkeys(TIERS, 0.0)
    counted = 0
    for r in rows:
        try:
            blocks = json.loads(r["blocks"]) if r["blocks"] else None
        except ValueError:
            blocks = None
        if not isinstance(blocks, dict):
            continue
        counted += 1
        for tier, names in TIERS.items():
            sums[tier] += sum(float(blocks.get(n) or 0) for n in names)
    fresh = sum(int(r["input_tokens"] or 0) for r in rows)
    cached = sum(int(r["cache_read_tokens"] or 0) for r in rows)
    share = cached / (fresh + cached) if fresh + cached else None
    return ({k: v / counted for k, v in sums.items()} if counted else {}), counted, share


async def _trouble(db: Database, since: str) -> tuple[int, int, list[Trouble]]:
    row = await db.fetchone(
        f"SELECT COALESCE(SUM(CASE WHEN outcome <> 'ok' THEN 1 ELSE 0 END), 0) AS errors, "
        f"COALESCE(SUM(CASE WHEN outcome = 'ok' THEN 1 ELSE 0 END), 0) AS later "
        f"FROM llm_calls WHERE {TROUBLE} AND ts >= ?", (since,))
    rows = await db.fetchall(
        f"SELECT ts, model, role, outcome, error, attempt FROM llm_calls WHERE {TROUBLE} AND ts >= ? "
        f"ORDER BY ts DESC LIMIT ?", (since, SHOWN))
    listed = [Trouble(str(r["ts"]), str(r["model"]), str(r["role"] or ""),
                      f"{r['outcome']}: {(r['error'] or '')[:160]}" if r["outcome"] != "ok"
                      else f"answered on attempt {r['attempt']}") for r in rows]
    return (int(row["errors"]), int(row["later"]), listed) if row is not None else (0, 0, listed)


async def _violations(db: Database, since: str) -> tuple[list[dict[str, Any]], int]:
    rows = await db.fetchall("SELECT ts, role, rule, action, tier, model, excerpt FROM guardrail_violations "
                             "ORDER BY ts DESC LIMIT ?", (SHOWN,))
    count = await db.fetchone("SELECT COUNT(*) AS n FROM guardrail_violations WHERE ts >= ?", (since,))
    return [dict(r) for r in rows], int(count["n"]) if count is not None else 0


async def _queue(db: Database, names: Iterable[str]) -> dict[str, dict[str, int]]:
    marks = ", ".join("?" * len(BACKLOG_STATUSES))
    out: dict[str, dict[str, int]] = {}
    for name in names:
        rows = await db.fetchall(f"SELECT status, COUNT(*) AS n FROM inbound_messages WHERE channel = ? AND "
                                 f"status IN ({marks}) GROUP BY status", (name, *BACKLOG_STATUSES))
        out[name] = {str(r["status"]): int(r["n"]) for r in rows}
    return out


async def _replicas(db: Database, now: datetime, lease_s: float) -> list[dict[str, Any]]:
    report = await read_report(db, now=now.timestamp(), lease_s=lease_s)
    held: dict[str, int] = {}
    for lease in report.leases:
        held[lease.holder] = held.get(lease.holder, 0) + 1
    # the spare turns each replica last published (bot.intake.leasing: PostgreSQL's replicas hand work to room)
    room = {str(r["holder"]): int(r["spare"]) for r in await db.fetchall(
        "SELECT holder, spare FROM intake_room WHERE seen_at >= ? LIMIT ?", (now.timestamp() - lease_s, SHOWN))}
    return [{"name": r.name, "host": r.host, "pid": r.pid, "since": r.started_at[:19].replace("T", " "),
             "seen_s": max(0.0, now.timestamp() - r.seen_at), "polling": r.polling, "leases": held.get(r.name, 0),
             "spare": room.get(r.name)}
            for r in report.replicas] + [{"name": holder, "host": "", "pid": 0, "since": "", "seen_s": None,
                                          "polling": False, "leases": n, "spare": room.get(holder)}
                                         for holder, n in held.items() if holder not in
                                         {r.name for r in report.replicas}]


async def _due(db: Database, now_text: str) -> tuple[list[dict[str, str]], int]:
    rows = await db.fetchall("SELECT kind, due_at, channel, chat_id, held FROM scheduled_work "
                             "WHERE status = 'pending' ORDER BY due_at LIMIT ?", (SHOWN,))
    over = await db.fetchone("SELECT COUNT(*) AS n FROM scheduled_work WHERE status = 'pending' AND due_at < ?",
                             (now_text,))
    due = [{"kind": str(r["kind"]), "due": str(r["due_at"])[:16].replace("T", " "),
            "place": f"{r['channel']} {r['chat_id']}", "held": str(r["held"] or "")} for r in rows]
    return due, int(over["n"]) if over is not None else 0


async def read_figures(db: Database, now: datetime, *, lease_s: float) -> OpsFigures:
    """The page's figures at ``now`` (aware, UTC)."""
    hour, day = ((now - timedelta(hours=h)).isoformat(timespec="seconds") for h in (1, 24))
    ledger = await db.fetchall("SELECT ts, model, outcome, latency_ms FROM llm_calls WHERE ts >= ? "
                               "ORDER BY ts DESC LIMIT ?", (day, SAMPLE))
    prompts = await db.fetchall("SELECT input_tokens, cache_read_tokens, blocks FROM llm_calls WHERE ts >= ? "
                                "ORDER BY ts DESC LIMIT ?", (day, TIER_SAMPLE))
    last_hour = [r for r in ledger if str(r["ts"]) >= hour]
    names = await channels(db)
    errors, fallbacks, trouble = await _trouble(db, day)
    violations, violations_day = await _violations(db, day)
    tiers, tiers_calls, share = _tiers(prompts)
    due, overdue = await _due(db, now.strftime("%Y-%m-%dT%H:%M:%S"))
    return OpsFigures(
        by_channel=await _channel_latency(db, names, hour, day),
        by_model={"hour": _model_latency(last_hour), "day": _model_latency(ledger)},
        sampled={"hour": len(last_hour) >= SAMPLE, "day": len(ledger) >= SAMPLE},
        errors=errors, fallbacks=fallbacks, trouble=trouble, violations=violations, violations_day=violations_day,
        tiers=tiers, tiers_calls=tiers_calls, cache_share=share, queue=await _queue(db, names),
        replicas=await _replicas(db, now, lease_s), due=due, overdue=overdue)
