"""The stages after the loop: the answer's checks, its fallback text, and the outcome.

Owns ``guard_output`` (free text passes the guardrails; JSON and compaction summaries do not),
``fallback_text`` (the in-voice reply when no model answered, or when the answer is empty),
their order :data:`FINISH`, and :func:`to_outcome`.
"""

from __future__ import annotations

import logging

from board.agent.exchange.deps import ExchangeDeps
from board.agent.exchange.outcome import CAP_REPLY, DEGRADED_REPLY, DEGRADED_SETUP_REPLY, EMPTY_REPLY, ExchangeOutcome
from board.agent.exchange.prepare import Prepare
from board.agent.exchange.request import ExchangeRequest
from board.agent.exchange.state import ExchangeState
from board.agent.guardrails import GuardInput
from board.llm.errors import missing_key_extra

__all__ = ["FINISH", "fallback_text", "guard_output", "to_outcome"]

log = logging.getLogger("sabha.agent")


async def guard_output(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps) -> None:
    """Writes ``text``: a free-text answer after the guardrails (a JSON answer is validated by its
    asker instead; a compaction summary is not an answer)."""
    if st.failure is not None or req.purpose == "compaction" or req.response_schema:
        return
    ctx = req.ctx
    st.text = await deps.guardrails.apply(
        GuardInput(text=st.text, role=req.profile.role, model=st.model_used,
                   system=tuple(b.text for b in st.blocks if b.name != "summary"),
                   empty_reply=CAP_REPLY if st.hit_cap else None),
        session_key=ctx.session_key, meeting_id=ctx.meeting_id, purpose=req.purpose)


async def fallback_text(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps) -> None:
    """Writes ``text`` when there is no answer: the degraded reply (and the error logged, with what
    to fix) or the empty / tool-cap reply."""
    failure = st.failure
    if failure is not None:
        st.text = DEGRADED_SETUP_REPLY if failure.setup_problem else DEGRADED_REPLY
        log.error("role %s (%s): answering degraded: %s", req.profile.role, req.ctx.session_key, failure.error,
                  extra=missing_key_extra(failure.cause))
    elif not st.text.strip():
        st.text = CAP_REPLY if st.hit_cap else EMPTY_REPLY


FINISH: tuple[Prepare, ...] = (guard_output, fallback_text)


def to_outcome(st: ExchangeState, deps: ExchangeDeps) -> ExchangeOutcome:
    """The frozen result of the run (the state itself never leaves it)."""
    return ExchangeOutcome(
        text=st.text.strip(),
        model=st.model_used,
        degraded=st.failure is not None,
        usage=st.usage,
        cost_usd=round(st.cost, 8) if st.cost is not None else None,
        latency_ms=round((deps.clock() - st.started) * 1000, 2),
        tool_events=tuple(st.events),
        llm_calls=st.calls,
        hit_tool_cap=st.hit_cap,
        error=st.failure.error if st.failure is not None else None,
        stop_reason=st.stop_reason,
        thinking=st.thinking_text if deps.policy.keep_thinking else "",
        unseen_images=st.unseen_images,
    )
