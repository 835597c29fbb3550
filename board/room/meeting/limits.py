"""A meeting's limits: its deadline and its budget, and the one way it calls a model.

:class:`Limits` is the meeting's :class:`~board.agent.tools.SpendingLimit` (the runner checks it
before every further model call of an exchange, consultations add their cost to it).
:func:`ask` makes one model call for a role inside both limits; when a limit is reached it
raises :class:`~board.room.meeting.events.Stop` (``deadline`` or ``budget``), and a
stranger's daily limit refusing the call is a ``budget`` stop too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from board.agent.speaker import Ask, Utterance
from board.agent.tools import Tool, ToolContext
from board.room.meeting.context import MeetingContext
from board.room.meeting.events import Stop, StopReason
from board.room.meeting.state import MeetingState
from board.spending.allowance import SpendRefused
from board.telemetry.spans import LiveSpan, QuietSpan, span

__all__ = ["Limits", "ask", "in_phase", "phase_span"]

#: The meeting phase the model calls made now belong to ("framing", "round 2", "peer review", "synthesis",
#: "challenge"): tagged on each call in the ledger (``llm_calls.tags.phase``), so a resumed meeting can be
#: shown to ask no finished phase again. Per task: the members' parallel statements each carry their own.
_PHASE: ContextVar[str] = ContextVar("meeting_phase", default="")


def phase_span(name: str) -> QuietSpan | LiveSpan:
    """The span of phase ``name``: ``meeting.round`` (with its number) or ``meeting.<phase>``."""
    kind, _, number = name.partition(" ")
    if kind == "round" and number.isdigit():
        return span("meeting.round", {"sabha.round": int(number)})
    return span("meeting." + name.replace(" ", "_"))


@contextmanager
def in_phase(name: str) -> Iterator[None]:
    """The model calls made inside belong to phase ``name``."""
    token = _PHASE.set(name)
    try:
        with phase_span(name):
            yield
    finally:
        _PHASE.reset(token)


@dataclass(frozen=True)
class Limits:
    """The deadline and the budget of one meeting, read from its state."""

    m: MeetingContext
    s: MeetingState

    def remaining(self) -> float:
        """Seconds left before the deadline."""
        return self.s.deadline - time.monotonic()

    def over_budget(self, pending_usd: float = 0.0) -> str | None:
        """Why no further model call may start (``pending_usd``: spent by the exchange in progress)."""
        spent = self.s.spent_usd + pending_usd
        if spent >= self.m.settings.budget_usd:
            return f"spent ${spent:.4f} of the ${self.m.settings.budget_usd:.4f} meeting budget"
        return None

    def spend(self, usd: float) -> None:
        """Cost made inside an exchange that its own cost does not include (consultations)."""
        self.s.spent_usd += usd

    def deadline_stop(self) -> Stop:
        """The stop for a meeting out of time."""
        return Stop(StopReason.DEADLINE, f"the meeting reached its {self.m.settings.max_duration_s:g} s limit")

    def check(self) -> None:
        """Raise :class:`Stop` when the meeting is out of time or money."""
        if self.remaining() <= 0:
            raise self.deadline_stop()
        if (reason := self.over_budget()) is not None:
            raise Stop(StopReason.BUDGET, reason)

    def spare(self) -> bool:
        """Room for an optional call (a stance asked again, the challenger's review)."""
        return self.over_budget() is None and self.remaining() > 1


async def ask(limits: Limits, role: str, message: str, *, tools: tuple[str, ...] | None = (),
              extra_tools: tuple[Tool, ...] = (), schema: dict[str, Any] | None = None) -> Utterance:
    """One model call for ``role``, inside the budget and the deadline (and the agent timeout)."""
    m, s = limits.m, limits.s
    limits.check()
    limit = min(m.settings.agent_timeout_s, limits.remaining())
    chair = m.chair.role
    ctx = ToolContext(
        role=role, session_key=f"meeting:{m.id}:{role}", envelope=m.base_ctx.envelope,
        depth=0 if role == chair else 1, chain=(chair,) if role == chair else (chair, role),
        meeting_id=m.id, deadline=asyncio.get_running_loop().time() + limit, budget=limits,
        roster=m.roster, consult_cache={},
    )
    request = Ask(role, message, tools=tools, extra_tools=extra_tools, response_schema=schema, phase=_PHASE.get())
    s.pace.asking()  # the displays post while the meeting waits on its models (board.room.meeting.pace)
    try:
        utterance = await asyncio.wait_for(m.speak(request, ctx), timeout=max(limit, 0.001))
    except TimeoutError:
        if limits.remaining() <= 0.01:
            raise limits.deadline_stop() from None
        raise
    except SpendRefused as refused:  # the asker's daily limit (a stranger's public cap): no call was made
        raise Stop(StopReason.BUDGET, f"today's limit for whoever called it is reached ({refused})") from None
    finally:
        s.pace.answered()
    s.spent_usd += utterance.cost_usd
    return utterance
