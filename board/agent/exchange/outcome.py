"""What an exchange gives back: the answer, what it cost, and every tool call it made.

Owns the frozen result values and the fixed replies an exchange falls back to.
"""

from __future__ import annotations

from dataclasses import dataclass

from board.agent.tools import ToolOrigin, ToolResult
from board.llm.base import ToolCall, Usage

__all__ = [
    "CAP_NOTE",
    "CAP_REPLY",
    "DEGRADED_REPLY",
    "DEGRADED_SETUP_REPLY",
    "EMPTY_REPLY",
    "MAX_RESULT_CHARS",
    "ExchangeOutcome",
    "ToolEvent",
    "clip",
]

DEGRADED_REPLY = "I'm having trouble thinking right now; try again in a minute."
DEGRADED_SETUP_REPLY = (
    "I can't reach my model because of a setup problem (a missing or rejected API key, or an unknown model), "
    "so I can't answer properly until the owner fixes it; Sabha's log says what to change."
)
EMPTY_REPLY = "(I have nothing to add to that.)"
CAP_NOTE = (
    "(You have used all {n} tool calls allowed for this turn. Do not call tools again: answer now with "
    "what you have, and say what you could not check.)"
)
CAP_REPLY = "I couldn't finish looking that up within my tool budget for this message; ask me again to continue."
MAX_RESULT_CHARS = 4000


def clip(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class ToolEvent:
    """One tool call of an exchange and its result."""

    call: ToolCall
    result: ToolResult
    latency_ms: float
    step: int
    origin: ToolOrigin | None = None  # the MCP server and tool, for an outside tool (cited as ``origin.label``)
    ts: str = ""  # when the call finished (UTC ISO), for the minutes' evidence


@dataclass(frozen=True)
class ExchangeOutcome:
    """The result of an exchange (:func:`board.agent.exchange.run_exchange`)."""

    text: str
    model: str
    degraded: bool
    usage: Usage
    cost_usd: float | None
    latency_ms: float
    tool_events: tuple[ToolEvent, ...] = ()
    llm_calls: int = 0
    hit_tool_cap: bool = False
    error: str | None = None
    #: the provider's stop reason of the last answer; ``max_tokens`` when the output limit cut it
    stop_reason: str = ""
    #: The model's thinking, only when the owner keeps it (``llm.keep_thinking``); never shown.
    thinking: str = ""
    #: Pictures of the turn the answering model could not see (a model without vision).
    unseen_images: int = 0
