"""The exchange as one pipeline: prepare once, loop ``call_model`` <-> ``run_tools``, finish.

Owns :func:`run_exchange`, the only place that knows the order of the stages.
"""

from __future__ import annotations

import logging

from board.agent.exchange.deps import ExchangeDeps
from board.agent.exchange.finish import FINISH, to_outcome
from board.agent.exchange.loop import call_model
from board.agent.exchange.outcome import ExchangeOutcome
from board.agent.exchange.prepare import PREPARE, resolve_model
from board.agent.exchange.request import ExchangeRequest
from board.agent.exchange.state import Continue, Step

__all__ = ["run_exchange"]

log = logging.getLogger("sabha.agent")


async def run_exchange(req: ExchangeRequest, deps: ExchangeDeps) -> ExchangeOutcome:
    """Ask ``req.profile`` one thing and run its tool loop; never raises for model or tool failures
    (a stranger's spending limit refusing a call raises :class:`board.spending.allowance.SpendRefused`)."""
    st = resolve_model(req, deps)
    for stage in PREPARE:
        await stage(req, st, deps)
    step: Step = call_model
    while True:
        log.debug("stage=%s step=%d role=%s", step.__name__, st.step, req.profile.role)
        nxt = await step(req, st, deps)
        if not isinstance(nxt, Continue):
            break
        step = nxt.step
    for stage in FINISH:
        await stage(req, st, deps)
    return to_outcome(st, deps)
