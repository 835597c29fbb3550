"""Phase 1: the chair frames the meeting: an agenda and one question per specialist.

With an agenda given in advance (the roundtable's) the chair is not asked; when the chair's
framing is unusable or fails, the agenda is "Decide: <topic>" and every specialist gets a
default question from their seat. Either way the agenda is stored (with the questions, in the meeting's
checkpoint: :mod:`board.room.meeting.resume`) and shown.

The board remembers: earlier decisions on related topics (full-text search over decisions and
minutes, :mod:`board.decisions.recall.search`) and what became of them are given to the chair and put
under the agenda, so every member sees them too; quoted as data and bounded in size. A search that
fails costs the meeting nothing (logged).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from board.decisions.recall.search import recall_block, related_decisions
from board.room.decision import DecisionProblem, extract_json
from board.room.evidence import evidence_block
from board.room.meeting.context import MeetingContext
from board.room.meeting.decide import track_block
from board.room.meeting.events import MeetingEventKind, Stop
from board.room.meeting.limits import Limits, ask, in_phase
from board.room.meeting.resume import save
from board.room.meeting.state import MeetingState

__all__ = ["default_questions", "framing_message", "framing_schema", "recalled", "run"]

log = logging.getLogger("sabha.meeting")


def framing_schema(m: MeetingContext) -> dict[str, Any]:
    """The JSON the chair answers with: an agenda and a question per specialist."""
    roles = [p.role for p in m.specialists]
    return {
        "type": "object",
        "required": ["agenda", "questions"],
        "properties": {
            "agenda": {"type": "string", "minLength": 3},
            "questions": {"type": "object", "required": roles,
                          "properties": {r: {"type": "string", "minLength": 3} for r in roles}},
        },
    }


def framing_message(m: MeetingContext, recall: str = "") -> str:
    """What the chair is asked (``recall``: the earlier related decisions, :func:`recalled`)."""
    roster_lines = "\n".join(f"- {p.role}: {p.name}{', ' + p.title if p.title else ''}" for p in m.specialists)
    evidence = evidence_block(m.evidence)
    return (
        f"You are chairing a board meeting on: {m.topic}\n\n"
        f"Specialists present:\n{roster_lines}\n\n"
        + (f"{evidence}\n\nPut the evidence on the agenda and ask about it where it matters.\n\n" if evidence else "")
        + (f"{recall}\n\nSay on the agenda what the board decided before and what came of it, where it "
           "bears on this question.\n\n" if recall else "")
        + "Frame the meeting: a short agenda (2-4 lines) and one precise question for each specialist, "
        "suited to their expertise. Reply with one JSON object only: "
        '{"agenda": "...", "questions": {"<role>": "..."}}'
    )


def default_questions(m: MeetingContext) -> dict[str, str]:
    """Each specialist's question when the chair gives none."""
    return {
        p.role: f"From your seat as {p.name}{' (' + p.title + ')' if p.title else ''}: what should the board "
                f"decide about \"{m.topic}\", and what is the one thing we must not get wrong?"
        for p in m.specialists
    }


async def recalled(m: MeetingContext) -> str:
    """The earlier decisions related to this meeting's topic, as a quoted block ("" for none)."""
    if m.settings.recall_decisions <= 0 or m.preset_agenda is not None:  # the roundtable debates, it does not recall
        return ""
    try:
        found = await related_decisions(m.store.db, m.topic, exclude=m.id, limit=m.settings.recall_decisions)
    except Exception as exc:  # noqa: BLE001 - memory is an aid; a failing search must not stop the meeting
        log.warning("meeting %s: recalling earlier decisions failed (%s)", m.id, exc)
        return ""
    if found:
        log.info("meeting %s: recalled %s", m.id, ", ".join(d.meeting_id for d in found))
    return recall_block(found)


async def _ask_chair(limits: Limits, agenda: str, questions: dict[str, str], recall: str = "") -> str:
    """The chair's framing over the defaults (``questions`` is updated in place); the agenda."""
    m = limits.m
    framed = await ask(limits, m.chair.role, framing_message(m, recall), schema=framing_schema(m))
    data = extract_json(framed.text)
    if isinstance(data, dict):
        if isinstance(data.get("agenda"), str) and data["agenda"].strip():
            agenda = data["agenda"].strip()
        offered = data.get("questions")
        if isinstance(offered, dict):
            for role, question in offered.items():
                if role in questions and isinstance(question, str) and question.strip():
                    questions[role] = question.strip()
    return agenda


async def run(m: MeetingContext, s: MeetingState, limits: Limits) -> None:
    """Set the agenda and the questions, store and show them."""
    questions = default_questions(m)
    agenda = f"Decide: {m.topic}"
    recall = await recalled(m)
    if s.track is None:  # read while the chair frames (off the meeting's path), heard at the synthesis
        s.track = asyncio.ensure_future(track_block(m))
    if m.preset_agenda is not None:
        agenda = m.preset_agenda
    else:
        try:
            with in_phase("framing"):
                s.pace.phase(1)
                agenda = await _ask_chair(limits, agenda, questions, recall)
        except (DecisionProblem, TimeoutError) as exc:
            log.warning("meeting %s: chair framing unusable (%s); using default questions", m.id, exc)
        except Stop:
            raise
        except Exception as exc:  # noqa: BLE001
            log.warning("meeting %s: chair framing failed (%s); using default questions", m.id, exc)
    if recall:
        agenda = f"{agenda}\n\n{recall}"
    s.agenda, s.questions = agenda, questions
    await m.store.set_agenda(m.id, agenda)
    await save(m, s)  # the framing is done: a restart resumes at round 1
    await m.emit(MeetingEventKind.FRAMED, s.current_round, role=m.chair.role, text=agenda, questions=questions)
