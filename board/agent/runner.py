"""Agent turns and exchanges: soul -> prompt -> model <-> tools -> answer.

:meth:`AgentRunner.exchange` is the reusable core and needs no transcript: a role, a
prompt (a built prompt, messages or one question) and a :class:`ToolContext` go in;
the model is called through :class:`ResilientCaller` (deadline, retry, fallback chain),
tool calls are run through the :class:`ToolRegistry` (at most ``max_tool_iterations``
rounds, then the model must answer with what it has), every model and tool call is
written to the ledger, and an :class:`ExchangeOutcome` comes back. When every model
fails the outcome is a short in-voice reply marked ``degraded``. Consultations and
meetings build on ``exchange``.

:meth:`AgentRunner.turn` is one chat turn: the user's message is written to the
transcript (and flushed) before any model is called, so a crash mid-turn never loses
what the user said (and the same message resumed after the crash is not written again);
the history window is compacted when it is over budget; tool calls
and results are appended as they happen; the answer is appended with its soul version,
model, usage, cost and latency, and the file is fsynced when the turn ends.

Tool permissions: a role may use the tools its soul front matter or
``board.agents.<role>.tools`` lists; ``None`` there means the config's default set
(``tools.default``), and ``None`` there means every registered tool. An empty list
means no tools.
"""

from __future__ import annotations

import asyncio
import fnmatch
import functools
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from board.agent.compaction import (
    CompactionResult,
    Compactor,
    ContextSettings,
    Summary,
    cut_in_blocks,
    entry_message,
    load_window,
    new_entry_id,
    summary_block_text,
)
from board.agent.guardrails import GuardInput, Guardrails
from board.agent.tokens import TokenCounter, counter_for
from board.agent.tools import Tool, ToolContext, ToolRegistry, ToolResult
from board.allowance import Reservation, SpendGate, current_allowance, worst_case
from board.budget import sender_id
from board.envelope import Envelope, Reply
from board.llm import text_tools
from board.llm.base import (
    ChatMessage,
    LLMError,
    LLMRequest,
    Persona,
    PromptBlock,
    ToolCall,
    Usage,
)
from board.llm.errors import missing_key_extra
from board.llm.pricing import PriceTable
from board.llm.registry import ProviderRegistry
from board.llm.resilience import Attempt, ResilientCaller, RetryPolicy, model_chain
from board.memory.facts import Fact, FactStore
from board.memory.ledger import Ledger, LLMCallRecord, ToolCallRecord
from board.memory.sessions import Sessions
from board.memory.transcripts import TAIL_ENTRIES, Transcript, utc_now
from board.workspace.prompt import DYNAMIC_BLOCK, BuiltPrompt, PromptBuilder, TurnContext, lay_out
from board.workspace.souls import AgentProfile, SoulStore

__all__ = [
    "CAP_REPLY",
    "DEGRADED_REPLY",
    "DEGRADED_SETUP_REPLY",
    "EMPTY_REPLY",
    "AgentRunner",
    "AgentSettings",
    "EventHook",
    "ExchangeOutcome",
    "ToolEvent",
    "place_of",
    "prompt_attribution",
]

log = logging.getLogger("sabha.agent")

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

SUMMARIZER_SYSTEM = (
    "You keep the running memory of a conversation between the Director and {name}, an advisor on a board. "
    "Write an updated summary that folds the new messages into the previous summary. Keep facts, numbers, "
    "decisions, commitments, open questions and the Director's stated preferences; drop pleasantries. "
    "Plain text, third person, at most {words} words."
)

EventHook = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class AgentSettings:
    """Knobs of a turn that come from config (``llm.*`` and ``board.history_messages``)."""

    default_model: str = "offline"
    history_messages: int = 20
    max_tokens: int = 1024
    fallbacks: tuple[str, ...] = ()
    cheap_model: str | None = None
    max_tool_iterations: int = 4
    default_tools: tuple[str, ...] | None = None
    text_tool_models: tuple[str, ...] = ()
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    turn_timeout_s: float | None = 300.0
    prices: PriceTable = field(default_factory=PriceTable)
    context: ContextSettings = field(default_factory=ContextSettings)


@dataclass(frozen=True)
class ToolEvent:
    """One tool call of an exchange and its result."""

    call: ToolCall
    result: ToolResult
    latency_ms: float
    step: int


@dataclass(frozen=True)
class ExchangeOutcome:
    """The result of :meth:`AgentRunner.exchange`."""

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


def place_of(envelope: Envelope) -> str:
    """A short description of where the message was posted, for the prompt."""
    if envelope.is_group:
        return f"group {envelope.chat_id}" + (f", topic {envelope.thread_id}" if envelope.thread_id else "")
    return "direct chat"


def prompt_attribution(
    system: Sequence[PromptBlock],
    messages: Sequence[ChatMessage],
    tools: Sequence[Any],
    counter: TokenCounter,
    soul: str,
) -> dict[str, Any]:
    """Tokens per prompt block (seed 001 §10.2): static, soul, summary, history, message, dynamic
    (the per-turn context after the conversation), tools; and ``cacheable_prefix``, the tokens
    before the last cache breakpoint (tool schemas, the system prompt and, with a rolling
    breakpoint, the conversation up to the new message)."""
    blocks: dict[str, Any] = {}
    for block in system:
        blocks[block.name] = blocks.get(block.name, 0) + counter.count(block.text)
    if "static" in blocks and soul and soul.strip() in next((b.text for b in system if b.name == "static"), ""):
        soul_tokens = min(blocks["static"], counter.count(soul.strip()))
        blocks["soul"] = soul_tokens
        blocks["static"] -= soul_tokens
    plain = [replace(m, context="") if m.context else m for m in messages]
    last_user = max((i for i, m in enumerate(plain) if m.role == "user"), default=None)
    history = plain[:last_user] if last_user is not None else plain
    blocks["history"] = counter.count_messages(history)
    blocks["message"] = counter.count_messages(plain[last_user:]) if last_user is not None else 0
    blocks["dynamic"] = blocks.get("dynamic", 0) + sum(counter.count(m.context) for m in messages if m.context)
    if tools:
        blocks["tools"] = sum(counter.count(json.dumps(t.parameters)) + counter.count(t.name + t.description)
                              for t in tools)
    # Tool schemas precede the system prompt in the provider's cache prefix and are just as stable.
    last_point = max((i for i, m in enumerate(plain) if m.cache_point), default=None)
    if last_point is not None:
        prefix = sum(counter.count(b.text) for b in system) + counter.count_messages(plain[: last_point + 1])
    else:
        prefix = sum(counter.count(b.text) for b in _cacheable_prefix(system))
    blocks["cacheable_prefix"] = blocks.get("tools", 0) + prefix
    blocks["method"] = counter.method
    return blocks


def _cacheable_prefix(system: Sequence[PromptBlock]) -> list[PromptBlock]:
    prefix = []
    for block in system:
        if not block.cacheable:
            break
        prefix.append(block)
    return prefix


def _clip(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class AgentRunner:
    """Runs exchanges and turns for any role; one instance serves the whole board."""

    def __init__(
        self,
        souls: SoulStore,
        prompts: PromptBuilder,
        sessions: Sessions,
        providers: ProviderRegistry,
        settings: AgentSettings,
        *,
        tools: ToolRegistry | None = None,
        ledger: Ledger | None = None,
        caller: ResilientCaller | None = None,
    ) -> None:
        self.souls = souls
        self.prompts = prompts
        self.sessions = sessions
        self.settings = settings
        self.tools = tools if tools is not None else ToolRegistry()
        self.ledger = ledger
        self.caller = caller or ResilientCaller(providers, settings.retry)
        self.compactor = Compactor(settings.context)
        # Told of every finished turn (the fields of its log line); the daemon's metrics plug in here.
        self.turn_observers: list[Callable[[Mapping[str, Any]], None]] = []
        #: User memory recalled into the per-turn block, and the checks every free-text answer passes.
        self.memory: FactStore | None = None
        self.guardrails: Guardrails | None = None
        #: Holds every model call made for a stranger to their limits, before it is made (:mod:`board.allowance`).
        self.spend: SpendGate | None = None
        #: The time the per-turn block shows (a benchmark or a replay may set its own clock).
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    # -- policy ------------------------------------------------------------------

    def model_for(self, profile: AgentProfile) -> str:
        """The model a role uses: config/soul override, else the default."""
        return profile.model or self.settings.default_model

    def allowed_tools(self, profile: AgentProfile) -> tuple[str, ...]:
        """Tools ``profile`` may call (see the module docstring for what None means)."""
        if profile.tools is not None:
            return tuple(profile.tools)
        if self.settings.default_tools is not None:
            return tuple(self.settings.default_tools)
        return tuple(self.tools.names_for(profile.role))

    def uses_text_protocol(self, model: str) -> bool:
        """True when ``model`` is configured for the ``[TOOL: name ARG: {...}]`` text protocol."""
        return any(fnmatch.fnmatchcase(model, pattern) for pattern in self.settings.text_tool_models)

    def system_for(self, profile: AgentProfile, ctx: ToolContext, *,
                   summary: str | None = None) -> tuple[PromptBlock, ...]:
        """System blocks for ``profile``: static, then the compaction summary if any (both cacheable).
        The per-turn block is not here: see :meth:`context_for`."""
        static = self.prompts.static(profile, self.souls.profiles(), self.souls.roster.name)
        blocks = [PromptBlock("static", static, cacheable=True)]
        if summary:
            blocks.append(PromptBlock("summary", summary_block_text(summary), cacheable=True))
        return tuple(blocks)

    def turn_context(self, ctx: ToolContext, memory: Sequence[Fact] = ()) -> TurnContext:
        """The per-turn facts of ``ctx``: time, channel, place, sender, what the role remembers."""
        envelope = ctx.envelope
        return TurnContext(
            channel=envelope.channel if envelope else "internal",
            place=place_of(envelope) if envelope else "board",
            sender=(envelope.sender_name or envelope.sender) if envelope else "the board",
            now=self.clock(),
            memory=tuple(memory),
        )

    def context_for(self, ctx: ToolContext, memory: Sequence[Fact] = ()) -> str:
        """The per-turn block of ``ctx`` (rendered ``dynamic.md.j2``), sent after the cached prefix."""
        return self.prompts.dynamic(self.turn_context(ctx, memory))

    async def recall(self, ctx: ToolContext) -> tuple[Fact, ...]:
        """What ``ctx``'s role remembers about the user of ``ctx`` (none without a user or memory)."""
        if self.memory is None or ctx.envelope is None:
            return ()
        try:
            return await self.memory.recall(sender_id(ctx.envelope), ctx.role)
        except Exception:  # a memory read must not stop the answer
            log.exception("recalling memory for %s failed", ctx.role)
            return ()

    # -- exchange ----------------------------------------------------------------

    async def exchange(
        self,
        profile: AgentProfile,
        prompt: BuiltPrompt | Sequence[ChatMessage] | str,
        ctx: ToolContext,
        *,
        system: Sequence[PromptBlock] | None = None,
        tools_allowed: Iterable[str] | None = None,
        extra_tools: Sequence[Tool] = (),
        model: str | None = None,
        fallbacks: Sequence[str] | None = None,
        max_tool_iterations: int | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        ledger_tags: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        on_event: EventHook | None = None,
    ) -> ExchangeOutcome:
        """Ask ``profile`` one thing and run its tool loop; never raises for model or tool failures.

        ``prompt`` is a built prompt (system + messages), a list of messages, or one question
        (then the system prompt is the role's own static block, so the cached prefix is shared
        with its chats, and the per-turn block follows the question). A ``system`` block named
        ``dynamic`` (per-turn content) is taken out of the system prompt and sent after the
        conversation instead, so it never sits inside a cached prefix. ``tools_allowed`` replaces
        the role's permitted tools; ``extra_tools`` are added to the registry and permitted for this exchange only.
        ``on_event`` receives ``tool_call`` / ``tool_result`` transcript entries as they happen.
        ``temperature`` replaces the role's own (soul front matter or ``board.agents.<role>``).
        """
        started = time.perf_counter()
        model = model or self.model_for(profile)
        tags = dict(ledger_tags or {})
        purpose = str(tags.pop("purpose", "turn"))
        if isinstance(prompt, BuiltPrompt):
            blocks = tuple(system) if system is not None else prompt.blocks
            messages = list(prompt.laid_out())
        else:
            if system is not None:
                blocks = tuple(b for b in system if b.name != DYNAMIC_BLOCK)
                dynamic = "\n".join(b.text for b in system if b.name == DYNAMIC_BLOCK)
            else:
                blocks, dynamic = self.system_for(profile, ctx), self.context_for(ctx, await self.recall(ctx))
            asked = [ChatMessage(role="user", content=prompt)] if isinstance(prompt, str) else list(prompt)
            messages = list(lay_out(asked, dynamic, rolling=False))
        registry = self.tools.merged(extra_tools)
        allowed = list(tools_allowed) if tools_allowed is not None else list(self.allowed_tools(profile))
        allowed += [t.spec.name for t in extra_tools if t.spec.name not in allowed]
        specs = registry.specs(allowed)
        limit = self.settings.max_tool_iterations if max_tool_iterations is None else max_tool_iterations
        text_mode = bool(specs) and self.uses_text_protocol(model)
        if text_mode:
            blocks = (*blocks, PromptBlock("tools", text_tools.instructions(specs), cacheable=False))
        counter = counter_for(model)
        base_blocks = prompt_attribution(blocks, messages, () if text_mode else specs, counter, profile.soul.text)
        first_loop_message = len(messages)
        persona = Persona(role=profile.role, name=profile.name, emoji=profile.emoji, soul=profile.soul.text)
        meta = {"session_key": ctx.session_key, "soul_version": profile.soul.version, "purpose": purpose,
                **dict(metadata or {})}
        chain = model_chain(model, self.settings.fallbacks if fallbacks is None else fallbacks)
        deadline = ctx.deadline
        if deadline is None and self.settings.turn_timeout_s:
            deadline = asyncio.get_running_loop().time() + self.settings.turn_timeout_s

        usage = Usage()
        cost: float | None = 0.0
        events: list[ToolEvent] = []
        calls_made = 0
        used_model = model
        text = ""
        hit_cap = False
        error: str | None = None
        failure: BaseException | None = None
        degraded = False
        setup_problem = False
        step = 0
        budget = ctx.budget  # a meeting's, checked before every further model call
        while True:
            if step > 0 and budget is not None and (reason := budget.over_budget(cost or 0.0)):
                log.info("role %s: stopping the tool loop before another model call: %s", profile.role, reason)
                text = f"(I stopped before finishing: {reason}.)"
                break
            final = step >= limit or not specs
            step_blocks = dict(base_blocks)
            if len(messages) > first_loop_message:
                step_blocks["tool_loop"] = counter.count_messages(messages[first_loop_message:])
            request = LLMRequest(
                model=chain[0],
                system=blocks,
                messages=tuple(messages),
                persona=persona,
                tools=() if (text_mode or not specs or limit == 0) else specs,
                max_tokens=max_tokens or self.settings.max_tokens,
                metadata=dict(meta, step=step),
                tool_choice="none" if final else "auto",
                temperature=temperature if temperature is not None else profile.temperature,
            )
            reservation = await self._reserve(request, chain)  # raises SpendRefused: the call is not made
            try:
                result = await self.caller.call(
                    request, chain, deadline=deadline,
                    on_attempt=functools.partial(self._record_attempt, ctx=ctx, purpose=purpose, tags=tags,
                                                 blocks=step_blocks, step=step),
                )
            finally:  # the call is recorded (its cost counted) by now
                if reservation is not None:
                    reservation.release()
            calls_made += len(result.attempts)
            if result.response is None or result.model is None:
                degraded = True
                failure = result.error
                error = str(result.error) if result.error else "no model answered"
                # only what the owner must fix (a key, a model name) is called a setup problem, not any
                # error that is not retried (e.g. a 400 for a context that is too long)
                setup_problem = isinstance(result.error, LLMError) and result.error.setup_problem
                break
            chain = chain[chain.index(result.model):]
            response = result.response
            used_model = result.model
            usage = usage + response.usage
            step_cost = self.settings.prices.cost(result.model, response.usage)
            cost = None if (cost is None or step_cost is None) else cost + step_cost
            if text_mode:
                parsed = text_tools.parse(response.text, id_prefix=f"t{step + 1}")
                calls, visible = parsed.calls, parsed.text
            else:
                calls, visible = response.tool_calls, response.text
            if not calls:
                text = visible
                break
            if final:
                hit_cap = True
                text = visible
                log.warning("role %s: the model asked for tools after the cap of %d; answering with what it has",
                            profile.role, limit)
                break
            step += 1
            step_info = {"model": result.model, "usage": response.usage.as_dict(), "cost_usd": step_cost}
            results = await self._run_tools(calls, registry, allowed, ctx, step, step_info, on_event)
            events.extend(results)
            last_round = step >= limit
            if last_round:
                hit_cap = True
            if text_mode:
                messages.append(ChatMessage(role="assistant", content=response.text))
                messages.append(ChatMessage(
                    role="user",
                    content=text_tools.results_message(((e.call, e.result.to_text()) for e in results),
                                                       final=last_round),
                ))
            else:
                messages.append(ChatMessage(role="assistant", content=response.text, tool_calls=tuple(calls)))
                for event in results:
                    messages.append(ChatMessage(role="tool", content=_clip(event.result.to_text()),
                                                tool_call_id=event.call.id, name=event.call.name))
                if last_round:
                    messages.append(ChatMessage(role="user", content=CAP_NOTE.format(n=limit)))
            # the next step reads this one's prompt from the cache and writes only the new round
            messages[-1] = replace(messages[-1], cache_point=True)

        if not degraded and self.guardrails is not None and purpose != "compaction" \
                and not (metadata or {}).get("response_schema"):  # free text on its way out (JSON is validated)
            text = await self.guardrails.apply(
                GuardInput(text=text, role=profile.role, model=used_model,
                           system=tuple(b.text for b in blocks if b.name != "summary"),
                           empty_reply=CAP_REPLY if hit_cap else None),
                session_key=ctx.session_key, meeting_id=ctx.meeting_id, purpose=purpose)
        if degraded:
            text = DEGRADED_SETUP_REPLY if setup_problem else DEGRADED_REPLY
            log.error("role %s (%s): answering degraded: %s", profile.role, ctx.session_key, error,
                      extra=missing_key_extra(failure))
        elif not text.strip():
            text = CAP_REPLY if hit_cap else EMPTY_REPLY
        return ExchangeOutcome(
            text=text.strip(),
            model=used_model,
            degraded=degraded,
            usage=usage,
            cost_usd=round(cost, 8) if cost is not None else None,
            latency_ms=round((time.perf_counter() - started) * 1000, 2),
            tool_events=tuple(events),
            llm_calls=calls_made,
            hit_tool_cap=hit_cap,
            error=error,
        )

    async def _reserve(self, request: LLMRequest, chain: Sequence[str]) -> Reservation | None:
        """Hold the call's worst case against the limits of a stranger's message (None: no limits)."""
        if self.spend is None or current_allowance.get() is None:
            return None
        worst, unpriced = worst_case(request, list(chain), self.settings.prices)
        return await self.spend.reserve(worst, model=unpriced)

    async def _run_tools(
        self,
        calls: Sequence[ToolCall],
        registry: ToolRegistry,
        allowed: Sequence[str],
        ctx: ToolContext,
        step: int,
        step_info: Mapping[str, Any],
        on_event: EventHook | None,
    ) -> list[ToolEvent]:
        for index, call in enumerate(calls):
            entry: dict[str, Any] = {
                "type": "tool_call", "ts": utc_now(), "id": call.id, "agent": ctx.role, "name": call.name,
                "arguments": call.arguments, "step": step,
            }
            if call.parse_error:
                entry["raw_arguments"] = call.raw_arguments
                entry["parse_error"] = call.parse_error
            if index == 0:  # the model call that asked for these tools
                entry.update({k: v for k, v in step_info.items() if v is not None})
            else:
                entry["model"] = step_info.get("model")
            _emit(on_event, entry)

        async def run(call: ToolCall) -> ToolEvent:
            began = time.perf_counter()
            if call.parse_error:
                result = ToolResult.failure(
                    f"invalid arguments for {call.name!r}: {call.parse_error}; send one JSON object that matches "
                    "the tool's schema"
                )
            else:
                result = await registry.call(call.name, call.arguments, ctx, allowed)
            return ToolEvent(call, result, round((time.perf_counter() - began) * 1000, 2), step)

        results = list(await asyncio.gather(*(run(c) for c in calls)))
        for event in results:
            payload = event.result.to_text()
            entry = {
                "type": "tool_result", "ts": utc_now(), "id": event.call.id, "agent": ctx.role,
                "name": event.call.name, "ok": event.result.ok, "latency_ms": event.latency_ms,
                "bytes": len(payload.encode("utf-8")), "result": _clip(payload, 2000), "step": step,
            }
            if not event.result.ok:
                entry["error"] = event.result.error
                entry["retryable"] = event.result.retryable
            _emit(on_event, entry)
            if not event.result.ok:
                log.info("tool %s for %s failed: %s", event.call.name, ctx.role, event.result.error)
            await self._record_tool(event, ctx, len(payload.encode("utf-8")))
        return results

    async def _record_attempt(
        self, attempt: Attempt, ctx: ToolContext, purpose: str, tags: Mapping[str, Any],
        blocks: Mapping[str, Any], step: int,
    ) -> None:
        if self.ledger is None:
            return
        response = attempt.response
        usage = response.usage if response is not None else Usage()
        cost = self.settings.prices.cost(attempt.model, usage) if response is not None else 0.0
        saved = self.settings.prices.saved(attempt.model, usage) if response is not None else 0.0
        await self.ledger.record_llm_call(LLMCallRecord(
            provider=attempt.provider, model=attempt.model, outcome=attempt.outcome, usage=usage, cost_usd=cost,
            saved_usd=saved,
            latency_ms=attempt.latency_ms, ttft_ms=response.ttft_ms if response is not None else None,
            role=ctx.role, session_key=ctx.session_key, meeting_id=ctx.meeting_id, purpose=purpose,
            attempt=attempt.number, error=attempt.error, blocks=dict(blocks, step=step), tags=dict(tags) or None,
        ))

    async def _record_tool(self, event: ToolEvent, ctx: ToolContext, size: int) -> None:
        if self.ledger is None:
            return
        try:
            await self.ledger.record_tool_call(ToolCallRecord(
                name=event.call.name, ok=event.result.ok,
                args=event.call.arguments if not event.call.parse_error else event.call.raw_arguments,
                call_id=event.call.id, error=event.result.error, retryable=event.result.retryable,
                result_bytes=size, latency_ms=event.latency_ms, role=ctx.role, session_key=ctx.session_key,
                meeting_id=ctx.meeting_id,
            ))
        except Exception:  # bookkeeping must not break the turn
            log.exception("recording tool call %s failed", event.call.name)

    # -- compaction --------------------------------------------------------------

    async def _summarize(self, ctx: ToolContext, profile: AgentProfile, previous: str | None,
                         conversation: str) -> Summary:
        settings = self.settings.context
        words = max(50, int(settings.summary_max_tokens * 0.7))
        system = (PromptBlock("summarizer", SUMMARIZER_SYSTEM.format(name=profile.name, words=words)),)
        body = (f"Previous summary:\n{previous}\n\n" if previous else "") + \
            f"New messages to fold in:\n{conversation}\n\nWrite the updated summary."
        model = self.settings.cheap_model or self.model_for(profile)
        outcome = await self.exchange(
            profile, body, ctx, system=system, tools_allowed=(), model=model, max_tool_iterations=0,
            max_tokens=settings.summary_max_tokens, ledger_tags={"purpose": "compaction"},
            metadata={"purpose": "compaction"},
        )
        return Summary(outcome.text, outcome.model, outcome.degraded, outcome.usage, outcome.cost_usd)

    async def compact(self, key: str, role: str, *, force: bool = True,
                      envelope: Envelope | None = None) -> CompactionResult | None:
        """Compact session ``key`` now (``/compact``). The caller holds the key's lock."""
        profile = self.souls.profile(role)
        transcript = await self.sessions.open(key, role)
        ctx = ToolContext(role=role, session_key=key, envelope=envelope, chain=(role,))

        async def summarize(_role: str, _name: str, previous: str | None, conversation: str) -> Summary:
            return await self._summarize(ctx, profile, previous, conversation)

        return await self.compactor.compact(
            transcript, role=role, agent_name=profile.name, counter=counter_for(self.model_for(profile)),
            summarize=summarize, force=force,
            keep=None if not force else min(2, self.settings.context.keep_recent_messages),
        )

    async def _history(self, transcript: Transcript, profile: AgentProfile, ctx: ToolContext,
                       counter: TokenCounter, current_id: str) -> tuple[str | None, list[ChatMessage]]:
        """Summary and history messages for the next prompt: the window before the entry ``current_id``
        (the message being answered; the last one, unless a resumed turn had written more after it).

        Over the cap or the budget, the window is compacted (summarised; with compaction off, cut by a
        block): it never slides by one message per turn, so the prompt prefix stays byte-stable."""
        limit = self.settings.history_messages
        if limit <= 0:
            return None, []
        context = self.settings.context
        window = load_window(transcript)
        current = len(window.messages()) - len(window.messages_before(current_id))
        if self.compactor.needs_compaction(window, counter, profile.role, limit, exclude_last=current):
            if context.compaction:

                async def summarize(_role: str, _name: str, previous: str | None, conversation: str) -> Summary:
                    return await self._summarize(ctx, profile, previous, conversation)

                keep = context.keep_recent_messages if context.keep_recent_messages < limit else max(1, limit // 2)
                done = await self.compactor.compact(transcript, role=profile.role, agent_name=profile.name,
                                                    counter=counter, summarize=summarize, keep=keep)
            else:
                done = await self.compactor.drop(transcript, role=profile.role, counter=counter, max_messages=limit,
                                                 exclude_last=current)
            if done is not None:
                window = load_window(transcript)
        messages = window.messages_before(current_id)
        reserved = counter.count(summary_block_text(window.summary)) if window.summary else 0
        # Still over (the summariser is down, or one exchange is bigger than the budget): leave out whole
        # blocks of the oldest messages, counted from the window's start, so the cut holds from turn to turn.
        messages = cut_in_blocks(messages, counter, budget=context.budget_for(profile.role), max_messages=limit,
                                 block=context.block, reserved=reserved)
        return window.summary, messages

    # -- turn --------------------------------------------------------------------

    async def turn(
        self,
        role: str,
        key: str,
        envelope: Envelope,
        text: str,
    ) -> Reply:
        """Answer ``text`` as ``role`` in session ``key``. The caller holds the key's lock.

        A message the transcript already holds (the same channel and message id: a turn a
        crash cut short, resumed by the intake) is answered without being written again."""
        profile = self.souls.profile(role)
        transcript = await self.sessions.open(key, role)
        user_entry = _earlier_entry(transcript, envelope)
        if user_entry is None:
            user_entry = _user_entry(envelope, text)
            transcript.append(user_entry)
        else:
            log.info("role %s key=%s: message %s is already in the transcript; answering it again without a copy",
                     role, key, envelope.message_id)

        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.turn_timeout_s if self.settings.turn_timeout_s else None
        ctx = ToolContext(role=role, session_key=key, envelope=envelope, chain=(role,), deadline=deadline,
                          transcript=transcript, consult_cache={})
        model = self.model_for(profile)
        counter = counter_for(model)
        summary, history = await self._history(transcript, profile, ctx, counter, str(user_entry["id"]))
        prompt = BuiltPrompt(
            static=self.prompts.static(profile, self.souls.profiles(), self.souls.roster.name),
            dynamic=self.context_for(ctx, await self.recall(ctx)),
            messages=(*history, entry_message(user_entry) or ChatMessage(role="user", content=text)),
            summary=summary_block_text(summary) if summary else None,
        )
        outcome = await self.exchange(profile, prompt, ctx, model=model, on_event=transcript.append)

        entry: dict[str, Any] = {
            "type": "message",
            "id": new_entry_id(),
            "ts": utc_now(),
            "role": "assistant",
            "agent": role,
            "text": outcome.text,
            "soul_version": profile.soul.version,
            "model": outcome.model,
            "latency_ms": outcome.latency_ms,
            "llm_calls": outcome.llm_calls,
        }
        if outcome.llm_calls:
            entry["usage"] = outcome.usage.as_dict()
            entry["cost_usd"] = outcome.cost_usd
        if outcome.tool_events:
            entry["tool_calls"] = len(outcome.tool_events)
        if outcome.hit_tool_cap:
            entry["tool_cap"] = True
        if outcome.degraded:
            entry["degraded"] = True
            entry["error"] = outcome.error
        transcript.append(entry)
        await transcript.sync()
        fields: dict[str, Any] = {
            "event": "turn", "channel": envelope.channel, "session_key": key, "role": role,
            "soul": profile.soul.version, "model": outcome.model, "llm_calls": outcome.llm_calls,
            "tool_calls": len(outcome.tool_events), "latency_ms": round(outcome.latency_ms, 1),
            "input_tokens": outcome.usage.input_tokens, "output_tokens": outcome.usage.output_tokens,
            "cache_read_tokens": outcome.usage.cache_read_tokens,
            "cache_write_tokens": outcome.usage.cache_write_tokens,
            "cost_usd": outcome.cost_usd, "degraded": outcome.degraded,
        }
        log.info(
            "turn channel=%s role=%s key=%s soul=%s model=%s calls=%d tools=%d latency_ms=%.1f tokens=%d/%d "
            "cached=%d written=%d cost=%s%s",
            envelope.channel, role, key, profile.soul.version, outcome.model, outcome.llm_calls,
            len(outcome.tool_events), outcome.latency_ms, outcome.usage.input_tokens, outcome.usage.output_tokens,
            outcome.usage.cache_read_tokens, outcome.usage.cache_write_tokens, outcome.cost_usd,
            " degraded" if outcome.degraded else "", extra=fields,
        )
        for observer in list(self.turn_observers):
            try:
                observer(fields)
            except Exception:
                log.exception("turn observer %r failed", observer)
        return Reply.to(
            envelope,
            role=role,
            name=profile.name,
            emoji=profile.emoji,
            text=outcome.text,
            session_key=key,
            degraded=outcome.degraded,
        )


def _user_entry(envelope: Envelope, text: str) -> dict[str, Any]:
    """The transcript entry of a user's message."""
    entry: dict[str, Any] = {
        "type": "message",
        "id": new_entry_id(),
        "ts": utc_now(),
        "role": "user",
        "text": text,
        "sender": envelope.sender,
        "channel": envelope.channel,
    }
    if envelope.sender_name:
        entry["sender_name"] = envelope.sender_name
    if envelope.message_id is not None:
        entry["message_id"] = envelope.message_id
    if envelope.is_group:
        entry["is_group"] = True  # history shows who said what
    return entry


def _earlier_entry(transcript: Transcript, envelope: Envelope) -> dict[str, Any] | None:
    """The user entry ``envelope``'s message already left in the transcript's recent tail (same channel
    and message id), or None. Reads the in-memory tail only."""
    if envelope.message_id is None:
        return None
    for entry in transcript.recent(TAIL_ENTRIES)[::-1]:
        if (entry.get("role") == "user" and entry.get("message_id") == envelope.message_id
                and entry.get("channel") == envelope.channel and isinstance(entry.get("id"), str)):
            return entry
    return None


def _emit(hook: EventHook | None, entry: dict[str, Any]) -> None:
    if hook is None:
        return
    try:
        hook(entry)
    except Exception:  # a transcript write problem must not stop the tool loop
        log.exception("recording a %s event failed", entry.get("type"))
