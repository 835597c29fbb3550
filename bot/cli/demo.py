"""``sabha demo`` and ``sabha demo --remove``: a labelled demo history, so a new board's ``/stats`` shows a
Brier score at once.

A score needs five resolved predictions per advisor, which takes five meetings and their resolve-by dates;
a newcomer walking through ``make run`` would meet only "too few resolved predictions". ``sabha demo``
writes five past meetings (:data:`DEMO_MEETINGS`), each labelled ``[demo]`` in its topic, with an id
starting ``demo-`` and minutes saying what they are, and each specialist's prediction in them resolved
(their model is ``demo``), some right and some wrong, so the advisors' scores differ. ``sabha demo
--remove`` deletes exactly those rows (ids ``demo-...``), never a meeting of the board's own. The demo is
for a new board, also one that held its first meetings (the walk-through holds one before ``/stats``); once
an advisor has a score of its own it refuses, so a real track record is never blurred by made-up
predictions. The meetings carry no decision, so no later meeting recalls them as precedent.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from board.room.demo_history import DEMO_PREFIX
from bot.cli.common import UserError, emit
from bot.cli.where import board_command

if TYPE_CHECKING:
    from board.app import Parts

__all__ = ["DEMO_MEETINGS", "DEMO_MODEL", "DEMO_PREFIX", "DemoMeeting", "add_parsers", "cmd_demo", "demo_advisors"]

#: The model the demo predictions are recorded with (what ``/stats`` reads to say a score is from the demo).
DEMO_MODEL = "demo"


@dataclass(frozen=True)
class DemoMeeting:
    """One past meeting of the demo: its question, how many days ago, and five calls (the probability an
    advisor gave and whether it came true): the board's advisors take them in turn (:func:`demo_call`)."""

    question: str
    days_ago: int
    calls: tuple[tuple[float, bool], ...]


#: On the default board: Research is well calibrated, Content overconfident, Finance fair, Strategy hopeful,
#: Critic doubts; another roster's advisors take the same five calls in turn.
DEMO_MEETINGS = (
    DemoMeeting("Should we raise prices by 10% for new customers?", 84,
                ((0.7, True), (0.9, False), (0.65, True), (0.6, True), (0.3, False))),
    DemoMeeting("Should we hire a second support engineer?", 70,
                ((0.6, True), (0.8, True), (0.7, False), (0.75, True), (0.25, False))),
    DemoMeeting("Should we launch a referral programme?", 56,
                ((0.3, False), (0.85, False), (0.6, True), (0.7, False), (0.35, True))),
    DemoMeeting("Should we move hosting to a cheaper provider?", 42,
                ((0.8, True), (0.9, True), (0.75, True), (0.65, True), (0.3, False))),
    DemoMeeting("Should we attend the spring trade fair?", 28,
                ((0.4, False), (0.8, False), (0.55, False), (0.8, True), (0.2, False))),
)


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``demo`` to the ``sabha`` parser."""
    p = sub.add_parser("demo", parents=[common], help="fill a new board with a labelled demo history "
                                                       "(--remove takes it away)",
                       description="Five past [demo] meetings whose predictions are resolved, so /stats and "
                                   "`sabha board stats` show each advisor's Brier score at once. Only on a board "
                                   "where no advisor has a score of its own yet; `sabha demo --remove` deletes "
                                   "the demo history and nothing else.")
    p.add_argument("--remove", action="store_true", help="delete the demo history (never the board's own meetings)")
    p.set_defaults(handler=board_command(cmd_demo, writes=True))


async def cmd_demo(parts: Parts, args: argparse.Namespace) -> int:
    """``demo`` | ``demo --remove``."""
    if args.remove:
        removed = await _remove(parts)
        emit(f"removed the demo history: {removed} [demo] meetings and their predictions; your own meetings "
             "are untouched" if removed else "no demo history on this board: nothing to remove")
        return 0
    if await _count(parts, own=False):
        emit("the demo history is already on this board (`sabha meetings list` shows it as [demo]); "
             "`sabha demo --remove` takes it away")
        return 0
    roles = demo_advisors(parts)
    if not roles:
        raise UserError("this board has no advisors besides the chair (board.enabled: false, or a roster without "
                        "specialists): the demo history scores advisors, so there is nothing to show")
    scored = await _scored_role(parts, parts.settings.meetings.min_resolved_predictions)
    if scored is not None:
        role, n = scored
        raise UserError(f"this board has a track record of its own ({role}: {n} resolved predictions): the demo "
                        "history is for a new board, so that made-up predictions never blur a real score")
    await _write(parts, roles)
    emit(f"added a demo history: {len(DEMO_MEETINGS)} past [demo] meetings whose {len(roles)} advisors' "
         "predictions are resolved. See the scores with /stats in `sabha chat` (or `sabha board stats`); "
         "`sabha demo --remove` takes the demo away again.")
    return 0


def demo_advisors(parts: Parts) -> tuple[str, ...]:
    """Who predicts in the demo: the board's own specialists (its roster's; not the chair, not the roundtable's
    summarizer, who makes no predictions)."""
    from board.roles import GENERAL
    from board.room.convene import SUMMARIZER

    return tuple(r for r in parts.settings.roster.specialists if r not in (GENERAL, SUMMARIZER))


def demo_call(meeting: DemoMeeting, index: int) -> tuple[float, bool]:
    """The call the ``index``-th advisor made in ``meeting`` (the five calls taken in turn)."""
    return meeting.calls[index % len(meeting.calls)]


async def _count(parts: Parts, *, own: bool) -> int:
    """How many meetings are the board's own (``own``) or the demo's."""
    where = "NOT LIKE" if own else "LIKE"
    row = await parts.db.fetchone(f"SELECT count(*) AS n FROM meetings WHERE id {where} ?", (DEMO_PREFIX + "%",))
    return int(row["n"]) if row else 0


async def _scored_role(parts: Parts, minimum: int) -> tuple[str, int] | None:
    """An advisor with a score of its own (``minimum`` resolved yes/no predictions outside the demo), if any."""
    row = await parts.db.fetchone(
        "SELECT role, count(*) AS n FROM predictions WHERE meeting_id NOT LIKE ? AND outcome IN ('yes', 'no') "
        "GROUP BY role ORDER BY n DESC LIMIT 1", (DEMO_PREFIX + "%",))
    return (str(row["role"]), int(row["n"])) if row and int(row["n"]) >= max(1, minimum) else None


async def _write(parts: Parts, roles: tuple[str, ...]) -> None:
    """The demo meetings and the resolved predictions of ``roles``, dated in the past."""
    from board.decisions.predictions.store import Outcome, PredictionStore
    from board.llm.offline_meeting import prediction_claim
    from board.llm.offline_topic import topic_of

    now = parts.clock.now()
    store = PredictionStore(parts.db)
    for number, meeting in enumerate(DEMO_MEETINGS, start=1):
        held = now - timedelta(days=meeting.days_ago)
        meeting_id, topic = f"{DEMO_PREFIX}{number}", f"[demo] {meeting.question}"
        await parts.db.execute(
            "INSERT INTO meetings(id, topic, roster, chair, status, stop_reason, started_at, ended_at, minutes) "
            "VALUES (?, ?, ?, 'general', 'ended', 'completed', ?, ?, ?)",
            (meeting_id, topic, parts.settings.roster.name, _stamp(held), _stamp(held + timedelta(minutes=4)),
             _minutes(topic)))
        for index, role in enumerate(roles):
            probability, came_true = demo_call(meeting, index)
            await parts.db.execute("INSERT INTO meeting_participants(meeting_id, role, status) "
                                   "VALUES (?, ?, 'present')", (meeting_id, role))
            claim = _Claim(prediction_claim(role, topic_of(meeting.question)), probability,
                           (held + timedelta(days=14)).date().isoformat())
            row_id = await store.record(meeting_id, 1, role, claim, model=DEMO_MODEL, now=held)
            await store.resolve(row_id, Outcome.YES if came_true else Outcome.NO, by="demo",
                                now=held + timedelta(days=14))


async def _remove(parts: Parts) -> int:
    """Delete the demo meetings and every row that hangs on them; how many meetings went."""
    demo = await _count(parts, own=False)
    like = (DEMO_PREFIX + "%",)
    for table in ("predictions", "meeting_participants", "meeting_statements", "meeting_events", "action_items"):
        await parts.db.execute(f"DELETE FROM {table} WHERE meeting_id LIKE ?", like)  # the tables are named above
    await parts.db.execute("DELETE FROM meetings WHERE id LIKE ?", like)
    return demo


@dataclass(frozen=True)
class _Claim:
    claim: str
    probability: float
    resolve_by: str


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def _minutes(topic: str) -> str:
    return (f"# Board meeting: {topic}\n\nDemo history, made up by `sabha demo` so that /stats shows a Brier score "
            "on a new board. Nobody met and nothing was decided. `sabha demo --remove` deletes it.\n")
