"""The cost ledger: one row per LLM call and per tool call in the state db, and reports over them.

Every provider call (each retry and fallback too) is an ``llm_calls`` row: provider,
model, role, session key, meeting id, purpose (a :class:`~board.llm.purpose.CallPurpose`: turn, meeting,
extraction, compaction...; ``--by purpose``), tokens
including cache reads and writes, estimated cost in USD, latency, time to first token
when streamed, outcome, what prompt caching saved in USD (``saved_usd``, from the price
table's cache prices), and the per-block token attribution of its prompt (static, soul,
dynamic, history, message...; seed 001 §10.2). Every tool call is a ``tool_calls`` row.
:meth:`Ledger.summary` groups costs by role, day, model or meeting for ``sabha cost`` and
``/cost``; :func:`format_report` shows fresh input (cache writes included) against input
read from the prompt cache, the share cached, and the USD caching saved.

Each call also records who it was made for (``sender``, ``<channel>:<sender id>``): the
board sets :data:`current_sender` while it answers a message (:func:`spending_for`), and
the tasks that answer spawns (consultations, a meeting it calls) inherit it, so the
budgets (:mod:`board.spending.budget`) can sum one sender's spend with :meth:`Ledger.spent`. Calls a
stranger caused (public mode) also record their ``scope`` (``public:<channel>``, from
:data:`current_scope`), which the channel's public cap sums (:mod:`board.spending.allowance`).

Calls made during a standing item's run (a scheduled meeting, roundtable or brief) record the item and
a short label of the run (``schedule_item``, ``schedule_run``, from :data:`current_run`, set with
:func:`spending_for_run`; migration 1225): ``sabha cost --by schedule`` shows each run on its own line and
:meth:`Ledger.spent_on_item` sums what an item's runs cost.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from board.conversation.transcripts import utc_now
from board.llm.base import Usage
from board.storage import Database
from board.telemetry.spans import trace_id

__all__ = [
    "GROUPS",
    "CostRow",
    "GroupBy",
    "LLMCallRecord",
    "Ledger",
    "RunTag",
    "ToolCallRecord",
    "current_run",
    "current_scope",
    "current_sender",
    "format_report",
    "parse_since",
    "spending_for",
    "spending_for_run",
    "start_of_day",
]

log = logging.getLogger("sabha.ledger")

GroupBy = Literal["role", "day", "model", "meeting", "schedule", "purpose"]
#: what a model call made outside any scheduled run shows as in ``--by schedule``
NOT_SCHEDULED = "(not scheduled)"
GROUPS: dict[str, str] = {
    "role": "COALESCE(role, '(none)')",
    "day": "substr(ts, 1, 10)",
    "model": "model",
    "meeting": "COALESCE(meeting_id, '(none)')",
    "schedule": f"COALESCE(schedule_run, '{NOT_SCHEDULED}')",
    "purpose": "COALESCE(purpose, '(none)')",
}
MAX_ARGS_CHARS = 2000

_SINCE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$", re.IGNORECASE)

#: Who the model calls made now are for (``<channel>:<sender id>``); None outside a message.
current_sender: ContextVar[str | None] = ContextVar("sabha_current_sender", default=None)
#: Which spending scope they fall under (``public:<channel>`` for a stranger's); None: none.
current_scope: ContextVar[str | None] = ContextVar("sabha_current_scope", default=None)


@dataclass(frozen=True)
class RunTag:
    """The scheduled run a model call belongs to: the standing item's id and a short label of this run
    (what ``sabha cost --by schedule`` shows on the run's line)."""

    item_id: int
    label: str


#: The standing item's run the model calls made now belong to; None outside a scheduled run.
current_run: ContextVar[RunTag | None] = ContextVar("sabha_current_run", default=None)


@contextlib.contextmanager
def spending_for_run(tag: RunTag) -> Iterator[None]:
    """Tag the model calls made inside the block (and in the tasks it starts: a meeting held in the
    background) with the scheduled run ``tag``."""
    token = current_run.set(tag)
    try:
        yield
    finally:
        current_run.reset(token)


@contextlib.contextmanager
def spending_for(sender: str | None, *, scope: str | None = None) -> Iterator[None]:
    """Attribute the model calls made inside the block (and in tasks it starts) to ``sender``
    (and to ``scope``)."""
    token = current_sender.set(sender)
    scope_token = current_scope.set(scope)
    try:
        yield
    finally:
        current_scope.reset(scope_token)
        current_sender.reset(token)


def start_of_day(now: datetime | None = None) -> datetime:
    """Midnight UTC of ``now``'s day: the budgets' day starts there."""
    now = now or datetime.now(UTC)
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


@dataclass(frozen=True)
class LLMCallRecord:
    """One provider call as the ledger stores it."""

    provider: str
    model: str
    outcome: str
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    latency_ms: float | None = None
    ttft_ms: float | None = None
    role: str | None = None
    session_key: str | None = None
    meeting_id: str | None = None
    purpose: str | None = None
    attempt: int = 1
    error: str | None = None
    blocks: Mapping[str, Any] | None = None
    tags: Mapping[str, Any] | None = None
    ts: str = field(default_factory=utc_now)
    sender: str | None = None  # None: :data:`current_sender`
    saved_usd: float | None = None  # what prompt caching saved (PriceTable.saved); None: unpriced
    scope: str | None = None  # None: :data:`current_scope`
    thinking: str | None = None  # the thinking level asked for (off, low, medium, high); None: not asked
    run: RunTag | None = None  # None: :data:`current_run` (the scheduled run it belongs to, if any)

    def resolved(self) -> LLMCallRecord:
        """This record with ``sender``, ``scope`` and ``run`` taken from the context where unset."""
        sender = self.sender if self.sender is not None else current_sender.get()
        scope = self.scope if self.scope is not None else current_scope.get()
        run = self.run if self.run is not None else current_run.get()
        if (sender, scope, run) == (self.sender, self.scope, self.run):
            return self
        return replace(self, sender=sender, scope=scope, run=run)


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call as the ledger stores it."""

    name: str
    ok: bool
    args: Any = None
    call_id: str | None = None
    error: str | None = None
    retryable: bool = False
    result_bytes: int = 0
    latency_ms: float | None = None
    role: str | None = None
    session_key: str | None = None
    meeting_id: str | None = None
    ts: str = field(default_factory=utc_now)
    server: str | None = None  # the MCP server the tool comes from; None: one of Sabha's own


@dataclass(frozen=True)
class CostRow:
    """One line of a cost report."""

    key: str
    calls: int
    failed: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float
    unpriced: int
    avg_latency_ms: float | None
    saved_usd: float = 0.0

    @property
    def fresh_input_tokens(self) -> int:
        """Input the provider processed anew: uncached input plus cache writes."""
        return self.input_tokens + self.cache_write_tokens

    @property
    def cached_share(self) -> float:
        """The share of all input tokens read from the prompt cache (0 when there was no input)."""
        whole = self.fresh_input_tokens + self.cache_read_tokens
        return self.cache_read_tokens / whole if whole else 0.0


def parse_since(text: str | None, *, now: datetime | None = None) -> datetime | None:
    """``7d``, ``24h``, ``30m``, ``2w``, an ISO date/time, or ``all`` (None) -> a UTC cut-off."""
    if text is None or text.strip().lower() in ("", "all"):
        return None
    now = now or datetime.now(UTC)
    match = _SINCE.match(text)
    if match:
        amount, unit = int(match.group(1)), match.group(2).lower()
        delta = {"m": timedelta(minutes=amount), "h": timedelta(hours=amount),
                 "d": timedelta(days=amount), "w": timedelta(weeks=amount)}[unit]
        return now - delta
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise ValueError(
            f"--since {text!r} is not understood; use e.g. 7d, 24h, 30m, 2w, 2025-01-31 or all"
        ) from exc
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _json(value: Any, limit: int | None = None) -> str | None:
    if value is None:
        return None
    text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


class Ledger:
    """Writes and reads the ``llm_calls`` and ``tool_calls`` tables.

    ``observers`` are told of every provider call before it is stored (so a full disk does
    not hide it); the daemon's metrics plug in here. An observer that raises is logged.
    """

    def __init__(self, db: Database, *, observers: Iterable[Callable[[LLMCallRecord], None]] = ()) -> None:
        self.db = db
        self.observers: list[Callable[[LLMCallRecord], None]] = list(observers)

    async def record_llm_call(self, rec: LLMCallRecord) -> None:
        """Tell the observers of one provider call, then store it."""
        rec = rec.resolved()
        for observer in list(self.observers):
            try:
                observer(rec)
            except Exception:
                log.exception("ledger observer %r failed", observer)
        await self.db.execute(
            """INSERT INTO llm_calls(ts, provider, model, role, session_key, meeting_id, purpose, attempt,
                   input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd,
                   latency_ms, ttft_ms, outcome, error, blocks, tags, sender, saved_usd, scope, thinking,
                   schedule_item, schedule_run, trace_id)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                rec.ts, rec.provider, rec.model, rec.role, rec.session_key, rec.meeting_id, rec.purpose,
                rec.attempt, rec.usage.input_tokens, rec.usage.output_tokens, rec.usage.cache_read_tokens,
                rec.usage.cache_write_tokens, rec.cost_usd, rec.latency_ms, rec.ttft_ms, rec.outcome,
                rec.error, _json(rec.blocks), _json(rec.tags),
                rec.sender, rec.saved_usd, rec.scope, rec.thinking,
                rec.run.item_id if rec.run else None, rec.run.label if rec.run else None, trace_id(),
            ),
        )

    async def record_tool_call(self, rec: ToolCallRecord) -> None:
        """Store one tool call."""
        await self.db.execute(
            """INSERT INTO tool_calls(ts, role, session_key, meeting_id, name, call_id, args, ok, error,
                   retryable, result_bytes, latency_ms, server)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            (
                rec.ts, rec.role, rec.session_key, rec.meeting_id, rec.name, rec.call_id,
                _json(rec.args, MAX_ARGS_CHARS), int(rec.ok), rec.error, int(rec.retryable),
                rec.result_bytes, rec.latency_ms, rec.server,
            ),
        )

    async def summary(self, *, since: datetime | None = None, by: str = "role") -> list[CostRow]:
        """Cost per role, day, model, meeting, scheduled run or purpose (a
        :class:`~board.llm.purpose.CallPurpose`) since ``since`` (all time when None), costliest first."""
        if by not in GROUPS:
            raise ValueError(f"cannot group costs by {by!r}; use one of {', '.join(GROUPS)}")
        where, params = self._where(since)
        order = "key" if by == "day" else "cost DESC, key"
        rows = await self.db.fetchall(
            f"""SELECT {GROUPS[by]} AS key, COUNT(*) AS calls,
                       SUM(CASE WHEN outcome != 'ok' THEN 1 ELSE 0 END) AS failed,
                       SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
                       SUM(cache_read_tokens) AS cache_read, SUM(cache_write_tokens) AS cache_write,
                       COALESCE(SUM(cost_usd), 0) AS cost,
                       SUM(CASE WHEN cost_usd IS NULL AND outcome = 'ok' THEN 1 ELSE 0 END) AS unpriced,
                       AVG(CASE WHEN outcome = 'ok' THEN latency_ms END) AS latency,
                       COALESCE(SUM(saved_usd), 0) AS saved
                FROM llm_calls {where} GROUP BY key ORDER BY {order}""",
            params,
        )
        return [_row(r) for r in rows]

    async def total(self, *, since: datetime | None = None) -> CostRow:
        """All calls since ``since`` as one row (key ``total``)."""
        where, params = self._where(since)
        row = await self.db.fetchone(
            f"""SELECT 'total' AS key, COUNT(*) AS calls,
                       COALESCE(SUM(CASE WHEN outcome != 'ok' THEN 1 ELSE 0 END), 0) AS failed,
                       COALESCE(SUM(input_tokens), 0) AS input_tokens,
                       COALESCE(SUM(output_tokens), 0) AS output_tokens,
                       COALESCE(SUM(cache_read_tokens), 0) AS cache_read,
                       COALESCE(SUM(cache_write_tokens), 0) AS cache_write,
                       COALESCE(SUM(cost_usd), 0) AS cost,
                       COALESCE(SUM(CASE WHEN cost_usd IS NULL AND outcome = 'ok' THEN 1 ELSE 0 END), 0) AS unpriced,
                       AVG(CASE WHEN outcome = 'ok' THEN latency_ms END) AS latency,
                       COALESCE(SUM(saved_usd), 0) AS saved
                FROM llm_calls {where}""",
            params,
        )
        assert row is not None
        return _row(row)

    async def tool_summary(self, *, since: datetime | None = None) -> list[tuple[str, int, int]]:
        """(tool name, calls, failures) since ``since``."""
        where, params = self._where(since)
        rows = await self.db.fetchall(
            "SELECT name, COUNT(*) AS calls, SUM(CASE WHEN ok = 0 THEN 1 ELSE 0 END) AS failed "
            f"FROM tool_calls {where} "
            "GROUP BY name ORDER BY calls DESC, name",
            params,
        )
        return [(r["name"], int(r["calls"]), int(r["failed"] or 0)) for r in rows]

    async def spent(self, *, since: datetime, sender: str | None = None, scope: str | None = None) -> float:
        """USD spent on model calls since ``since`` (by ``sender`` only, or in ``scope`` only, when given)."""
        stamp = since.astimezone(UTC).isoformat(timespec="seconds")
        if sender is not None:
            row = await self.db.fetchone(
                "SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE sender = ? AND ts >= ?",
                (sender, stamp))
        elif scope is not None:
            row = await self.db.fetchone(
                "SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE scope = ? AND ts >= ?",
                (scope, stamp))
        else:
            row = await self.db.fetchone("SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE ts >= ?",
                                         (stamp,))
        return float(row["usd"]) if row is not None else 0.0

    async def spent_on_item(self, item_id: int, *, since: datetime) -> float:
        """USD the runs of standing item ``item_id`` spent on model calls since ``since``."""
        row = await self.db.fetchone(
            "SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE schedule_item = ? AND ts >= ?",
            (item_id, since.astimezone(UTC).isoformat(timespec="seconds")))
        return float(row["usd"]) if row is not None else 0.0

    async def spent_by_sender(self, *, since: datetime, limit: int = 10) -> list[tuple[str, float]]:
        """(sender, USD) since ``since``, biggest spenders first (calls for no sender are left out)."""
        rows = await self.db.fetchall(
            "SELECT sender, COALESCE(SUM(cost_usd), 0) AS usd FROM llm_calls WHERE ts >= ? AND sender IS NOT NULL "
            "GROUP BY sender ORDER BY usd DESC, sender LIMIT ?",
            (since.astimezone(UTC).isoformat(timespec="seconds"), limit))
        return [(str(r["sender"]), float(r["usd"])) for r in rows]

    @staticmethod
    def _where(since: datetime | None) -> tuple[str, tuple[Any, ...]]:
        if since is None:
            return "", ()
        return "WHERE ts >= ?", (since.astimezone(UTC).isoformat(timespec="seconds"),)


def _row(r: Any) -> CostRow:
    return CostRow(
        key=str(r["key"]),
        calls=int(r["calls"] or 0),
        failed=int(r["failed"] or 0),
        input_tokens=int(r["input_tokens"] or 0),
        output_tokens=int(r["output_tokens"] or 0),
        cache_read_tokens=int(r["cache_read"] or 0),
        cache_write_tokens=int(r["cache_write"] or 0),
        cost_usd=float(r["cost"] or 0.0),
        unpriced=int(r["unpriced"] or 0),
        avg_latency_ms=float(r["latency"]) if r["latency"] is not None else None,
        saved_usd=float(r["saved"] or 0.0),
    )


def _tokens(n: int) -> str:
    if n >= 10_000_000:
        return f"{n / 1_000_000:.0f}M"
    if n >= 100_000:
        return f"{n / 1000:.0f}k"
    return str(n)


def format_report(rows: list[CostRow], total: CostRow, *, by: str, since_label: str) -> str:
    """A plain-text table for the terminal and chat: calls, fresh and cached input, the share cached,
    output, cost and what caching saved."""
    if total.calls == 0:
        return f"No model calls recorded {since_label}."
    head = (by, "calls", "failed", "fresh in", "cached in", "cached", "output", "cost USD", "saved USD", "avg ms")
    body = [
        (
            r.key, str(r.calls), str(r.failed), _tokens(r.fresh_input_tokens), _tokens(r.cache_read_tokens),
            f"{r.cached_share:.0%}", _tokens(r.output_tokens),
            f"{r.cost_usd:.4f}" + ("*" if r.unpriced else ""), f"{r.saved_usd:.4f}",
            f"{r.avg_latency_ms:.0f}" if r.avg_latency_ms is not None else "-",
        )
        for r in [*rows, total]
    ]
    widths = [max(len(row[i]) for row in (head, *body)) for i in range(len(head))]

    def line(cells: tuple[str, ...]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first, *(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))]).rstrip()

    out = [f"Model costs {since_label}, by {by} (estimated, USD):", line(head)]
    out += [line(cells) for cells in body[:-1]]
    out.append("-" * len(line(head)))
    out.append(line(body[-1]))
    if total.cache_read_tokens or total.cache_write_tokens:
        out.append(
            f"Prompt cache: {total.cache_read_tokens} input tokens read from it ({total.cached_share:.0%} of all "
            f"input), {total.cache_write_tokens} written to it; without it these calls would have cost "
            f"{total.cost_usd + total.saved_usd:.4f} USD, so it saved {total.saved_usd:.4f} USD."
        )
    if total.unpriced:
        out.append(f"* {total.unpriced} call(s) used a model with no price: add it under llm.prices in sabha.yaml")
    return "\n".join(out)
