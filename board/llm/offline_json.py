"""Structured answers for the offline model: a JSON instance of a requested schema.

When a caller asks for one JSON object of a given schema (meeting framing, a board
decision), the offline model answers with a deterministic instance that validates:
required properties filled, arrays at their minimum length, enums cycled in order,
strings built from the speaker's stance and the request, every string marked offline.
It is a stand-in so meetings and the roundtable run end to end without a key, not
advice. A board decision's action items get due dates (:data:`OFFLINE_DUE`, the first two
minutes out), so a first run (``make run``) sees a reminder come round.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "OFFLINE_DUE",
    "instance_for",
    "with_due_dates",
]

_TAG = "[offline]"


class _Builder:
    def __init__(self, speaker: str, topic: str, questions: list[str]) -> None:
        self.speaker = speaker
        self.topic = topic
        self.questions = questions or [f"What would {speaker} need to know first?"]
        self.counter = 0

    def text(self, key: str) -> str:
        self.counter += 1
        label = key.replace("_", " ").strip() or "point"
        question = self.questions[(self.counter - 1) % len(self.questions)]
        return f"{_TAG} {label.capitalize()} from {self.speaker} on {self.topic}: {question}"

    def build(self, schema: dict[str, Any], key: str = "", index: int = 0) -> Any:
        if schema.get("enum"):
            options = schema["enum"]
            return options[index % len(options)]
        if "const" in schema:
            return schema["const"]
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if kind == "object" or (kind is None and "properties" in schema):
            props: dict[str, Any] = schema.get("properties", {})
            required = list(schema.get("required", []))
            out: dict[str, Any] = {}
            for name in required:
                out[name] = self.build(props.get(name, {"type": "string"}), name, index)
            return out
        if kind == "array":
            items = schema.get("items", {"type": "string"})
            count = int(schema.get("minItems", 0))
            if count == 0 and items.get("type", "string") == "string" and "enum" not in items:
                count = 1
            maximum = schema.get("maxItems")
            if maximum is not None:
                count = min(count, int(maximum))
            singular = key[:-1] if key.endswith("s") else key
            return [self.build(items, singular, i) for i in range(count)]
        if kind == "integer":
            return int(schema.get("minimum", 0))
        if kind == "number":
            return float(schema.get("minimum", 0))
        if kind == "boolean":
            return False
        text = self.text(key)
        min_length = int(schema.get("minLength", 0))
        if len(text) < min_length:
            text = text.ljust(min_length, ".")
        return text


def instance_for(schema: dict[str, Any], *, speaker: str, topic: str, questions: list[str],
                 fixed: dict[str, Any] | None = None) -> str:
    """A JSON text that validates against ``schema`` (the subset Sabha uses); ``fixed`` gives the
    values of some top-level properties (a meeting's required dissent) instead of built ones."""
    value = _Builder(speaker, topic, questions).build(schema)
    if isinstance(value, dict):
        value.update(fixed or {})
    return json.dumps(value, ensure_ascii=False)


#: The due dates the offline chair gives a decision's action items, in order.
OFFLINE_DUE = ("+2m", "in two weeks", "friday", "+3d", "next month")


def with_due_dates(text: str) -> str:
    """The offline decision ``text`` with a due date on each action item (:data:`OFFLINE_DUE`)."""
    decision = json.loads(text)
    for item, due in zip(decision.get("action_items") or [], OFFLINE_DUE, strict=False):
        if isinstance(item, dict):
            item["due"] = due
    return json.dumps(decision, ensure_ascii=False)
