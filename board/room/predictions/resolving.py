"""Resolving predictions: what ``/resolve``, ``sabha predictions resolve`` and the buttons of a
resolution request share, and the request itself.

A resolution request is sent to the owner in the place the meeting ran once a prediction's
resolve-by date has come: the claim, who made it and with what probability, and three buttons,
Yes / No / Can't tell, each the ``/resolve <n> yes|no|unknown`` command (a press is the owner
sending that command, so only the owner's press counts). Resolving is one conditional update:
a second press, or ``/resolve`` after the CLI did it, is told how it was already resolved.
"""

from __future__ import annotations

from datetime import datetime

from board.envelope import Button
from board.room.predictions.store import Outcome, PredictionRow, PredictionStore, parse_outcome
from board.workspace.quoting import FieldLimit, plain_line

__all__ = ["RESOLVE_USAGE", "describe", "request_buttons", "request_text", "resolve_words"]

RESOLVE_USAGE = "Resolve a prediction with /resolve <n> yes|no|unknown (the numbers are in /predictions)."

_SAID = {Outcome.YES: "came true", Outcome.NO: "did not come true", Outcome.UNKNOWN: "can't tell (not scored)"}


def describe(row: PredictionRow) -> str:
    """``#4 finance: "CAC stays under $50 through Q1" p=0.70 by 2027-03-31 (meeting m-..)``."""
    claim = plain_line(row.claim, FieldLimit.TITLE)
    state = "" if row.outcome is None else f" [{_SAID[row.outcome]}]"
    return (f"#{row.id} {row.role}: \u201c{claim}\u201d p={row.probability:.2f} by {row.resolve_by} "
            f"(meeting {row.meeting_id}){state}")


def request_text(row: PredictionRow) -> str:
    """The resolution request the owner gets at the resolve-by date."""
    topic = plain_line(row.topic, FieldLimit.TITLE)
    claim = plain_line(row.claim, FieldLimit.TITLE)
    return (f"Time to check a prediction (#{row.id}). In the meeting on \u201c{topic}\u201d, {row.role} said "
            f"\u201c{claim}\u201d with probability {row.probability:.2f}, to be checked by {row.resolve_by}. "
            f"Did it come true? Answer with the buttons or /resolve {row.id} yes|no|unknown.")


def request_buttons(row: PredictionRow) -> tuple[Button, ...]:
    """Yes / No / Can't tell under a resolution request."""
    return (Button("Yes", f"/resolve {row.id} yes"), Button("No", f"/resolve {row.id} no"),
            Button("Can't tell", f"/resolve {row.id} unknown"))


async def resolve_words(store: PredictionStore, words: list[str], *, by: str, now: datetime,
                        place: tuple[str, str] | None = None, command: str = "/resolve") -> tuple[bool, str]:
    """``["7", "yes"]`` -> (resolved now, what to tell the user). Nothing changes on bad input or twice."""
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
    scored = "" if outcome is Outcome.UNKNOWN else " /stats shows the advisors' track record."
    return True, f"Recorded: {describe(row)}.{scored}"
