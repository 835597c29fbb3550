"""Slash commands for predictions and the advisors' track record: ``/predictions [all]``,
``/resolve <n> yes|no|unknown`` and ``/stats``; the resolution requests at the resolve-by date.

``/predictions`` lists the open predictions members made in meetings (soonest resolve-by first;
the owner sees all, anyone else those of meetings started in their chat); ``/resolve`` records
how one turned out, once (see :mod:`board.decisions.predictions.resolving`); ``/stats`` shows each
advisor's Brier score, how many were resolved and the reliability table, or "too few resolved
predictions (n=..)" below the board's minimum. The board's schedule sends the resolution requests
(:func:`board.decisions.predictions.resolving.resolution_handler`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, tzinfo

from board.commands import review
from board.commands.host import CommandHost
from board.decisions.predictions.resolving import describe, resolution_handler, resolve_words
from board.decisions.predictions.scoring import format_stats
from board.decisions.predictions.store import PredictionStore
from board.decisions.predictions.tally import read_tallies, records_of, totals_of
from board.envelope import Envelope
from board.room.convene import BoardRoom
from board.room.settings import MeetingSettings
from board.routing.router import Route
from board.schedule import Schedule, WorkKind

__all__ = ["register", "stats_text"]


async def stats_text(store: PredictionStore, *, min_resolved: int, fenced: bool = True) -> str:
    """Every advisor's track record, as ``/stats`` (``fenced``: tables as code blocks) and ``sabha board stats``
    print it."""
    tallies = await read_tallies(store.db)  # kept by the db as predictions change: one read, not every row
    records = records_of(tallies, min_resolved=min_resolved)
    text = format_stats(records, min_resolved=min_resolved, fenced=fenced)
    if totals_of(tallies).demo:  # made up by `sabha demo`: say so
        text += "\n(These scores include the made-up [demo] history; `sabha demo --remove` in a terminal deletes it.)"
    elif not any(r.scored for r in records):  # a new board: how to see one
        text += ("\n(To see a score now, `sabha demo` in a terminal adds a labelled demo history; "
                 "`sabha demo --remove` takes it away.)")
    return text


def register(host: CommandHost, room: BoardRoom, schedule: Schedule, settings: Callable[[], MeetingSettings],
             zone: tzinfo = UTC) -> None:
    """Add the prediction commands to ``host``, the resolution requests to ``schedule``, and the reviews of
    decisions (:mod:`board.commands.review`); ``settings``: the board's current meeting settings; ``zone``:
    the board's time zone (review dates, the moment a resolve-by date begins)."""
    review.register(host, room, schedule, settings, zone)
    db, clock = schedule.store.db, schedule.clock
    store = PredictionStore(db)
    schedule.register(WorkKind.RESOLUTION, resolution_handler(db))

    def place_of(envelope: Envelope) -> tuple[str, str] | None:
        return None if envelope.is_owner else (envelope.channel, envelope.chat_id)

    async def predictions(envelope: Envelope, route: Route) -> str:
        everything = route.text.strip().lower() == "all"
        rows = await store.query(status="all" if everything else "open", place=place_of(envelope))
        if not rows:
            return ("No open predictions. Members state them in board meetings; /predictions all lists the "
                    "resolved ones too.")
        head = "Predictions" if everything else "Open predictions"
        return "\n".join([f"{head} ({len(rows)}); resolve one with /resolve <n> yes|no|unknown:",
                          *(describe(row) for row in rows)])

    async def resolve(envelope: Envelope, route: Route) -> str:
        _, text = await resolve_words(store, route.text.split(), by=envelope.sender or envelope.channel,
                                      now=clock.now(), place=place_of(envelope), schedule=schedule)
        return text

    async def stats(envelope: Envelope, route: Route) -> str:
        return await stats_text(store, min_resolved=settings().min_resolved_predictions)

    host.register_command("predictions", predictions, "/predictions [all]: predictions made in meetings")
    host.register_command("resolve", resolve, "/resolve <n> yes|no|unknown: say how prediction n turned out",
                          owner_only=True)
    host.register_command("stats", stats, "/stats: each advisor's track record (Brier score, reliability)")
