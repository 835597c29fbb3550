"""The Roundtable (seed 004): ARTIST, BUSINESS and TECH debate, a SUMMARIZER distils tasks.

Input is JSON ``{"prompt", "context", "learnings", "max_rounds"}``; output is
``{"transcript": "...", "summary": ["3-5 actionable tasks"]}``. The debate is a board
meeting of the ``roundtable`` roster chaired by the summarizer, so it gets the same
limits, records and stop reasons as any meeting; the summary is the decision's action
items.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from board.room.convene import SUMMARIZER, BoardRoom
from board.room.meeting import MeetingResult

__all__ = ["ROSTER", "RoundtableInput", "RoundtableInputError", "parse_input", "run_roundtable"]

ROSTER = "roundtable"
#: who may own a task besides the debaters: the owners seed 004's summarizer names
OWNERS = ("Director", "Builder", "Orchestrator", "FULLSEND")


class RoundtableInput(BaseModel):
    """What the orchestrator sends."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=8000)
    context: str = ""
    learnings: list[str] = Field(default_factory=list, max_length=50)
    max_rounds: int = Field(3, ge=1, le=5)

    @field_validator("context", mode="before")
    @classmethod
    def _context_lines(cls, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(f"- {item}" for item in value)
        return value

    @field_validator("prompt")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("prompt is blank")
        return value.strip()


class RoundtableInputError(ValueError):
    """The input JSON is not usable; ``details`` lists what is wrong."""

    def __init__(self, message: str, details: list[str]) -> None:
        super().__init__(message)
        self.details = details


def parse_input(text: str) -> RoundtableInput:
    """Parse roundtable input JSON; raises :class:`RoundtableInputError`."""
    import json

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        raise RoundtableInputError("input is not valid JSON", [where]) from exc
    if not isinstance(data, dict):
        raise RoundtableInputError("input must be a JSON object", ['expected {"prompt": "...", ...}'])
    try:
        return RoundtableInput.model_validate(data)
    except ValidationError as exc:
        details = [f"{'.'.join(str(p) for p in err['loc']) or 'input'}: {err['msg']}" for err in exc.errors()]
        raise RoundtableInputError("input does not match the roundtable schema", details) from exc


def agenda_for(request: RoundtableInput) -> str:
    """The debate context every participant sees."""
    parts = [f"Topic: {request.prompt}"]
    if request.context.strip():
        parts.append(f"Context:\n{request.context.strip()}")
    if request.learnings:
        parts.append("Learnings from past experiments:\n" + "\n".join(f"- {item}" for item in request.learnings))
    parts.append("Build on or challenge each other's points; be distinctive to your persona; 2-3 sentences.")
    return "\n\n".join(parts)


def render_transcript(room: BoardRoom, result: MeetingResult, rounds: list[dict[str, str]],
                      models: dict[str, str] | None = None) -> str:
    """``--- Round n ---`` then ``NAME: text`` lines, as in seed 004; ``NAME (model):`` when the
    debaters speak with different models (``models``: role -> model, given only then)."""
    souls = room.souls_for(ROSTER)
    lines: list[str] = []
    for number, statements in enumerate(rounds, start=1):
        lines.append(f"--- Round {number} ---")
        for role, text in statements.items():
            name = souls.profile(role).name.upper() if souls.has(role) else role.upper()
            model = f" ({models[role]})" if models and role in models else ""
            lines.append(f"{name}{model}: {' '.join(text.split())}")
    return "\n".join(lines)


async def run_roundtable(room: BoardRoom, request: RoundtableInput) -> dict[str, Any]:
    """Run the debate and return the output JSON object."""
    settings = replace(room.meeting_settings, max_turns_per_agent=request.max_rounds, critic_role="")
    run = room.prepare(request.prompt, roster=ROSTER, chair_role=SUMMARIZER, settings=settings,
                       agenda=agenda_for(request), extra_owners=OWNERS)
    result = await run.run()
    summary = [f"{item.task} (Owner: {item.owner})" for item in result.decision.action_items] if result.decision else []
    models = {**run.models, **run.spoke_with} if run.models_differ() else None
    output: dict[str, Any] = {"transcript": render_transcript(room, result, run.rounds, models), "summary": summary}
    output["meeting_id"] = result.meeting_id
    output["stop_reason"] = result.stop_reason.value
    if result.error:
        output["error"] = result.error
    if result.decision is not None and result.decision.best_effort:
        output["best_effort"] = True
    return output
