"""Cross-cutting concerns around the model call, each wrapping the next (Starlette's order).

Owns :class:`ModelCall` (one request on its way to the provider chain), the wrappers
``budget_gate`` (a meeting's budget, checked before every further call), ``reserve_allowance``
(a stranger's limits: the call's worst case is held until it is recorded), ``record_to_ledger``
(every attempt written with the prompt's attribution), ``apply_deadline`` (the run's
deadline), ``show_images`` (pictures only for a model of the chain that sees) and
``stream_text`` (the answer's deltas to the request's stream, a tool call or a failed
attempt voiding what was shown), ``trace_call`` (the call's span, while tracing is on), their
order :data:`AROUND_MODEL` (outermost first), and :func:`send_through`, which wraps the
provider chain in them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from board.agent.exchange.deps import ExchangeDeps
from board.agent.exchange.request import ExchangeRequest
from board.agent.exchange.state import ExchangeState
from board.agent.guardrails import GuardInput
from board.llm.base import LLMRequest, Usage
from board.llm.registry import split_model
from board.llm.resilience import Attempt, CallResult, RequestFit
from board.llm.stream import CheckedSink, PreviewCheck
from board.llm.vision import for_model, image_count
from board.spending.ledger import LLMCallRecord
from board.telemetry import genai
from board.telemetry.spans import is_on, span

__all__ = [
    "AROUND_MODEL",
    "Handler",
    "ModelCall",
    "StopBeforeCall",
    "Wrapper",
    "apply_deadline",
    "budget_gate",
    "record_to_ledger",
    "reserve_allowance",
    "send_through",
    "show_images",
    "stream_text",
    "trace_call",
]

log = logging.getLogger("sabha.agent")

AttemptCallback = Callable[[Attempt], Awaitable[None]]


@dataclass(frozen=True)
class ModelCall:
    """One model request, the chain it may fall back along, and what the wrappers added to it."""

    request: LLMRequest
    chain: tuple[str, ...]
    deadline: float | None = None
    on_attempt: tuple[AttemptCallback, ...] = ()
    fit: RequestFit | None = None


class StopBeforeCall(Exception):
    """A wrapper refused the call; ``text`` is what the role says instead."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


Handler = Callable[[ModelCall], Awaitable[CallResult]]
Wrapper = Callable[[ExchangeRequest, ExchangeState, ExchangeDeps, ModelCall, Handler], Awaitable[CallResult]]


async def budget_gate(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps, call: ModelCall,
                      call_next: Handler) -> CallResult:
    """A meeting's budget (``ctx.budget``), checked before every model call after the first."""
    budget = req.ctx.budget
    if st.step > 0 and budget is not None and (reason := budget.over_budget(st.cost or 0.0)):
        log.info("role %s: stopping the tool loop before another model call: %s", req.profile.role, reason)
        raise StopBeforeCall(f"(I stopped before finishing: {reason}.)")
    return await call_next(call)


async def reserve_allowance(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps, call: ModelCall,
                            call_next: Handler) -> CallResult:
    """Holds the call's worst case against a stranger's limits until it is recorded (raises
    :class:`board.spending.allowance.SpendRefused`: the call is not made)."""
    reservation = await deps.allowance.reserve(call.request, call.chain, deps.prices)
    try:
        return await call_next(call)
    finally:  # the call is recorded (its cost counted) by now
        if reservation is not None:
            reservation.release()


async def trace_call(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps, call: ModelCall,
                     call_next: Handler) -> CallResult:
    """A span around the model call, its retries and fallbacks included (while tracing is on): the GenAI
    conventions' model and tokens (input: the whole prompt, cached part included), the call's cost and role. The
    ledger's rows of its attempts are written inside it, so they carry its trace id."""
    if not is_on():
        return await call_next(call)
    provider, model = split_model(call.chain[0] if call.chain else call.request.model)
    model = model or provider  # ``offline``: the provider is the model
    with span(f"chat {model}", {genai.OPERATION: "chat", genai.PROVIDER: provider, genai.SYSTEM: provider,
                                genai.REQUEST_MODEL: model, genai.ROLE: req.ctx.role, "sabha.purpose": req.purpose,
                                "sabha.step": st.step}) as seen:
        result = await call_next(call)
        seen.set("sabha.attempts", len(result.attempts))
        response = result.response
        if response is None or result.model is None:
            seen.set("error.type", result.error.kind if result.error is not None else "no_answer")
            return result
        usage = response.usage
        seen.update({genai.RESPONSE_MODEL: split_model(result.model)[1], genai.INPUT_TOKENS: usage.prompt_tokens,
                     genai.OUTPUT_TOKENS: usage.output_tokens, genai.CACHE_READ_TOKENS: usage.cache_read_tokens,
                     genai.CACHE_WRITE_TOKENS: usage.cache_write_tokens,
                     genai.COST_USD: deps.prices.cost(result.model, usage)})
    return result


async def record_to_ledger(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps, call: ModelCall,
                           call_next: Handler) -> CallResult:
    """Writes every attempt to the ledger, with the prompt's tokens per block and the tool loop's."""
    blocks = dict(st.attribution)
    if len(st.messages) > st.first_loop_message:
        blocks["tool_loop"] = st.counter.count_messages(st.messages[st.first_loop_message:])
    blocks["step"] = st.step
    tags = dict(req.ledger_tags) or None

    thinking = call.request.thinking

    async def record(attempt: Attempt) -> None:
        rec = _record_of(req, deps, attempt, blocks, tags)
        await deps.ledger.record_llm_call(replace(rec, thinking=str(thinking)) if thinking else rec)

    return await call_next(replace(call, on_attempt=(*call.on_attempt, record)))


def _record_of(req: ExchangeRequest, deps: ExchangeDeps, attempt: Attempt, blocks: dict[str, Any],
               tags: dict[str, Any] | None) -> LLMCallRecord:
    response = attempt.response
    usage = response.usage if response is not None else Usage()
    cost = deps.prices.cost(attempt.model, usage) if response is not None else 0.0
    saved = deps.prices.saved(attempt.model, usage) if response is not None else 0.0
    ctx = req.ctx
    return LLMCallRecord(
        provider=attempt.provider, model=attempt.model, outcome=attempt.outcome, usage=usage, cost_usd=cost,
        saved_usd=saved, latency_ms=attempt.latency_ms, ttft_ms=response.ttft_ms if response is not None else None,
        role=ctx.role, session_key=ctx.session_key, meeting_id=ctx.meeting_id, purpose=req.purpose,
        attempt=attempt.number, error=attempt.error, blocks=blocks, tags=tags,
    )


async def apply_deadline(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps, call: ModelCall,
                         call_next: Handler) -> CallResult:
    """The run's deadline (the context's, else ``llm.turn_timeout_s`` from its start) bounds the call."""
    return await call_next(replace(call, deadline=st.deadline))


async def show_images(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps, call: ModelCall,
                      call_next: Handler) -> CallResult:
    """The turn's pictures go only to a model of the chain that sees them (each other one gets
    :data:`board.llm.vision.UNSEEN_IMAGE` instead). Writes ``unseen_images``: how many pictures
    the model that answered could not see."""
    count = image_count(call.request)
    if not count:
        return await call_next(call)
    policy = deps.policy

    def fit(request: LLMRequest) -> LLMRequest:
        return for_model(request, policy.vision_models)

    result = await call_next(replace(call, fit=fit))
    if result.model is not None:
        st.unseen_images = 0 if policy.sees_images(result.model) else count
    return result


async def stream_text(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps, call: ModelCall,
                      call_next: Handler) -> CallResult:
    """The answer's text to ``req.stream`` as the provider reads it: a failed attempt's partial text
    is void (``on_restart``), a response asking for tools shows their names (``on_tool``). Not for the
    text tool protocol, whose tool calls are in the text itself, nor for a chain whose providers do not
    stream (``llm.providers.<p>.stream``: no draft, no "looking it up", the answer whole as before)."""
    if req.stream is None or st.text_mode or not any(deps.caller.streams(model) for model in call.chain):
        return await call_next(call)  # nothing streams: the answer arrives whole, as without a sink
    sink = CheckedSink(req.stream, _preview_check(req, st, deps, call.chain))
    sink.on_speaker(f"{req.profile.emoji} {req.profile.name}".strip())

    async def restart_after_failure(attempt: Attempt) -> None:
        if not attempt.ok:
            sink.on_restart()

    result = await call_next(replace(call, request=replace(call.request, on_delta=sink.on_text),
                                     on_attempt=(*call.on_attempt, restart_after_failure)))
    response = result.response
    if response is not None:
        sink.flush()
    if response is not None and response.tool_calls and st.step < st.max_rounds and st.specs:
        for tool in response.tool_calls:
            sink.on_tool(tool.name)
    return result


def _preview_check(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps,
                   chain: Sequence[str]) -> PreviewCheck:
    """The guardrails' preview of the text so far, for each model of the chain that may answer."""
    system = tuple(b.text for b in st.blocks if b.name != "summary")

    def check(text: str) -> str | None:
        shown: str | None = text
        for model in chain:
            if shown is None:
                break
            shown = deps.guardrails.preview(GuardInput(text=shown, role=req.profile.role, model=model, system=system))
        return shown

    return check


#: Outermost first.
AROUND_MODEL: tuple[Wrapper, ...] = (budget_gate, reserve_allowance, trace_call, record_to_ledger, apply_deadline,
                                     show_images, stream_text)


def send_through(wrappers: Sequence[Wrapper], req: ExchangeRequest, st: ExchangeState,
                 deps: ExchangeDeps) -> Handler:
    """The provider chain (``deps.caller``) wrapped in ``wrappers``, the first outermost."""

    async def send(call: ModelCall) -> CallResult:
        hooks = call.on_attempt

        async def on_attempt(attempt: Attempt) -> None:
            for hook in hooks:
                await hook(attempt)

        return await deps.caller.call(call.request, call.chain, deadline=call.deadline,
                                      on_attempt=on_attempt if hooks else None, fit=call.fit)

    handler: Handler = send
    for wrapper in reversed(wrappers):
        handler = _bind(wrapper, req, st, deps, handler)
    return handler


def _bind(wrapper: Wrapper, req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps,
          call_next: Handler) -> Handler:
    async def handler(call: ModelCall) -> CallResult:
        return await wrapper(req, st, deps, call, call_next)

    return handler
