"""The meeting's record: opened before the first word, closed with the minutes.

:func:`open_record` stores the meeting (with what resuming it after a restart takes,
:func:`board.room.meeting.resume.spec`) and its participants and announces it;
:func:`close_record` renders the minutes (the workspace's ``minutes.md.j2``; the files and the tool
results used are listed as evidence, and what was written in at the table with the answers, even by a template
that leaves them out), stores the end,
the decision and its action items, and tells the subscribers; :func:`minutes_context` is what
the minutes template sees.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from board.room.decision import Decision, format_stance
from board.room.evidence import append_evidence, minutes_entries
from board.room.meeting.cited import append_tool_evidence
from board.room.meeting.cited import minutes_entries as tool_entries
from board.room.meeting.context import MeetingContext
from board.room.meeting.convergence import models_differ
from board.room.meeting.events import MeetingEventKind, MeetingResult, StopReason
from board.room.meeting.resume import settle_writes, spec
from board.room.meeting.seat import append_table, read_contributions
from board.room.meeting.seat import minutes_entries as table_entries
from board.room.meeting.state import MeetingState
from board.room.table import MeetingTable, PlaceKind

__all__ = ["close_record", "minutes_context", "open_record", "reopen_record"]

log = logging.getLogger("sabha.meeting")


async def open_record(m: MeetingContext, s: MeetingState) -> None:
    """Store the meeting and who is in it; announce it."""
    await m.store.create(m.id, m.topic, m.roster, m.chair.role, place=m.base_ctx.envelope, revisit_of=m.revisit_of,
                         resume=spec(m))  # what rebuilding it after a restart takes
    await reopen_record(m)
    s.recorded.set()
    await m.emit(MeetingEventKind.STARTED, s.current_round, role=m.chair.role, text=m.topic,
                 participants=[p.role for p in m.specialists], warnings=list(s.warnings),
                 challenger=m.challenger or None, models=dict(m.models))


async def reopen_record(m: MeetingContext) -> None:
    """Store where the meeting is shown and who is in it (idempotent: a meeting resumed before its framing was
    stored does it again, in case Sabha stopped between the meeting's row and these)."""
    envelope = m.base_ctx.envelope
    writes = [m.store.present(m.id, [p.role for p in [m.chair, *m.specialists]])]
    if envelope is not None:  # a message written there finds the meeting (board.room.table)
        writes.append(MeetingTable(m.store.db).add_place(m.id, envelope.channel, envelope.chat_id,
                                                         envelope.thread_id, PlaceKind.ORIGIN))
    await asyncio.gather(*writes)  # independent rows: handed to the db together, not one round trip after another


async def _written(m: MeetingContext, s: MeetingState) -> None:
    """Until the meeting's queued writes are stored; one that failed was said where it failed (the meeting's
    stop reason), and the record is closed all the same."""
    try:
        await settle_writes(m, s)
    except Exception as exc:  # noqa: BLE001 - closing the record must not fail on an earlier write
        log.warning("meeting %s: a write before its end failed (%s)", m.id, exc)


def _rounds(m: MeetingContext, s: MeetingState) -> list[list[dict[str, Any]]]:
    show_models = models_differ(m, s)
    profiles = m.profiles
    return [[{"role": r, "name": profiles[r].name, "emoji": profiles[r].emoji, "text": t,
              "stance": format_stance(stances.get(r)) if stances else None,
              "model": s.spoke_with.get(r) or m.models.get(r) if show_models else None}
             for r, t in statements.items()]
            for statements, stances in zip(s.rounds, s.stances, strict=False)]


def minutes_context(m: MeetingContext, s: MeetingState, stop_reason: str | None,
                    decision: Decision | None) -> dict[str, Any]:
    """What the minutes template sees."""
    participants = [{"role": p.role, "name": p.name, "emoji": p.emoji,
                     "status": "absent" if p.role in s.absent else "present",
                     "reason": s.absent.get(p.role)} for p in [m.chair, *m.specialists]]
    notes = []
    if s.challenge_round is not None and len(s.rounds) >= s.challenge_round:
        notes.append(f"Round 1 was unanimous, so round {s.challenge_round} asked each member for the "
                     "strongest case against before convergence could be declared.")
    return {
        "peer_ranking": s.peer_ranking, "notes": notes, "challenge_round": s.challenge_round,
        "meeting": {"id": m.id, "topic": m.topic, "roster": m.roster, "started_at": s.started_at,
                    "ended_at": datetime.now(UTC).isoformat(timespec="seconds"), "stop_reason": stop_reason,
                    "cost_usd": s.spent_usd},
        "agenda": s.agenda, "evidence": minutes_entries(m.evidence), "tool_evidence": tool_entries(m, s.cited),
        "participants": participants, "rounds": _rounds(m, s), "warnings": s.warnings,
        "disagreements": s.disagreements, "consensus": s.consensus, "table": table_entries(m, s),
        "decision": decision.model_dump() if decision else None,
    }


async def close_record(m: MeetingContext, s: MeetingState, stop: StopReason, decision: Decision | None,
                       error: str | None) -> MeetingResult:
    """Render and store the minutes, the decision and its actions; announce the end (once the meeting's queued
    writes are stored: a statement said before a cancel is kept)."""
    await _written(m, s)
    await read_contributions(m, s)  # written in too late for any round or the decision: the minutes keep it
    context = minutes_context(m, s, stop.value, decision)
    minutes = append_tool_evidence(append_evidence(m.render_minutes(context), m.evidence), context["tool_evidence"])
    minutes = append_table(minutes, context["table"])
    writes = [m.store.finish(m.id, stop_reason=stop.value, cost_usd=s.spent_usd,
                             decision=decision.model_dump() if decision else None, minutes=minutes, error=error)]
    if decision is not None:  # independent rows: handed to the db together, not one round trip after another
        writes += [m.store.event(m.id, "decision", m.chair.role, decision.model_dump(), s.current_round),
                   m.store.add_actions(m.id, [(a.task, a.owner, a.due) for a in decision.action_items])]
    await asyncio.gather(*writes)
    if decision is not None:
        await m.emit(MeetingEventKind.DECISION, s.current_round, role=m.chair.role, text=decision.recommendation,
                     decision=decision.model_dump(),
                     participants=[p.role for p in m.specialists if p.role not in s.absent])
    await m.emit(MeetingEventKind.ENDED, s.current_round, role=m.chair.role, text=stop.value,
                 stop_reason=stop.value, error=error, minutes=minutes)
    return MeetingResult(meeting_id=m.id, topic=m.topic, stop_reason=stop, decision=decision,
                         minutes=minutes, cost_usd=s.spent_usd, rounds=len(s.rounds),
                         absent=dict(s.absent), error=error)
