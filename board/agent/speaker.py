"""The narrow interface consultation and meetings use to make a role speak.

A :data:`Speaker` runs one exchange for a role (its own soul, its own tools, the tool
loop) on a message that is not part of any chat transcript: an :class:`Ask` goes in,
an :class:`Utterance` comes out. The board adapts its agent runner to this shape; tests
can pass any coroutine with the same shape.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from board.agent.tools import Tool, ToolContext

if TYPE_CHECKING:
    from board.agent.exchange.outcome import ToolEvent

__all__ = ["Ask", "Speaker", "Utterance"]


@dataclass(frozen=True)
class Ask:
    """What one exchange asks of ``role``.

    ``tools=None`` means the role's own permitted tools, ``()`` none at all;
    ``extra_tools`` are added and permitted for this exchange only (the meeting's
    scoreboard tools). With ``tools=()`` and no ``extra_tools`` nothing is offered, outside (MCP) tools
    included. ``response_schema`` asks for one JSON object of that shape.
    """

    role: str
    message: str
    tools: tuple[str, ...] | None = None
    extra_tools: tuple[Tool, ...] = ()
    response_schema: dict[str, Any] | None = None
    phase: str = ""  # a meeting's phase ("round 2", "synthesis" ...), tagged in the ledger; "" outside meetings


@dataclass(frozen=True)
class Utterance:
    """What one exchange of a role produced; ``tool_events``: the tool calls it made, in order (a meeting
    records the outside tools' results among them as evidence)."""

    text: str
    cost_usd: float = 0.0
    model: str | None = None
    degraded: bool = False
    tool_events: tuple[ToolEvent, ...] = ()


#: Run one exchange: (what is asked, the calling context) -> what the role said.
Speaker = Callable[[Ask, ToolContext], Awaitable[Utterance]]
