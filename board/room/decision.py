"""The structured outcome of a board meeting, validated with pydantic.

A decision has a recommendation, its rationale, the points of consensus, the dissent
(a minority report naming who disagreed and why), 3 to 5 action items each owned by a
role of the meeting, and open questions. :func:`validate_decision` adds the board's own
rules on top of the schema: owners must be participants, and the critic is never
silently overruled (if the critic objected, the dissent must say so).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "ActionItem",
    "Decision",
    "DecisionProblem",
    "Dissent",
    "decision_schema",
    "extract_json",
    "validate_decision",
]


class Dissent(BaseModel):
    """One minority position."""

    model_config = ConfigDict(extra="forbid")

    who: str = Field(min_length=1, description="role slug of the dissenter")
    why: str = Field(min_length=1)


class ActionItem(BaseModel):
    """One next step and the role that owns it."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=3)
    owner: str = Field(min_length=1, description="role slug")


class Decision(BaseModel):
    """A board decision. ``best_effort`` marks one Sabha assembled when the chair's
    output could not be validated."""

    model_config = ConfigDict(extra="forbid")

    recommendation: str = Field(min_length=3)
    rationale: str = Field(min_length=3)
    consensus_points: list[str] = Field(default_factory=list)
    dissent: list[Dissent] = Field(default_factory=list)
    action_items: list[ActionItem] = Field(min_length=3, max_length=5)
    open_questions: list[str] = Field(default_factory=list)
    best_effort: bool = False


class DecisionProblem(ValueError):
    """The chair's output is not a valid decision; the message says why (fed back on retry)."""


def decision_schema(owners: list[str]) -> dict[str, Any]:
    """The JSON schema the chair is asked to follow, owners limited to ``owners``."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["recommendation", "rationale", "consensus_points", "dissent", "action_items", "open_questions"],
        "properties": {
            "recommendation": {"type": "string", "minLength": 3},
            "rationale": {"type": "string", "minLength": 3},
            "consensus_points": {"type": "array", "items": {"type": "string"}},
            "dissent": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["who", "why"],
                    "properties": {"who": {"type": "string", "enum": owners},
                                   "why": {"type": "string", "minLength": 1}},
                },
            },
            "action_items": {
                "type": "array",
                "minItems": 3,
                "maxItems": 5,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["task", "owner"],
                    "properties": {"task": {"type": "string", "minLength": 3},
                                   "owner": {"type": "string", "enum": owners}},
                },
            },
            "open_questions": {"type": "array", "items": {"type": "string"}},
        },
    }


_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The JSON object in a model's answer: a fenced block, else the outermost braces."""
    match = _FENCE.search(text)
    candidate = match.group(1) if match else None
    if candidate is None:
        start, end = text.find("{"), text.rfind("}")
        if start == -1 or end <= start:
            raise DecisionProblem("the answer contains no JSON object; reply with one JSON object only")
        candidate = text[start : end + 1]
    try:
        return json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise DecisionProblem(f"the JSON does not parse ({exc.msg} at line {exc.lineno} column {exc.colno})") from exc


def validate_decision(text: str, *, participants: list[str], critic_objected: bool, critic: str = "critic") -> Decision:
    """Parse and check a chair's decision; raises :class:`DecisionProblem` saying what to fix."""
    data = extract_json(text)
    if isinstance(data, dict):
        data.pop("best_effort", None)
    try:
        decision = Decision.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'decision'}: {err['msg']}" for err in exc.errors()[:8]
        )
        raise DecisionProblem(f"the decision does not match the schema: {problems}") from exc
    known = set(participants)
    bad_owners = sorted({a.owner for a in decision.action_items} - known)
    if bad_owners:
        raise DecisionProblem(
            f"action item owners {', '.join(bad_owners)} are not in the meeting; use one of {', '.join(participants)}"
        )
    bad_dissent = sorted({d.who for d in decision.dissent} - known)
    if bad_dissent:
        raise DecisionProblem(
            f"dissent names {', '.join(bad_dissent)}, who did not attend; use {', '.join(participants)}")
    if critic_objected and not any(d.who == critic for d in decision.dissent):
        raise DecisionProblem(
            f"the {critic} objected during the meeting but the dissent does not record it; "
            f"add a dissent entry for {critic} saying why (the critic is never silently overruled)"
        )
    return decision
