"""The structured records of a board meeting, validated with pydantic: stances and the decision.

A :class:`Stance` is where one member stands after a statement: support, oppose or
conditional, a confidence from 0 to 1 and the one assumption it rests on. Members end
each statement with a ``STANCE: {...}`` line (:func:`split_stance` reads it). Where the
question allows one, the stance also carries a checkable :class:`Prediction` (a claim, the
probability the member gives it and the date by which it can be checked), read leniently:
``"probability": "70%"`` or ``"p": 0.7``, ``"by": "31 March 2027"``; a prediction that cannot
be read is dropped with the reason (:func:`read_prediction`), never the stance with it.

A decision has a recommendation, its rationale, the points of consensus, the dissent
(a minority report naming who disagreed and why), 3 to 5 action items each owned by a
role of the meeting (or another owner the meeting allows), and open questions.
:func:`validate_decision` adds the board's own rules on top of the schema: owners must
be allowed, and nobody who dissented is silently overruled: every dissenter appears in
the dissent with reasoning that cites what they actually said (:func:`cites`), not a
placeholder such as "noted". The challenger's final objection, when there is one, is
kept verbatim in ``final_objection``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

__all__ = [
    "PREDICTION_INSTRUCTION",
    "STANCE_SCHEMA",
    "ActionItem",
    "Decision",
    "DecisionProblem",
    "Dissent",
    "FinalObjection",
    "Position",
    "Prediction",
    "Stance",
    "cites",
    "decision_schema",
    "extract_json",
    "format_stance",
    "parse_stance",
    "read_prediction",
    "split_stance",
    "validate_decision",
]

Position = Literal["support", "oppose", "conditional"]


class Prediction(BaseModel):
    """A checkable claim a member stakes a probability on: "CAC stays under $50 through Q1", 0.7,
    checkable on 2027-03-31 (``resolve_by``, an ISO date)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    claim: str = Field(min_length=3, max_length=300)
    probability: float = Field(ge=0, le=1)
    resolve_by: str = Field(description="ISO date (YYYY-MM-DD) by which the claim can be checked")

    @field_validator("resolve_by")
    @classmethod
    def _iso_date(cls, value: str) -> str:
        return date.fromisoformat(value.strip()[:10]).isoformat()


class Stance(BaseModel):
    """Where one member stands after a statement (and, where the question allows, what it predicts)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    position: Position
    confidence: float = Field(ge=0, le=1)
    assumption: str = Field(min_length=3, max_length=400, description="the one assumption the position rests on")
    prediction: Prediction | None = None


#: what the meeting prompts add to the stance instruction
PREDICTION_INSTRUCTION = (
    'Where the question allows a checkable prediction, add to the stance "prediction": {"claim": "something '
    'that can be checked later, e.g. CAC stays under $50 through Q1", "probability": 0 to 1 that it comes true, '
    '"resolve_by": "YYYY-MM-DD", the date by which it can be checked}; leave it out when nothing is checkable.'
)

_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")
_DATE_FORMATS = ("%Y-%m-%d", "%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y", "%B %d, %Y", "%b %d, %Y", "%Y/%m/%d")


def _probability(value: Any) -> float | None:
    """0.7, "0.7", "70%", 70 (a percentage) -> 0.7; None when it is not a probability (1.7, 150)."""
    if isinstance(value, str):
        match = _PERCENT.match(value)
        try:
            number = float(match.group(1)) / 100 if match else float(value.strip())
        except ValueError:
            return None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    else:
        return None
    if 2 <= number <= 100:  # 70 means 70 %; 1.7 means nothing (a "70%" is 0.7 by now)
        number /= 100
    return number if 0 <= number <= 1 else None


def _date(value: Any) -> str | None:
    """An ISO date from "2027-03-31", "31 March 2027", "March 31, 2027" ...; None when unreadable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = " ".join(value.replace(",", ", ").split()).replace(" ,", ",")
    for candidate in (text, text.replace(",", "")):
        for fmt in _DATE_FORMATS:
            try:
                return datetime.strptime(candidate, fmt).date().isoformat()
            except ValueError:
                continue
    try:
        return date.fromisoformat(text[:10]).isoformat()
    except ValueError:
        return None


def read_prediction(data: Any) -> tuple[Prediction | None, str | None]:
    """A prediction from what a member wrote (lenient on key names, percentages and date formats):
    (the prediction or None, why it was dropped or None)."""
    if data is None or data == {} or data == "":
        return None, None
    if not isinstance(data, dict):
        return None, "the prediction is not an object with claim, probability and resolve_by"
    claim = next((data[k] for k in ("claim", "statement", "what") if isinstance(data.get(k), str)), "")
    probability = next((p for k in ("probability", "p", "chance", "likelihood")
                        if (p := _probability(data.get(k))) is not None), None)
    resolve_by = next((d for k in ("resolve_by", "by", "date", "resolves_by", "check_by")
                       if (d := _date(data.get(k))) is not None), None)
    missing = [name for name, value in (("claim", claim.strip()), ("probability", probability),
                                        ("resolve_by", resolve_by)) if not value and value != 0]
    if missing:
        return None, "the prediction lacks " + " and ".join(missing)
    try:
        return Prediction(claim=" ".join(claim.split()), probability=float(probability or 0.0),
                          resolve_by=str(resolve_by)), None
    except ValidationError as exc:
        return None, f"the prediction is not valid: {exc.errors()[0]['msg']}"


STANCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["position", "confidence", "assumption"],
    "properties": {
        "position": {"type": "string", "enum": ["support", "oppose", "conditional"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "assumption": {"type": "string", "minLength": 3},
        "prediction": {
            "type": "object",
            "additionalProperties": False,
            "required": ["claim", "probability", "resolve_by"],
            "properties": {"claim": {"type": "string", "minLength": 3},
                           "probability": {"type": "number", "minimum": 0, "maximum": 1},
                           "resolve_by": {"type": "string", "format": "date"}},
        },
    },
}

_STANCE_LINE = re.compile(r"^\W*stance\W*:\s*(.+)$", re.IGNORECASE)
_LOOSE_POSITION = re.compile(r"\b(support|oppose|conditional)\b", re.IGNORECASE)
_LOOSE_CONFIDENCE = re.compile(r"confidence\W*(0(?:\.\d+)?|1(?:\.0+)?|\.\d+)", re.IGNORECASE)
_LOOSE_ASSUMPTION = re.compile(r"(?:assum\w*|rests on)\W*[:=]?\s*(.+?)\s*[)\]]?\s*$", re.IGNORECASE)


_LOOSE_PREDICTION = re.compile(r"[;,.]?\s*\bpredict\w*\W*[:=]?\s*(.+)$", re.IGNORECASE | re.DOTALL)
_LOOSE_P = re.compile(r"[,;(]?\s*\b(?:p|probability|chance)\s*[:=]?\s*(\d+(?:\.\d+)?\s*%|[01]?\.\d+|[01])\)?",
                      re.IGNORECASE)
_LOOSE_BY = re.compile(
    r"[,;(]?\s*\b(?:by|resolve[_ ]by)\s*[:=]?\s*([0-9]{4}-[0-9]{2}-[0-9]{2}|[A-Za-z0-9 ,]+?)\s*\)?\s*$", re.IGNORECASE)


def _split_loose_prediction(text: str) -> tuple[str, Prediction | None]:
    """``...; prediction: CAC stays under $50, p=0.7, by 2027-03-31`` -> (the rest, the prediction)."""
    match = _LOOSE_PREDICTION.search(text)
    if match is None:
        return text, None
    rest = match.group(1).strip()
    probability = _LOOSE_P.search(rest)
    by = _LOOSE_BY.search(rest[probability.end():] if probability else rest)
    claim = rest[: probability.start()] if probability else rest[: by.start()] if by else rest
    found, _ = read_prediction({"claim": claim.strip(" ,;"), "probability": probability.group(1) if probability
                                else None, "resolve_by": by.group(1) if by else None})
    return text[: match.start()], found


def parse_stance(text: str) -> Stance:
    """A stance from JSON (``{"position", "confidence", "assumption"}``) or the loose form
    ``oppose, confidence 0.8, assumption: ...``; raises :class:`DecisionProblem` saying what to fix."""
    text = text.strip()
    if "{" in text:
        data = extract_json(text)
        if isinstance(data, dict) and "prediction" in data:  # lenient: an unreadable prediction is dropped
            data = {**data, "prediction": read_prediction(data["prediction"])[0]}
        try:
            return Stance.model_validate(data)
        except ValidationError as exc:
            raise DecisionProblem("the stance does not match the schema: " + "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'stance'}: {err['msg']}" for err in exc.errors()[:4]
            )) from exc
    text, prediction = _split_loose_prediction(text)
    position = _LOOSE_POSITION.search(text)
    confidence = _LOOSE_CONFIDENCE.search(text)
    assumption = _LOOSE_ASSUMPTION.search(text)
    if not (position and confidence and assumption):
        raise DecisionProblem('a stance needs a position (support, oppose or conditional), a confidence from 0 to 1 '
                              'and the assumption it rests on: STANCE: {"position": "oppose", "confidence": 0.7, '
                              '"assumption": "..."}')
    try:
        return Stance(position=position.group(1).lower(), confidence=float(confidence.group(1)),
                      assumption=assumption.group(1).strip(" .;,"), prediction=prediction)
    except ValidationError as exc:
        raise DecisionProblem(f"the stance is not valid: {exc.errors()[0]['msg']}") from exc


def split_stance(text: str) -> tuple[str, Stance | None, str | None]:
    """(the statement without its ``STANCE:`` line, the stance or None, why it is missing or invalid)."""
    lines = text.rstrip().splitlines()
    for index in range(len(lines) - 1, -1, -1):
        match = _STANCE_LINE.match(lines[index].strip())
        if match is None:
            continue
        rest = "\n".join([match.group(1), *lines[index + 1 :]])
        body = "\n".join(lines[:index]).strip()
        try:
            return body, parse_stance(rest), None
        except DecisionProblem as problem:
            return body, None, str(problem)
    return text.strip(), None, "the statement has no STANCE line"


def format_stance(stance: Stance | None) -> str:
    """``oppose (confidence 0.80), resting on: ...`` or ``no stance stated``."""
    if stance is None:
        return "no stance stated"
    said = f"{stance.position} (confidence {stance.confidence:.2f}), resting on: {stance.assumption}"
    if stance.prediction is not None:
        p = stance.prediction
        said += f"; predicts: {p.claim} (p={p.probability:.2f}, by {p.resolve_by})"
    return said


_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
_STOP = frozenset([
    "the", "and", "for", "but", "not", "are", "was", "has", "had", "its", "our", "you", "all", "any", "can",
    "may", "off", "out", "who", "why", "how", "about", "above", "after", "again", "against", "also",
    "because", "been", "before", "being", "below", "between", "both", "could", "does", "doing", "down",
    "during", "each", "from", "further", "have", "having", "here", "into", "just", "more", "most", "only",
    "other", "over", "same", "should", "some", "such", "than", "that", "their", "them", "then", "there",
    "these", "they", "this", "those", "through", "under", "until", "very", "were", "what", "when", "where",
    "which", "while", "will", "with", "would", "your", "yours", "noted", "objection", "objects", "objected",
    "disagrees", "disagreed", "dissent", "critic", "board", "meeting",
])


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in _STOP]


def cites(why: str, said: str) -> bool:
    """True when ``why`` restates what was ``said``: at least three of its content words (or half
    of them, for a short reason with at least two) occur in ``said``. "noted" cites nothing."""
    words = _content_words(why)
    source = set(_content_words(said))
    hits = sum(1 for w in set(words) if w in source)
    return hits >= 3 or (hits >= 2 and hits * 2 >= len(set(words)))


class Dissent(BaseModel):
    """One minority position."""

    model_config = ConfigDict(extra="forbid")

    who: str = Field(min_length=1, description="role slug of the dissenter")
    why: str = Field(min_length=1)


class ActionItem(BaseModel):
    """One next step, the role that owns it and when it is due (as written: "by 2026-12-15", "in two
    weeks", "friday", "+3d"; read against the board's clock when the decision is recorded, by
    :mod:`board.decisions.reminders`, which sets the reminder; a date it cannot read is kept as written and
    gets no reminder until the owner sets one with ``/due``)."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=3)
    owner: str = Field(min_length=1, description="role slug")
    due: str | None = Field(None, max_length=80, description="when it is due, as written")

    @field_validator("due", mode="before")
    @classmethod
    def _no_date(cls, value: object) -> object:
        """Blank, "none", "n/a", "tbd": no due date; a long one is cut (never a reason to refuse a decision)."""
        if isinstance(value, str) and value.strip().lower() in ("", "none", "n/a", "na", "tbd", "-", "null"):
            return None
        return " ".join(value.split())[:80] if isinstance(value, str) else value


class FinalObjection(BaseModel):
    """The challenger's last word on the draft decision, kept verbatim."""

    model_config = ConfigDict(extra="forbid")

    who: str = Field(min_length=1)
    text: str = Field(min_length=1)


class Decision(BaseModel):
    """A board decision. ``best_effort`` marks one Sabha assembled when the chair's
    output could not be validated; ``final_objection`` is the challenger's review of the
    draft; ``notes`` say what Sabha added to keep the record whole."""

    model_config = ConfigDict(extra="forbid")

    recommendation: str = Field(min_length=3)
    rationale: str = Field(min_length=3)
    consensus_points: list[str] = Field(default_factory=list)
    dissent: list[Dissent] = Field(default_factory=list)
    action_items: list[ActionItem] = Field(min_length=3, max_length=5)
    open_questions: list[str] = Field(default_factory=list)
    best_effort: bool = False
    final_objection: FinalObjection | None = None
    notes: list[str] = Field(default_factory=list)


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
                                   "owner": {"type": "string", "enum": owners},
                                   "due": {"type": "string", "maxLength": 80,
                                           "description": "when it is due: by 2026-12-15, in two weeks, friday, +3d"}},
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


def validate_decision(text: str, *, participants: list[str], dissenters: Mapping[str, str] | None = None,
                      owners: list[str] | None = None) -> Decision:
    """Parse and check a chair's decision; raises :class:`DecisionProblem` saying what to fix.

    ``participants`` may dissent; ``owners`` may own action items (default: the participants);
    ``dissenters`` maps each member who must appear in the dissent to what they said."""
    data = extract_json(text)
    if isinstance(data, dict):
        for key in ("best_effort", "final_objection", "notes"):  # Sabha's to set, not the chair's
            data.pop(key, None)
    try:
        decision = Decision.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'decision'}: {err['msg']}" for err in exc.errors()[:8]
        )
        raise DecisionProblem(f"the decision does not match the schema: {problems}") from exc
    allowed = list(owners if owners is not None else participants)
    canonical = {_owner_key(o): o for o in allowed}
    items = [a.model_copy(update={"owner": canonical.get(_owner_key(a.owner), a.owner)}) for a in decision.action_items]
    decision = decision.model_copy(update={"action_items": items})
    bad_owners = sorted({a.owner for a in decision.action_items} - set(allowed))
    if bad_owners:
        raise DecisionProblem(
            f"action item owners {', '.join(bad_owners)} are not in the meeting; use one of {', '.join(allowed)}"
        )
    known = set(participants)
    bad_dissent = sorted({d.who for d in decision.dissent} - known)
    if bad_dissent:
        raise DecisionProblem(
            f"dissent names {', '.join(bad_dissent)}, who did not attend; use {', '.join(participants)}")
    issues: list[str] = []
    for who, said in (dissenters or {}).items():
        entries = [d for d in decision.dissent if d.who == who]
        if not entries:
            issues.append(f"{who} dissented but the dissent does not record it; add {{\"who\": \"{who}\", "
                            f"\"why\": their reasoning in their words}} (nobody is silently overruled)")
        elif not any(cites(d.why, said) for d in entries):
            issues.append(f"the dissent of {who} ({entries[0].why!r}) does not give their own reasoning; "
                            f"restate what they said: {_clip(said, 240)!r}")
    if issues:
        raise DecisionProblem("; ".join(issues))
    return decision


def _owner_key(owner: str) -> str:
    """``The Director`` and ``director`` name the same owner."""
    return owner.strip().lower().removeprefix("the ").strip()


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
