"""The narrow interface consultation and meetings use to make a role speak.

A :class:`Speaker` runs one exchange for a role (its own soul, its own tools, the
tool loop) on a message that is not part of any chat transcript, and returns an
:class:`Utterance`. The board adapts its agent runner to this protocol; tests can pass
any coroutine with the same shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from board.agent.tools import Tool, ToolContext

__all__ = ["Speaker", "Utterance"]


@dataclass(frozen=True)
class Utterance:
    """What one exchange of a role produced."""

    text: str
    cost_usd: float = 0.0
    model: str | None = None
    degraded: bool = False


class Speaker(Protocol):
    """Run one exchange for ``role``.

    ``tools=None`` means the role's own permitted tools, ``()`` none at all;
    ``extra_tools`` are added and permitted for this exchange only (the meeting's
    scoreboard tools). ``response_schema`` asks for one JSON object of that shape.
    """

    async def __call__(
        self,
        role: str,
        message: str,
        ctx: ToolContext,
        *,
        tools: tuple[str, ...] | None = None,
        extra_tools: Sequence[Tool] = (),
        response_schema: dict[str, Any] | None = None,
    ) -> Utterance: ...
