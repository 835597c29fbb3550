"""The brief: one message per run of a standing brief saying what changed since the last one, built from
the state db first and written up by a model only when something did.

:func:`gather_facts` reads the board's state (its tables, read-only) into facts, each a stable key and a
line: action items due this week or overdue (``action:<id>:<due>:due|overdue``), predictions resolving this
week or past their date, decisions awaiting the owner's ratification, the latest meetings held, this
month's spend against the daily budget (the briefs' own calls left out), and each advisor's track record
(resolved predictions and Brier score).

A brief compares the keys with the ones of its previous run that went out (``standing_runs``, its
scheduled row done: sent or may have arrived). No new key means nothing changed, and the answer is the
one line "Nothing new since Mon 30 Nov." with **no model call at all** ($0 in the ledger). When keys are
new, the cheap model (:class:`BriefWriter`, ``purpose='brief'``, session ``standing:<id>``) writes a
short opening over them, and the message lists what is new and how many things still stand; a model that
fails leaves the list alone, which says it all anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Protocol

from board.llm.purpose import CallPurpose
from board.schedule.dates import describe
from board.schedule.work import parse_stamp, stamp

if TYPE_CHECKING:
    from board.storage import Database

__all__ = ["BRIEF_PURPOSE", "BriefText", "BriefWriter", "brief_session", "compose_brief", "gather_facts"]

#: The ``purpose`` of a brief's model call in the ledger (``llm_calls.purpose``).
BRIEF_PURPOSE = CallPurpose.BRIEF
#: The most lines of one kind a brief lists.
_MOST = 8
_WEEK = timedelta(days=7)


def brief_session(item_id: int) -> str:
    """The session key a standing item's model calls are recorded under (``llm_calls.session_key``)."""
    return f"standing:{item_id}"


class BriefWriter(Protocol):
    """The cheap model writing a brief's opening over ``facts`` (one a line); None when it wrote none (the model
    failed, or the daily budget is spent and it was not asked)."""

    async def __call__(self, item_id: int, facts: str) -> str | None: ...


@dataclass(frozen=True)
class BriefText:
    """What a brief run says, the facts it compared, and the model write-ups it got (0: none asked for, or none
    written)."""

    text: str
    facts: dict[str, str]
    model_calls: int
    changed: bool


def _day(moment: datetime, zone: tzinfo) -> str:
    return f"{moment.astimezone(zone):%a %d %b}"


async def gather_facts(db: Database, now: datetime, zone: tzinfo = UTC, *, daily_budget: float | None = None,
                       ) -> dict[str, str]:
    """The facts a brief compares (key -> line); see the module docstring."""
    facts: dict[str, str] = {}
    soon = stamp(now + _WEEK)
    for r in await db.fetchall(
            "SELECT id, task, owner, due_at FROM action_items WHERE status = 'open' AND due_at IS NOT NULL "
            "AND due_at <= ? ORDER BY due_at, id", (soon,)):
        due = parse_stamp(r["due_at"])
        late = due < now
        facts[f"action:{r['id']}:{r['due_at']}:{'overdue' if late else 'due'}"] = (
            f"Action #{r['id']} {r['task']} ({r['owner']}): {'overdue since' if late else 'due'} "
            f"{describe(due, zone)}")
    for r in await db.fetchall(
            "SELECT id, claim, role, probability, resolve_by FROM predictions WHERE outcome IS NULL "
            "AND resolve_by <= ? ORDER BY resolve_by, id", ((now + _WEEK).date().isoformat(),)):
        facts[f"prediction:{r['id']}:{r['resolve_by']}"] = (
            f"Prediction #{r['id']} ({r['role']}, {float(r['probability']):.0%}) resolves by {r['resolve_by']}: "
            f"{r['claim']} (/resolve {r['id']} yes|no)")
    for r in await db.fetchall(
            "SELECT id, topic FROM meetings WHERE decision IS NOT NULL AND (ratification IS NULL OR "
            "ratification = 'proposed') ORDER BY started_at, id"):
        facts[f"decision:{r['id']}"] = f"Decision awaiting your ratification: {r['topic']} (/ratify {r['id']})"
    for r in await db.fetchall(
            "SELECT id, topic, stop_reason FROM meetings WHERE status = 'ended' ORDER BY ended_at DESC, id DESC "
            "LIMIT 20"):
        facts[f"meeting:{r['id']}"] = f"Meeting held: {r['topic']} ({r['stop_reason'] or 'ended'})"
    await _money(db, now, facts, daily_budget)
    for r in await db.fetchall(
            "SELECT role, COUNT(*) AS n, AVG((probability - CASE WHEN outcome = 'yes' THEN 1.0 ELSE 0.0 END) * "
            "(probability - CASE WHEN outcome = 'yes' THEN 1.0 ELSE 0.0 END)) AS brier FROM predictions "
            "WHERE outcome IN ('yes', 'no') GROUP BY role ORDER BY role"):
        n, score = int(r["n"]), float(r["brier"])
        facts[f"track:{r['role']}:{n}:{score:.3f}"] = (
            f"{r['role']}'s track record: Brier {score:.3f} over {n} resolved prediction{'s' * (n != 1)}")
    return facts


async def _money(db: Database, now: datetime, facts: dict[str, str], daily_budget: float | None) -> None:
    month = f"{now:%Y-%m}"
    row = await db.fetchone(
        "SELECT COALESCE(SUM(cost_usd), 0) AS spent FROM llm_calls WHERE ts >= ? AND ts < ? "
        "AND (purpose IS NULL OR purpose != ?)", (f"{month}-01", _next_month(now), BRIEF_PURPOSE))
    spent = float(row["spent"]) if row is not None else 0.0
    if spent >= 0.005:
        budget = f" (daily budget ${daily_budget:.2f})" if daily_budget else " (no daily budget set)"
        facts[f"spend:{month}:{spent:.2f}"] = f"Spent this month: ${spent:.2f}{budget}"


def _next_month(now: datetime) -> str:
    return f"{now.year + now.month // 12:04d}-{now.month % 12 + 1:02d}-01"


async def compose_brief(item_id: int, facts: Mapping[str, str], previous: Mapping[str, str] | None,
                        last_run: datetime | None, writer: BriefWriter, zone: tzinfo) -> BriefText:
    """The brief over ``facts`` against ``previous`` (the last run's, None: the first run); a model is
    asked only when a key is new."""
    new = [key for key in facts if previous is None or key not in previous]
    since = f"since {_day(last_run, zone)}" if last_run is not None else "so far"
    if not new:
        if previous is None:
            text = ("Nothing to report yet: no action items due, predictions resolving, decisions awaiting you, "
                    "meetings or spend.")
        else:
            text = f"Nothing new {since}."
        return BriefText(text, dict(facts), 0, False)
    still = len(facts) - len(new)
    lines = [facts[key] for key in new]
    listed = "\n".join(f"\u2022 {line}" for line in lines[:_MOST * 3])
    if len(lines) > _MOST * 3:
        listed += f"\n\u2022 and {len(lines) - _MOST * 3} more"
    opening = await writer(item_id, "\n".join(lines))
    parts = [f"Brief: what changed {since}", *([opening.strip()] if opening and opening.strip() else []),
             listed]
    if still:
        parts.append(f"Still standing from before: {still} item{'s' * (still != 1)}.")
    return BriefText("\n\n".join(parts), dict(facts), 0 if opening is None else 1, True)
