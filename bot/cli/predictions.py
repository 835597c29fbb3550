"""``sabha predictions list|resolve`` and ``sabha board stats``: the advisors' predictions and track record.

``predictions list`` prints the open predictions members made in meetings (``--all``: the resolved
ones too; ``--due``: only those whose resolve-by date has come), soonest first, each with the number
``predictions resolve N yes|no|unknown`` takes. ``board stats`` prints every advisor's Brier score,
how many were resolved and the reliability table, as ``/stats`` does in a chat. Reading never
creates a state database.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from bot.cli.common import emit
from bot.cli.where import board_command

if TYPE_CHECKING:
    from board.app import Parts

__all__ = ["add_parsers", "cmd_board", "cmd_predictions"]

NO_PREDICTIONS = "no predictions yet: members state them in board meetings (sabha meeting \"...\")"


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``predictions`` and ``board`` to the ``sabha`` parser."""
    p = sub.add_parser("predictions", parents=[common], help="predictions members made in meetings; resolve one",
                       description="Checkable predictions the board's members made in meetings (a claim, the "
                                   "probability they gave it, the date by which it can be checked). "
                                   "`sabha predictions resolve N yes|no|unknown` records how one turned out.")
    psub = p.add_subparsers(dest="predictions_command", metavar="ACTION", required=True)
    lp = psub.add_parser("list", parents=[common], help="open predictions, soonest resolve-by date first")
    lp.add_argument("--all", action="store_true", help="include resolved predictions")
    lp.add_argument("--due", action="store_true", help="only those whose resolve-by date has come")
    lp.add_argument("--role", help="only this advisor's")
    lp.set_defaults(handler=board_command(cmd_predictions, writes=False, empty=NO_PREDICTIONS))
    rp = psub.add_parser("resolve", parents=[common], help="record how prediction N turned out",
                         description="yes: it came true; no: it did not; unknown: can't tell (not scored).")
    rp.add_argument("number", metavar="N", help="the prediction's number (see `sabha predictions list`)")
    rp.add_argument("outcome", metavar="yes|no|unknown")
    rp.set_defaults(handler=board_command(cmd_predictions, writes=True))

    p = sub.add_parser("board", parents=[common], help="the board's track record (sabha board stats)",
                       description="`sabha board stats`: each advisor's Brier score over its resolved "
                                   "predictions, how many, and the reliability table (stated probability "
                                   "against how often it came true).")
    bsub = p.add_subparsers(dest="board_command", metavar="ACTION", required=True)
    bsub.add_parser("stats", parents=[common], help="each advisor's Brier score and reliability table")
    p.set_defaults(handler=board_command(cmd_board, writes=False, empty=NO_PREDICTIONS))


async def cmd_predictions(parts: Parts, args: argparse.Namespace) -> int:
    """``predictions list`` | ``predictions resolve N OUTCOME``."""
    from board.decisions.predictions.resolving import describe, resolve_words
    from board.decisions.predictions.store import PredictionStore

    store = PredictionStore(parts.db)
    if args.predictions_command == "resolve":
        changed, text = await resolve_words(store, [args.number, args.outcome], by="cli", now=parts.clock.now(),
                                              command="sabha predictions resolve", schedule=parts.schedule)
        if not changed:
            sys.stderr.write(f"sabha: {text.replace('/predictions', '`sabha predictions list`')}\n")
            return 2
        emit(text.replace("/stats", "`sabha board stats`"))
        return 0
    if args.due:
        rows = await store.due(parts.clock.now().date().isoformat(), limit=10_000)
    else:
        rows = await store.query(status="all" if args.all else "open", role=args.role, limit=10_000)
    if args.role:
        rows = [r for r in rows if r.role == args.role]
    if not rows:
        emit("No predictions to show." + ("" if args.all else " (`--all` includes the resolved ones.)"))
        return 0
    emit("\n".join([f"{len(rows)} prediction(s); resolve one with `sabha predictions resolve N yes|no|unknown`:",
                    *(describe(r) for r in rows)]))
    return 0


async def cmd_board(parts: Parts, args: argparse.Namespace) -> int:
    """``board stats``."""
    from board.commands.predictions import stats_text
    from board.decisions.predictions.store import PredictionStore

    text = await stats_text(PredictionStore(parts.db),
                            min_resolved=parts.settings.meetings.min_resolved_predictions,
                            fenced=False)
    emit(text.replace("/meeting <topic>", "sabha meeting \"...\"").replace(
        "/resolve <n> yes|no|unknown", "sabha predictions resolve N yes|no|unknown"))
    return 0
