"""Phase 2b: the peer review. Each member ranks the others' anonymised round-1 statements.

Labels are shuffled by the meeting id, so they say nothing about who spoke; a member never
ranks itself; a missing or malformed review is just not counted. The aggregate (average
rank, best first) goes to the chair's synthesis and the minutes, and into the meeting's checkpoint
(:mod:`board.room.meeting.resume`): a resumed meeting does not ask for it again.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

from board.room.decision import extract_json
from board.room.meeting.convergence import abridge, present
from board.room.meeting.events import MeetingEventKind, Stop
from board.room.meeting.limits import Limits, ask, in_phase
from board.room.meeting.resume import save
from board.workspace.souls import AgentProfile

__all__ = ["ranking_lines", "run"]

log = logging.getLogger("sabha.meeting")


def ranking_lines(ranking: list[dict[str, Any]]) -> str:
    """The aggregate ranking, one line per member."""
    return "\n".join(f"{i}. {r['name']} ({r['role']}): average rank {r['average_rank']} from {r['votes']} review(s)"
                     for i, r in enumerate(ranking, start=1))


def _message(limits: Limits, profile: AgentProfile, labels: dict[str, str]) -> tuple[str, dict[str, Any]]:
    statements = limits.s.rounds[0]
    shown = [f"Response {labels[r]}: {abridge(statements[r], limits.m.settings.abridge_chars)}"
             for r in labels if r != profile.role]
    others = [labels[r] for r in labels if r != profile.role]
    schema = {"type": "object", "additionalProperties": False, "required": ["ranking"],
              "properties": {"ranking": {"type": "array", "items": {"type": "string", "enum": others},
                                         "minItems": len(others), "maxItems": len(others)},
                             "reason": {"type": "string"}}}
    message = (f"Board meeting on: {limits.m.topic}\nPeer review of round 1. Rank your colleagues' anonymised "
               "answers from most to least useful to the board (accuracy, insight, candour):\n\n"
               + "\n\n".join(shown) + "\n\nReply with one JSON object: {\"ranking\": [labels, best first], "
               "\"reason\": \"one sentence\"}.")
    return message, schema


async def _review(limits: Limits, profile: AgentProfile, labels: dict[str, str], votes: dict[str, list[int]]) -> None:
    """One member's ranking, added to ``votes``."""
    message, schema = _message(limits, profile, labels)
    try:
        utterance = await ask(limits, profile.role, message, schema=schema)
        data = extract_json(utterance.text)
    except Stop:
        raise
    except Exception as exc:  # noqa: BLE001 - a missing review is just not counted
        log.info("meeting %s: %s gave no peer review (%s)", limits.m.id, profile.role, exc)
        return
    ranking = data.get("ranking") if isinstance(data, dict) else None
    if not isinstance(ranking, list):
        return
    by_label = {label: role for role, label in labels.items()}
    mine = labels[profile.role]
    seen = [x for x in dict.fromkeys(str(x).strip().upper() for x in ranking) if x in by_label and x != mine]
    for position, label in enumerate(seen, start=1):
        votes[by_label[label]].append(position)


async def run(limits: Limits) -> None:
    """Each member present ranks the others; the aggregate is kept, stored and shown."""
    m, s = limits.m, limits.s
    if not s.rounds or len(s.rounds[0]) < 3:
        s.reviewed = True
        return
    with in_phase("peer review"):
        await _rank(limits)
    s.reviewed = True
    await save(m, s)  # the review is done: a restart does not ask it again


async def _rank(limits: Limits) -> None:
    m, s = limits.m, limits.s
    order = list(s.rounds[0])
    random.Random(m.id).shuffle(order)  # labels say nothing about who spoke
    labels = {role: chr(ord("A") + i) for i, role in enumerate(order)}
    votes: dict[str, list[int]] = {role: [] for role in s.rounds[0]}
    reviewers = [p for p in present(m, s) if p.role in s.rounds[0]]
    if m.settings.parallel:
        await asyncio.gather(*(_review(limits, p, labels, votes) for p in reviewers))
    else:
        for p in reviewers:
            await _review(limits, p, labels, votes)
    ranked = sorted(((sum(v) / len(v), role, len(v)) for role, v in votes.items() if v))
    s.peer_ranking = [{"role": role, "name": m.profiles[role].name, "label": labels[role],
                       "average_rank": round(avg, 2), "votes": n} for avg, role, n in ranked]
    if s.peer_ranking:
        await m.store.event(m.id, "peer_review", m.chair.role, {"ranking": s.peer_ranking}, 1)
        await m.emit(MeetingEventKind.PEER_REVIEW, s.current_round, role=m.chair.role,
                     text="peer review: " + ", ".join(r["role"] for r in s.peer_ranking), ranking=s.peer_ranking)
