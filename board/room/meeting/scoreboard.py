"""The meeting's scoreboard: disagreements and consensus, as the members state them.

A member states them in the statement it already returns, one line each before its
``STANCE:`` line (``DISAGREE: {...}`` / ``CONSENSUS: {...}``, the same fields as the tools),
so a round ends with the member's one answer. The ``log_disagreement`` / ``log_consensus``
tools (seed 000) stay offered for models that call them; both ways record the same entry,
store it as a meeting event and show it to the subscribers.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from board.agent.tools import Tool, ToolContext, ToolResult, validator_for
from board.llm.base import ToolSpec
from board.room.meeting.context import MeetingContext
from board.room.meeting.events import MeetingEventKind
from board.room.meeting.state import MeetingState

__all__ = [
    "CONSENSUS_SPEC",
    "DISAGREEMENT_SPEC",
    "SCOREBOARD_INSTRUCTION",
    "meeting_tools",
    "record_consensus",
    "record_disagreement",
    "record_stated",
]

log = logging.getLogger("sabha.meeting")

DISAGREEMENT_SPEC = ToolSpec(
    name="log_disagreement",
    description="Log a formal disagreement with another participant. Use this when you fundamentally oppose a point.",
    parameters={
        "type": "object",
        "properties": {
            "target_participant_name": {"type": "string", "minLength": 1,
                                        "description": "Name or role of the participant you disagree with."},
            "topic": {"type": "string", "minLength": 1, "description": "The conflict in at most 5 words."},
            "reasoning": {"type": "string", "minLength": 1, "description": "Why you disagree."},
            "severity": {"type": "integer", "minimum": 1, "maximum": 5,
                         "description": "1 (minor nitpick) to 5 (critical blocker)."},
        },
        "required": ["target_participant_name", "topic", "reasoning", "severity"],
        "additionalProperties": False,
    },
)

CONSENSUS_SPEC = ToolSpec(
    name="log_consensus",
    description="Log a point where several participants have reached alignment.",
    parameters={
        "type": "object",
        "properties": {
            "participants": {"type": "array", "items": {"type": "string"}, "minItems": 2,
                             "description": "Names or roles of those who agree."},
            "topic": {"type": "string", "minLength": 1, "description": "What was agreed."},
            "strength": {"type": "integer", "minimum": 1, "maximum": 5,
                         "description": "1 (tentative) to 5 (unanimous)."},
        },
        "required": ["participants", "topic", "strength"],
        "additionalProperties": False,
    },
)

SCOREBOARD_INSTRUCTION = (
    "Where you fundamentally disagree, add a line DISAGREE: {\"target_participant_name\": \"<role>\", \"topic\": "
    "\"<at most 5 words>\", \"reasoning\": \"<why>\", \"severity\": 1 to 5}; where you see alignment, a line "
    "CONSENSUS: {\"participants\": [\"<role>\", ...], \"topic\": \"<what>\", \"strength\": 1 to 5} (it counts only "
    "for those whose own stance agrees). Put them in this same answer, before the STANCE line, rather than calling "
    "log_disagreement / log_consensus."
)

_STATED = re.compile(r"^[ \t*_>-]*(DISAGREE|CONSENSUS)[*_]*\s*:[*_]*\s*(\{.*\})[ \t*_]*$",
                     re.IGNORECASE | re.MULTILINE)


def _without_role(event: dict[str, Any]) -> dict[str, Any]:
    """An event's data without the keys :meth:`MeetingContext.emit` takes by name (``role``, ``text``):
    passing them twice raised after the row was stored, and the model was told its call failed."""
    return {k: v for k, v in event.items() if k not in ("role", "text")}


async def record_disagreement(m: MeetingContext, s: MeetingState, role: str, args: dict[str, Any]) -> ToolResult:
    """Record a disagreement ``role`` stated (arguments of ``log_disagreement``)."""
    target_text = str(args["target_participant_name"])
    target = m.resolve_role(target_text) or target_text
    topic = " ".join(str(args["topic"]).split()[:5])
    event = {"role": role, "target": target, "topic": topic, "reasoning": str(args["reasoning"]),
             "severity": int(args["severity"]), "round": s.current_round}
    s.disagreements.append(event)
    await m.store.event(m.id, "disagreement", role, event, s.current_round)
    await m.emit(MeetingEventKind.DISAGREEMENT, s.current_round, role=role,
                 text=f"disagrees with {target} on {topic}", **_without_role(event))
    return ToolResult.success({"logged": "disagreement", "topic": topic})


async def record_consensus(m: MeetingContext, s: MeetingState, role: str, args: dict[str, Any]) -> ToolResult:
    """Record a consensus ``role`` stated (arguments of ``log_consensus``)."""
    participants = [m.resolve_role(str(p)) or str(p) for p in args["participants"]]
    event = {"role": role, "participants": participants, "topic": str(args["topic"]),
             "strength": int(args["strength"]), "round": s.current_round}
    s.consensus.append(event)
    await m.store.event(m.id, "consensus", role, event, s.current_round)
    await m.emit(MeetingEventKind.CONSENSUS, s.current_round, role=role, text=f"consensus on {event['topic']}",
                 **_without_role(event))
    return ToolResult.success({"logged": "consensus", "topic": event["topic"],
                               "note": "it holds only for the participants whose own stance agrees"})


async def record_stated(m: MeetingContext, s: MeetingState, role: str, text: str) -> str:
    """Record the DISAGREE / CONSENSUS lines of a statement; the statement without them.
    A line whose JSON does not match the tool's schema is left in the text (it is what they said)."""
    kept: list[str] = []
    cursor = 0
    for match in _STATED.finditer(text):
        kind = match.group(1).upper()
        spec = DISAGREEMENT_SPEC if kind == "DISAGREE" else CONSENSUS_SPEC
        try:
            args = json.loads(match.group(2))
            validator_for(spec.parameters).validate(args)
        except Exception as exc:  # noqa: BLE001 - a malformed line stays part of the statement
            log.info("meeting %s: %s stated an unreadable %s line (%s)", m.id, role, kind, exc)
            continue
        kept.append(text[cursor:match.start()])
        cursor = match.end()
        record = record_disagreement if kind == "DISAGREE" else record_consensus
        await record(m, s, role, args)
    kept.append(text[cursor:])
    return "".join(kept) if cursor else text


def meeting_tools(m: MeetingContext, s: MeetingState) -> list[Tool]:
    """The two scoreboard tools of seed 000; they record into ``s``."""

    async def disagree(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await record_disagreement(m, s, ctx.role, args)

    async def consensus(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await record_consensus(m, s, ctx.role, args)

    return [Tool(DISAGREEMENT_SPEC, disagree, timeout_s=10), Tool(CONSENSUS_SPEC, consensus, timeout_s=10)]
