"""Resolving predictions: what ``/resolve``, ``sabha predictions resolve`` and the buttons of a
resolution request share, and the request itself.

A resolution request is sent to the owner in the place the meeting ran once a prediction's
resolve-by date has come: the claim, who made it and with what probability, and three buttons,
Yes / No / Can't tell, each the ``/resolve <n> yes|no|unknown`` command (a press is the owner
sending that command, so only the owner's press counts). Resolving is one conditional update:
a second press, or ``/resolve`` after the CLI did it, is told how it was already resolved.

The request is scheduled work (:mod:`board.schedule`, kind ``resolution``, key
``resolution:prediction:<n>``, due at the start of the resolve-by date, UTC): claimed before it is
sent, so it goes out once across restarts and kills. :func:`schedule_resolutions` schedules every
open prediction that has no request yet (run when a meeting ends; idempotent by key); resolving a
prediction first cancels its request; a request that comes due for a prediction resolved meanwhile
sends nothing.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, tzinfo

from board.decisions.predictions.store import Outcome, PredictionRow, PredictionStore, parse_outcome
from board.envelope import Button, Reply
from board.schedule import NewWork, Place, Schedule, ScheduledWork, WorkHandler, WorkKind
from board.storage import Database
from board.workspace.quoting import FieldLimit, plain_line

__all__ = ["RESOLVE_USAGE", "describe", "request_buttons", "request_key", "request_text", "resolution_handler",
           "resolve_words", "schedule_resolutions"]

log = logging.getLogger("sabha.predictions")

RESOLVE_USAGE = "Resolve a prediction with /resolve <n> yes|no|unknown (the numbers are in /predictions)."

_SAID = {Outcome.YES: "came true", Outcome.NO: "did not come true", Outcome.UNKNOWN: "can't tell (not scored)"}


def describe(row: PredictionRow) -> str:
    """``#4 finance: "CAC stays under $50 through Q1" p=0.70 by 2027-03-31 (meeting m-..)``."""
    claim = plain_line(row.claim, FieldLimit.TITLE)
    state = "" if row.outcome is None else f" [{_SAID[row.outcome]}]"
    return (f"#{row.id} {row.role}: \u201c{claim}\u201d p={row.probability:.2f} by {row.resolve_by} "
            f"(meeting {row.meeting_id}){state}")


def request_text(row: PredictionRow) -> str:
    """The resolution request the owner gets at the resolve-by date; how to answer is its buttons
    (:func:`request_buttons`; shown as their commands where a channel has no buttons)."""
    topic = plain_line(row.topic, FieldLimit.TITLE)
    claim = plain_line(row.claim, FieldLimit.TITLE)
    return (f"Time to check a prediction (#{row.id}). In the meeting on \u201c{topic}\u201d, {row.role} said "
            f"\u201c{claim}\u201d with probability {row.probability:.2f}, to be checked by {row.resolve_by}. "
            "Did it come true?")


def request_buttons(row: PredictionRow) -> tuple[Button, ...]:
    """Yes / No / Can't tell under a resolution request."""
    return (Button("Yes", f"/resolve {row.id} yes"), Button("No", f"/resolve {row.id} no"),
            Button("Can't tell", f"/resolve {row.id} unknown"))


async def resolve_words(store: PredictionStore, words: list[str], *, by: str, now: datetime,
                        place: tuple[str, str] | None = None, command: str = "/resolve",
                        schedule: Schedule | None = None) -> tuple[bool, str]:
    """``["7", "yes"]`` -> (resolved now, what to tell the user). Nothing changes on bad input or twice.
    Resolved now, its resolution request (``schedule``) is cancelled if it has not gone out yet."""
    if len(words) < 2 or not words[0].lstrip("#").isdigit():
        return False, RESOLVE_USAGE
    number = int(words[0].lstrip("#"))
    outcome = parse_outcome(" ".join(words[1:]))
    if outcome is None:
        return False, (f"{' '.join(words[1:])!r} is not an outcome: say yes (it came true), no (it did not) or "
                       f"unknown (can't tell): {command} {number} yes")
    result = await store.resolve(number, outcome, by=by, now=now, place=place)
    if result.row is None:
        return False, f"No prediction #{number} here; /predictions lists the open ones."
    row = result.row
    if not result.changed:
        when = (row.resolved_at or "")[:16].replace("T", " ")
        return False, (f"Prediction #{number} was already resolved: {_SAID[row.outcome or Outcome.UNKNOWN]}"
                       f" ({when} by {row.resolved_by}). Nothing changed.")
    if schedule is not None:
        await schedule.cancel(request_key(number), f"resolved {outcome.value}")
    scored = "" if outcome is Outcome.UNKNOWN else " /stats shows the advisors' track record."
    return True, f"Recorded: {describe(row)}.{scored}"


def request_key(prediction_id: int) -> str:
    """The resolution request's idempotency key."""
    return f"resolution:prediction:{prediction_id}"


async def schedule_resolutions(schedule: Schedule, db: Database, *, limit: int = 500, zone: tzinfo = UTC) -> int:
    """Schedule the resolution request of every open prediction that has none (made in a meeting
    that ran somewhere a request can go), due when its resolve-by date begins in the board's time
    zone ``zone``; how many were added."""
    rows = await db.fetchall(
        "SELECT p.id FROM predictions p JOIN meetings m ON m.id = p.meeting_id "
        "LEFT JOIN scheduled_work w ON w.key = 'resolution:prediction:' || p.id "
        "WHERE p.outcome IS NULL AND w.id IS NULL AND m.channel IS NOT NULL AND m.chat_id IS NOT NULL "
        "ORDER BY p.id LIMIT ?", (limit,))
    store = PredictionStore(db)
    added = 0
    for r in rows:
        row = await store.get(int(r["id"]))
        if row is None or row.channel is None or row.chat_id is None:
            continue
        due = datetime.fromisoformat(row.resolve_by).replace(tzinfo=zone).astimezone(UTC)
        await schedule.add(NewWork(WorkKind.RESOLUTION, key=request_key(row.id), due_at=due,
                                   place=Place(row.channel, row.chat_id, row.thread_id),
                                   payload={"prediction": row.id}))
        added += 1
    return added


def resolution_handler(db: Database) -> WorkHandler:
    """The handler of due resolution requests: the request with its buttons, or nothing when the
    prediction was resolved (or removed) meanwhile."""
    store = PredictionStore(db)

    async def handle(work: ScheduledWork) -> Reply | None:
        row = await store.get(int(work.payload.get("prediction", 0)))
        if row is None or not row.is_open:
            log.info("schedule: %s: nothing to ask (%s)", work.key, "no such prediction" if row is None
                     else f"already resolved {row.outcome}")
            return None
        return work.reply(request_text(row), buttons=request_buttons(row))

    return handle
