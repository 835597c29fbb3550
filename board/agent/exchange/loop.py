"""The tool loop: ``call_model`` <-> ``run_tools``, each returning the next stage or :data:`DONE`.

Owns the two loop stages, the request each model call sends (:func:`build_request`), how a
response is read (tool calls, by the API or the text protocol; the tool cap) and how a round
of tool results is put back into the conversation.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from board.agent.exchange.deps import ExchangeDeps
from board.agent.exchange.outcome import CAP_NOTE, ToolEvent, clip
from board.agent.exchange.request import ExchangeRequest
from board.agent.exchange.state import DONE, Continue, Done, ExchangeState, Failure, ToolRound
from board.agent.exchange.wrappers import AROUND_MODEL, ModelCall, StopBeforeCall, send_through
from board.agent.tools import ToolResult
from board.conversation.transcripts import utc_now
from board.llm import text_tools
from board.llm.base import ChatMessage, LLMRequest, LLMResponse, Persona, ToolCall
from board.spending.ledger import ToolCallRecord
from board.telemetry import genai
from board.telemetry.spans import span

__all__ = ["build_request", "call_model", "run_tools"]

log = logging.getLogger("sabha.agent")


def build_request(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps) -> LLMRequest:
    """The model request of the current step (tools offered until the cap; then ``tool_choice=none``)."""
    profile = req.profile
    final = st.step >= st.max_rounds or not st.specs
    offered = req.tools.offer_only  # offered as in the role's turns, though none will run
    meta: dict[str, Any] = {"session_key": req.ctx.session_key, "soul_version": profile.soul.version,
                            "purpose": req.purpose, **req.metadata}
    if req.response_schema is not None:
        meta["response_schema"] = req.response_schema
    meta["step"] = st.step
    return LLMRequest(
        model=st.chain[0],
        system=st.blocks,
        messages=tuple(st.messages),
        persona=Persona(role=profile.role, name=profile.name, emoji=profile.emoji, soul=profile.soul.text),
        tools=() if (st.text_mode or not st.specs or (st.max_rounds == 0 and not offered)) else st.specs,
        max_tokens=req.model.max_tokens or deps.policy.max_tokens,
        metadata=meta,
        tool_choice="none" if final and not offered else "auto",
        temperature=req.model.temperature if req.model.temperature is not None else profile.temperature,
        # Only the first call thinks: a call after tool results would have to send the thinking
        # blocks back (Anthropic), which the transcript never keeps.
        thinking=st.thinking if st.step == 0 else None,
    )


async def call_model(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps) -> Continue | Done:
    """One model call through :data:`AROUND_MODEL`. Writes ``calls``, ``failure``, ``chain``,
    ``model_used``, ``usage``, ``cost``, ``text``, ``hit_cap`` and ``pending`` (the tools asked for)."""
    send = send_through(AROUND_MODEL, req, st, deps)
    try:
        result = await send(ModelCall(build_request(req, st, deps), st.chain))
    except StopBeforeCall as stop:
        st.text = stop.text
        return DONE
    st.calls += len(result.attempts)
    if result.response is None or result.model is None:
        st.failure = Failure.of(result.error)
        return DONE
    return _take_response(req, st, deps, result.model, result.response)


def _take_response(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps, model: str,
                   response: LLMResponse) -> Continue | Done:
    st.chain = st.chain[st.chain.index(model):]
    st.model_used = model
    st.stop_reason = response.stop_reason
    st.usage = st.usage + response.usage
    st.thinking_text = "\n\n".join(t for t in (st.thinking_text, response.thinking) if t)
    step_cost = deps.prices.cost(model, response.usage)
    st.cost = None if (st.cost is None or step_cost is None) else st.cost + step_cost
    if st.text_mode:
        parsed = text_tools.parse(response.text, id_prefix=f"t{st.step + 1}")
        calls, visible = tuple(parsed.calls), parsed.text
    else:
        calls, visible = tuple(response.tool_calls), response.text
    if not calls:
        st.text = visible
        return DONE
    if st.step >= st.max_rounds or not st.specs:
        st.hit_cap = True
        st.text = visible
        log.warning("role %s: the model asked for tools after the cap of %d; answering with what it has",
                    req.profile.role, st.max_rounds)
        return DONE
    info = {"model": model, "usage": response.usage.as_dict(), "cost_usd": step_cost}
    st.pending = ToolRound(calls, response.text, info)
    return Continue(run_tools)


async def run_tools(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps) -> Continue | Done:
    """Runs the tools the model asked for (concurrently), announcing and recording each. Writes
    ``step``, ``events``, ``hit_cap``, ``messages`` and clears ``pending``."""
    asked, st.pending = st.pending, None
    if asked is None:
        return DONE
    st.step += 1
    _announce(req, st.step, asked)
    results = list(await asyncio.gather(*(_run_one(req, st, call) for call in asked.calls)))
    for event in results:
        await _report(req, deps, event)
    st.events.extend(results)
    last_round = st.step >= st.max_rounds
    if last_round:
        st.hit_cap = True
    _append_round(st, asked, results, last_round)
    return Continue(call_model)


def _announce(req: ExchangeRequest, step: int, asked: ToolRound) -> None:
    for index, call in enumerate(asked.calls):
        entry: dict[str, Any] = {
            "type": "tool_call", "ts": utc_now(), "id": call.id, "agent": req.ctx.role, "name": call.name,
            "arguments": call.arguments, "step": step,
        }
        if call.parse_error:
            entry["raw_arguments"] = call.raw_arguments
            entry["parse_error"] = call.parse_error
        if index == 0:  # the model call that asked for these tools
            entry.update({k: v for k, v in asked.info.items() if v is not None})
        else:
            entry["model"] = asked.info.get("model")
        _emit(req, entry)


async def _run_one(req: ExchangeRequest, st: ExchangeState, call: ToolCall) -> ToolEvent:
    began = time.perf_counter()
    if call.parse_error:
        result = ToolResult.failure(
            f"invalid arguments for {call.name!r}: {call.parse_error}; send one JSON object that matches "
            "the tool's schema"
        )
    else:
        with span(f"execute_tool {call.name}", {genai.OPERATION: "execute_tool", genai.TOOL_NAME: call.name,
                                                genai.TOOL_CALL_ID: call.id, genai.ROLE: req.ctx.role,
                                                "sabha.tool.arguments_bytes": len(call.raw_arguments or "")}) as seen:
            result = await st.registry.call(call.name, call.arguments, req.ctx, st.allowed)
            seen.update({"sabha.tool.ok": result.ok, "sabha.tool.error": None if result.ok else "failed"})
    tool = st.registry.get(call.name)
    return ToolEvent(call, result, round((time.perf_counter() - began) * 1000, 2), st.step,
                     origin=tool.origin if tool is not None else None, ts=utc_now())


async def _report(req: ExchangeRequest, deps: ExchangeDeps, event: ToolEvent) -> None:
    payload = event.result.to_text()
    size = len(payload.encode("utf-8"))
    entry: dict[str, Any] = {
        "type": "tool_result", "ts": utc_now(), "id": event.call.id, "agent": req.ctx.role,
        "name": event.call.name, "ok": event.result.ok, "latency_ms": event.latency_ms,
        "bytes": size, "result": clip(payload, 2000), "step": event.step,
    }
    if not event.result.ok:
        entry["error"] = event.result.error
        entry["retryable"] = event.result.retryable
    _emit(req, entry)
    if not event.result.ok:
        log.info("tool %s for %s failed: %s", event.call.name, req.ctx.role, event.result.error)
    ctx = req.ctx
    try:
        await deps.ledger.record_tool_call(ToolCallRecord(
            name=event.call.name, ok=event.result.ok,
            args=event.call.arguments if not event.call.parse_error else event.call.raw_arguments,
            call_id=event.call.id, error=event.result.error, retryable=event.result.retryable,
            result_bytes=size, latency_ms=event.latency_ms, role=ctx.role, session_key=ctx.session_key,
            meeting_id=ctx.meeting_id, server=event.origin.server if event.origin is not None else None,
        ))
    except Exception:  # bookkeeping must not break the turn
        log.exception("recording tool call %s failed", event.call.name)


def _append_round(st: ExchangeState, asked: ToolRound, results: Sequence[ToolEvent], last_round: bool) -> None:
    messages = st.messages
    if st.text_mode:
        messages.append(ChatMessage(role="assistant", content=asked.response_text))
        messages.append(ChatMessage(
            role="user",
            content=text_tools.results_message(((e.call, e.result.to_text()) for e in results), final=last_round),
        ))
    else:
        messages.append(ChatMessage(role="assistant", content=asked.response_text, tool_calls=asked.calls))
        for event in results:
            messages.append(ChatMessage(role="tool", content=clip(event.result.to_text()),
                                        tool_call_id=event.call.id, name=event.call.name))
        if last_round:
            messages.append(ChatMessage(role="user", content=CAP_NOTE.format(n=st.max_rounds)))
    # the next step reads this one's prompt from the cache and writes only the new round
    messages[-1] = replace(messages[-1], cache_point=True)


def _emit(req: ExchangeRequest, entry: dict[str, Any]) -> None:
    hook = req.on_event
    if hook is None:
        return
    try:
        hook(entry)
    except Exception:  # a transcript write problem must not stop the tool loop
        log.exception("recording a %s event failed", entry.get("type"))
