"""The text tool protocol of seed 002, for models without native tool calling.

The model is told to write ``[TOOL: <name> ARG: <json object>]`` in its answer; this
module renders those instructions, finds such markers in an answer (malformed JSON
becomes a call with a ``parse_error``, never an exception) and formats tool results
as the text the model reads next. Which models use it is configured per model
(``llm.text_tool_protocol``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from board.llm.base import ToolCall, ToolSpec

__all__ = [
    "ParsedAnswer",
    "instructions",
    "parse",
    "results_message",
]

_MARKER = re.compile(r"\[TOOL:\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*(ARG:|\])", re.IGNORECASE)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class ParsedAnswer:
    """An answer split into the visible text and the tool calls it asked for."""

    text: str
    calls: tuple[ToolCall, ...]


def instructions(tools: Sequence[ToolSpec]) -> str:
    """The system prompt block that teaches a model the protocol and lists its tools."""
    lines = [
        "# Tools",
        "You can call tools. To call one, write on its own line exactly:",
        '[TOOL: <name> ARG: {"param": "value"}]',
        "with the arguments as one JSON object, then stop and wait: the results come back in the "
        "next message. Call tools only when you need them; answer normally otherwise.",
        "",
        "Available tools:",
    ]
    for tool in tools:
        schema = json.dumps(tool.parameters, ensure_ascii=False, sort_keys=True)
        lines.append(f"- {tool.name}: {tool.description} Arguments (JSON schema): {schema}")
    return "\n".join(lines)


def _marker_end(text: str, start: int) -> int:
    """Where a marker whose JSON did not parse ends: its closing bracket on the same line."""
    line_end = text.find("\n", start)
    line_end = len(text) if line_end < 0 else line_end
    bracket = text.rfind("]", start, line_end)
    return bracket + 1 if bracket >= 0 else line_end


def parse(text: str, *, id_prefix: str = "text") -> ParsedAnswer:
    """Find ``[TOOL: name ARG: {...}]`` markers; see the module docstring."""
    calls: list[ToolCall] = []
    kept: list[str] = []
    pos = 0
    for match in _MARKER.finditer(text):
        if match.start() < pos:
            continue  # inside a marker already consumed
        kept.append(text[pos : match.start()])
        name = match.group(1)
        call_id = f"{id_prefix}-{len(calls) + 1}"
        if match.group(2) == "]":
            calls.append(ToolCall(id=call_id, name=name, arguments={}, raw_arguments=""))
            pos = match.end()
            continue
        arg_start = match.end()
        while arg_start < len(text) and text[arg_start] in " \t":
            arg_start += 1
        try:
            value, end = _DECODER.raw_decode(text, arg_start)
        except json.JSONDecodeError as exc:
            end = _marker_end(text, arg_start)
            raw = text[arg_start:end].rstrip("]").strip()
            calls.append(ToolCall(id=call_id, name=name, arguments={}, raw_arguments=raw,
                                  parse_error=f"ARG is not valid JSON ({exc.msg} at character {exc.pos - arg_start})"))
            pos = end
            continue
        raw = text[arg_start:end]
        close = end
        while close < len(text) and text[close] in " \t":
            close += 1
        if close < len(text) and text[close] == "]":
            close += 1
        else:
            close = _marker_end(text, end) if "]" in text[end : _marker_end(text, end)] else end
        if isinstance(value, dict):
            calls.append(ToolCall(id=call_id, name=name, arguments=value, raw_arguments=raw))
        else:
            calls.append(ToolCall(id=call_id, name=name, arguments={}, raw_arguments=raw,
                                  parse_error=f"ARG must be a JSON object, got {type(value).__name__}"))
        pos = close
    kept.append(text[pos:])
    visible = re.sub(r"\n{3,}", "\n\n", "".join(kept)).strip()
    return ParsedAnswer(text=visible, calls=tuple(calls))


def results_message(results: Iterable[tuple[ToolCall, str]], *, final: bool) -> str:
    """The user-side message carrying tool results back to a text-protocol model."""
    lines = ["Tool results:"]
    for call, payload in results:
        lines.append(f"[RESULT: {call.name}] {payload}")
    if final:
        lines.append(
            "That was the last tool call allowed this turn: answer now with what you have, without [TOOL: ...]."
        )
    else:
        lines.append("Use these results to answer, or call another tool the same way if you must.")
    return "\n".join(lines)
