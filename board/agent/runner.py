"""Agent turns and exchanges: soul -> prompt -> model <-> tools -> answer.

:meth:`AgentRunner.run` is the reusable core and needs no transcript: an
:class:`ExchangeRequest` (a role, a prompt, a :class:`ToolContext`, limits) goes in and is
answered by the stages of :mod:`board.agent.exchange` with the collaborators the runner is
wired with (:meth:`AgentRunner.exchange_deps`): the model is called through
:class:`ResilientCaller` (deadline, retry, fallback chain), tool calls are run through the
:class:`ToolRegistry` (at most ``max_tool_iterations`` rounds, then the model must answer
with what it has), every model and tool call is written to the ledger, and an
:class:`ExchangeOutcome` comes back. When every model fails the outcome is a short in-voice
reply marked ``degraded``. Consultations and meetings build on it; :meth:`AgentRunner.exchange`
is its keyword form, kept for the callers that still use it (it only builds the request).

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
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, TypedDict, Unpack

from board.agent.compaction import (
    CompactionResult,
    Compactor,
    ContextSettings,
    Summary,
    SummaryAsk,
    cut_in_blocks,
    entry_message,
    load_window,
    summary_block_text,
)
from board.agent.exchange import (
    EventHook,
    ExchangeDeps,
    ExchangeOutcome,
    ExchangePolicy,
    ExchangeRequest,
    ModelChoice,
    ToolEvent,
    ToolPolicy,
    run_exchange,
)
from board.agent.exchange.deps import (
    NO_ALLOWANCE,
    NO_GUARDRAILS,
    NO_LEDGER,
    NO_MEMORY,
    FactMemory,
    FactRecall,
    GatedAllowance,
)
from board.agent.exchange.outcome import CAP_REPLY, DEGRADED_REPLY, DEGRADED_SETUP_REPLY, EMPTY_REPLY
from board.agent.exchange.prepare import prompt_attribution
from board.agent.guardrails import Guardrails
from board.agent.outside import NO_OUTSIDE_TOOLS, OutsideTools
from board.agent.summarizer import SummaryModel, ask_on_its_own, ask_on_prefix
from board.agent.tools import Tool, ToolContext, ToolRegistry
from board.agent.turn import TurnHeard, TurnListener, TurnObserver, observe, record_answer, record_user, tell_listeners
from board.conversation.scope import scope_of
from board.conversation.sessions import Sessions
from board.conversation.transcripts import Transcript, TranscriptError
from board.envelope import Envelope, Reply
from board.language.detect import choose_language
from board.llm.base import ChatMessage, ImagePart, PromptBlock, Thinking
from board.llm.pricing import PriceTable
from board.llm.purpose import CallPurpose
from board.llm.registry import ProviderRegistry
from board.llm.resilience import ResilientCaller, RetryPolicy
from board.llm.stream import take_stream
from board.llm.tokens import TokenCounter, counter_for
from board.people.ref import elsewhere_lines
from board.spending.allowance import SpendGate
from board.spending.budget import sender_id
from board.spending.ledger import Ledger
from board.telemetry.genai import OPERATION, ROLE
from board.telemetry.spans import traced
from board.workspace.prompt import BuiltPrompt, PromptBuilder, Remembered, TurnContext
from board.workspace.souls import AgentProfile, SoulStore

__all__ = [
    "CAP_REPLY",
    "DEGRADED_REPLY",
    "DEGRADED_SETUP_REPLY",
    "EMPTY_REPLY",
    "UNSEEN_NOTICE",
    "AgentRunner",
    "AgentSettings",
    "EventHook",
    "ExchangeOptions",
    "ExchangeOutcome",
    "RunnerHooks",
    "ToolEvent",
    "place_of",
    "policy_of",
    "prompt_attribution",
    "request_of",
]

log = logging.getLogger("sabha.agent")

#: At most this many conversations remembered as due for a summary after their answer (the oldest forgotten: their
#: next turn compacts, as before).
MAX_DUE = 10_000
#: Said with the answer the first time in a conversation that its model could not see a picture sent.
UNSEEN_NOTICE = ("⚠️ I could not look at your picture: the model answering here cannot see pictures, so this "
                 "answer comes from your words alone.")

@dataclass(frozen=True)
class AgentSettings:
    """Knobs of a turn that come from config (``llm.*`` and ``board.history_messages``)."""

    default_model: str = "offline"
    history_messages: int = 20
    max_tokens: int = 1024
    fallbacks: tuple[str, ...] = ()
    cheap_model: str | None = None
    thinking: Thinking = Thinking.OFF
    keep_thinking: bool = False
    max_tool_iterations: int = 4
    default_tools: tuple[str, ...] | None = None
    text_tool_models: tuple[str, ...] = ()
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    turn_timeout_s: float | None = 300.0
    prices: PriceTable = field(default_factory=PriceTable)
    context: ContextSettings = field(default_factory=ContextSettings)
    vision_models: tuple[str, ...] = ()  # media.vision_models: models that see pictures besides the known ones


def place_of(envelope: Envelope) -> str:
    """A short description of where the message was posted, for the prompt."""
    if envelope.is_group:
        return f"group {envelope.chat_id}" + (f", topic {envelope.thread_id}" if envelope.thread_id else "")
    return "direct chat"


class ExchangeOptions(TypedDict, total=False):
    """The keyword arguments of :meth:`AgentRunner.exchange`, each a field of :class:`ExchangeRequest`.

    ``system`` replaces the role's system prompt (a block named ``dynamic`` is sent after the
    conversation); ``tools_allowed`` replaces the role's permitted tools; ``extra_tools`` are added and
    permitted for this exchange only; ``max_tool_iterations`` bounds the tool rounds; ``temperature``
    replaces the role's own; ``ledger_tags["purpose"]`` is the request's ``purpose``;
    ``metadata["response_schema"]`` its ``response_schema``; ``on_event`` receives ``tool_call`` /
    ``tool_result`` transcript entries as they happen."""

    system: Sequence[PromptBlock] | None
    tools_allowed: Iterable[str] | None
    extra_tools: Sequence[Tool]
    model: str | None
    fallbacks: Sequence[str] | None
    max_tool_iterations: int | None
    max_tokens: int | None
    temperature: float | None
    ledger_tags: Mapping[str, Any] | None
    metadata: Mapping[str, Any] | None
    on_event: EventHook | None


def request_of(profile: AgentProfile, prompt: BuiltPrompt | Sequence[ChatMessage] | str, ctx: ToolContext,
               options: ExchangeOptions) -> ExchangeRequest:
    """The :class:`ExchangeRequest` the keyword form of an exchange asks for."""
    tags = dict(options.get("ledger_tags") or {})
    metadata = dict(options.get("metadata") or {})
    system = options.get("system")
    allowed = options.get("tools_allowed")
    fallbacks = options.get("fallbacks")
    return ExchangeRequest(
        profile=profile, ctx=ctx,
        prompt=prompt if isinstance(prompt, BuiltPrompt | str) else tuple(prompt),
        system=tuple(system) if system is not None else None,
        tools=ToolPolicy(allowed=tuple(allowed) if allowed is not None else None,
                         extra=tuple(options.get("extra_tools", ())),
                         max_rounds=options.get("max_tool_iterations")),
        model=ModelChoice(model=options.get("model"), fallbacks=tuple(fallbacks) if fallbacks is not None else None,
                          max_tokens=options.get("max_tokens"), temperature=options.get("temperature")),
        purpose=CallPurpose(str(tags.pop("purpose", CallPurpose.TURN))),
        response_schema=metadata.pop("response_schema", None),
        ledger_tags=tags, metadata=metadata, on_event=options.get("on_event"),
    )


def policy_of(settings: AgentSettings) -> ExchangePolicy:
    """The exchange's share of the agent settings."""
    return ExchangePolicy(
        default_model=settings.default_model, fallbacks=settings.fallbacks, max_tokens=settings.max_tokens,
        max_tool_iterations=settings.max_tool_iterations, default_tools=settings.default_tools,
        text_tool_models=settings.text_tool_models, turn_timeout_s=settings.turn_timeout_s,
        thinking=settings.thinking, keep_thinking=settings.keep_thinking, vision_models=settings.vision_models,
    )


@dataclass(frozen=True, kw_only=True)
class RunnerHooks:
    """What the runner is built with besides its stores: user memory, the guardrails, the stranger's spend
    gate, who is told of finished turns, the model caller (None: a resilient caller over the providers) and
    the source of the roles' outside (MCP) tools."""

    memory: FactRecall | None = None
    guardrails: Guardrails | None = None
    spend: SpendGate | None = None
    turn_observers: tuple[TurnObserver, ...] = ()
    turn_listeners: tuple[TurnListener, ...] = ()
    caller: ResilientCaller | None = None
    #: The outside (MCP) tools a role was given (:mod:`board.tools.mcp`), put in every exchange's deps.
    outside: OutsideTools = NO_OUTSIDE_TOOLS
    #: Awaited before an exchange that may call tools: starts the role's servers on first use (the terminal)
    #: and waits for ones still starting; None: nothing to wait for.
    outside_ready: Callable[[ToolContext], Awaitable[None]] | None = None


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
        hooks: RunnerHooks | None = None,
    ) -> None:
        hooks = hooks or RunnerHooks()
        self.souls = souls
        self.prompts = prompts
        self.sessions = sessions
        self.settings = settings
        self.tools = tools if tools is not None else ToolRegistry()
        self.ledger = ledger
        self.caller = hooks.caller or ResilientCaller(providers, settings.retry)
        self.compactor = Compactor(settings.context)
        #: session key -> session id of a transcript whose next turn would compact it (:meth:`compact_ahead`)
        self._due: dict[str, str] = {}
        # Told of every finished turn (the fields of its log line); the daemon's metrics plug in here.
        self.turn_observers: list[TurnObserver] = list(hooks.turn_observers)
        #: Told of every finished chat turn with what was said (user memory writes itself from it).
        self.turn_listeners: list[TurnListener] = list(hooks.turn_listeners)
        #: User memory recalled into the per-turn block, and the checks every free-text answer passes.
        self.memory: FactRecall | None = hooks.memory
        self.guardrails: Guardrails | None = hooks.guardrails
        #: Holds every model call made for a stranger to their limits, before it is made
        #: (:mod:`board.spending.allowance`).
        self.spend: SpendGate | None = hooks.spend
        #: Where a role's outside (MCP) tools come from, and what starts them on first use.
        self.outside: OutsideTools = hooks.outside
        self._outside_ready = hooks.outside_ready
        #: The time the per-turn block shows (a benchmark or a replay may set its own clock).
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        #: Senders' conversations already told that their model cannot see pictures (once while Sabha runs).
        self._told_unseen: set[str] = set()

    # -- policy ------------------------------------------------------------------

    def model_for(self, profile: AgentProfile) -> str:
        """The model a role uses: config/soul override, else the default."""
        return profile.model or self.settings.default_model

    def allowed_tools(self, profile: AgentProfile) -> tuple[str, ...]:
        """Tools ``profile`` may call (see the module docstring for what None means)."""
        return policy_of(self.settings).allowed_tools(profile, self.tools)

    def uses_text_protocol(self, model: str) -> bool:
        """True when ``model`` is configured for the ``[TOOL: name ARG: {...}]`` text protocol."""
        return policy_of(self.settings).uses_text_protocol(model)

    def system_for(self, profile: AgentProfile, ctx: ToolContext, *,
                   summary: str | None = None) -> tuple[PromptBlock, ...]:
        """System blocks for ``profile``: static, then the compaction summary if any (both cacheable).
        The per-turn block is not here: see :meth:`context_for`."""
        static = self.prompts.static(profile, self.souls.profiles(), self.souls.roster.name)
        blocks = [PromptBlock("static", static, cacheable=True)]
        if summary:
            blocks.append(PromptBlock("summary", summary_block_text(summary), cacheable=True))
        return tuple(blocks)

    def turn_context(self, ctx: ToolContext, memory: Sequence[Remembered] = (), *, text: str | None = None,
                     earlier: Sequence[str] = ()) -> TurnContext:
        """The per-turn facts of ``ctx``: time, channel, place, sender, what the role remembers, and
        the language to answer in: USER.md's, else that of ``text`` (the user's message, by default
        the envelope's), else that of the latest of ``earlier`` (the user's previous messages)."""
        envelope = ctx.envelope
        message = text if text is not None else (envelope.text if envelope else "")
        now = self.clock()
        return TurnContext(
            channel=envelope.channel if envelope else "internal",
            place=place_of(envelope) if envelope else "board",
            sender=(envelope.sender_name or envelope.sender) if envelope else "the board",
            now=now,
            memory=tuple(memory),
            language=choose_language(message, earlier, fixed=self.prompts.user_language()),
            elsewhere=elsewhere_lines(envelope.person if envelope else None, now),
        )

    def context_for(self, ctx: ToolContext, memory: Sequence[Remembered] = (), *, text: str | None = None,
                    earlier: Sequence[str] = ()) -> str:
        """The per-turn block of ``ctx`` (rendered ``dynamic.md.j2``), sent after the cached prefix."""
        return self.prompts.dynamic(self.turn_context(ctx, memory, text=text, earlier=earlier))

    async def recall(self, ctx: ToolContext) -> tuple[Remembered, ...]:
        """What ``ctx``'s role remembers about the user of ``ctx`` (none without a user or memory)."""
        return await (FactMemory(self.memory) if self.memory is not None else NO_MEMORY).recall(ctx)

    # -- exchange ----------------------------------------------------------------

    def exchange_deps(self) -> ExchangeDeps:
        """The collaborators of an exchange, as wired now (a reload may have replaced the settings)."""
        settings = self.settings
        return ExchangeDeps(
            caller=self.caller, tools=self.tools, prompts=self, policy=policy_of(settings), prices=settings.prices,
            memory=FactMemory(self.memory) if self.memory is not None else NO_MEMORY,
            ledger=self.ledger if self.ledger is not None else NO_LEDGER,
            guardrails=self.guardrails if self.guardrails is not None else NO_GUARDRAILS,
            allowance=GatedAllowance(self.spend) if self.spend is not None else NO_ALLOWANCE,
            outside=self.outside,
        )

    async def run(self, request: ExchangeRequest) -> ExchangeOutcome:
        """Answer ``request`` (see :mod:`board.agent.exchange`); never raises for model or tool failures."""
        if request.tools.max_rounds != 0:
            await self.outside_ready(request.ctx)
        return await run_exchange(request, self.exchange_deps())

    async def outside_ready(self, ctx: ToolContext) -> None:
        """Until the outside tools of ``ctx``'s role are ready: its servers started on first use (the terminal)
        or still starting. Never raises: what is not ready is left out."""
        if self._outside_ready is None:
            return
        try:
            await self._outside_ready(ctx)
        except Exception:  # the exchange goes on without the tools that are not ready
            log.exception("starting the outside tools of %s failed", ctx.role)

    async def exchange(
        self,
        profile: AgentProfile,
        prompt: BuiltPrompt | Sequence[ChatMessage] | str,
        ctx: ToolContext,
        **options: Unpack[ExchangeOptions],
    ) -> ExchangeOutcome:
        """Ask ``profile`` one thing and run its tool loop: the keyword form of :meth:`run` (see
        :class:`ExchangeOptions`), kept for the callers that still use it."""
        return await self.run(request_of(profile, prompt, ctx, options))

    # -- compaction --------------------------------------------------------------

    async def _summarize(self, ctx: ToolContext, profile: AgentProfile, ask: SummaryAsk,
                         answering: str | None) -> Summary:
        """The summary ``ask`` wants, asked on the role's own cached prefix when the summariser's model is the
        role's (see :mod:`board.agent.summarizer`), else on its own. ``answering`` is the id of the message
        being answered (the turn's prefix ends before it); None for ``/compact`` (the whole window)."""
        own = self.model_for(profile)
        model = SummaryModel(self.settings.cheap_model or own, self.settings.context.summary_max_tokens)
        if model.model == own:
            history = ask.window.messages_before(answering) if answering else ask.window.messages()
            request = ask_on_prefix(ask, history, profile=profile, ctx=ctx, model=model,
                                    system=self.system_for(profile, ctx, summary=ask.previous))
            if request is not None:
                outcome = await self.run(request)
                if not outcome.hit_tool_cap:
                    return Summary(outcome.text, outcome.model, outcome.degraded, outcome.usage, outcome.cost_usd)
                log.info("the summariser of %s asked for a tool instead of summarising; asking it again without "
                         "the conversation's prefix", ctx.session_key)
        outcome = await self.run(ask_on_its_own(ask, profile=profile, ctx=ctx, model=model))
        return Summary(outcome.text, outcome.model, outcome.degraded, outcome.usage, outcome.cost_usd)

    async def compact(self, key: str, role: str, *, force: bool = True,
                      envelope: Envelope | None = None) -> CompactionResult | None:
        """Compact session ``key`` now (``/compact``). The caller holds the key's lock."""
        profile = self.souls.profile(role)
        transcript = await self.sessions.open(key, role)
        ctx = ToolContext(role=role, session_key=key, envelope=envelope, chain=(role,))

        async def summarize(ask: SummaryAsk) -> Summary:
            return await self._summarize(ctx, profile, ask, None)

        return await self.compactor.compact(
            transcript, role=role, agent_name=profile.name, counter=counter_for(self.model_for(profile)),
            summarize=summarize, force=force,
            keep=None if not force else min(2, self.settings.context.keep_recent_messages),
        )

    def _keep(self) -> int:
        """How many of the newest messages a compaction keeps (half the message cap when the cap is below
        ``keep_recent_messages``)."""
        limit, keep = self.settings.history_messages, self.settings.context.keep_recent_messages
        return keep if keep < limit else max(1, limit // 2)

    def _would_compact(self, transcript: Transcript, role: str, counter: TokenCounter) -> bool:
        """Whether the next turn on ``transcript`` would summarise its history first (as :meth:`_history` decides;
        False with compaction off: dropping blocks calls no model)."""
        limit = self.settings.history_messages
        return limit > 0 and self.settings.context.compaction and \
            self.compactor.needs_compaction(load_window(transcript), counter, role, limit)

    def _note_due(self, key: str, transcript: Transcript, role: str, counter: TokenCounter) -> None:
        """After a turn: remember ``key`` when its next turn would compact (:meth:`compaction_due`)."""
        self._due.pop(key, None)
        if self._would_compact(transcript, role, counter):
            self._due[key] = transcript.session_id
            while len(self._due) > MAX_DUE:  # conversations that never had an after-step (the terminal's)
                del self._due[next(iter(self._due))]

    def compaction_due(self, key: str) -> bool:
        """Whether session ``key``'s last turn left its history due for a summary before the next one (known from
        that turn: no query, no model call)."""
        return key in self._due

    async def compact_ahead(self, key: str, role: str, envelope: Envelope) -> CompactionResult | None:
        """Compact session ``key`` now if its last turn left it due (:meth:`compaction_due`): the next turn then asks
        the model once, not a summary first (:mod:`board.answer.after`). The transcript is the one that turn wrote
        (a session merged or reset since is not opened anew under the key). None when nothing was due, or the
        summariser did not answer (the next turn tries again, as always). The caller holds the key's lock."""
        session_id = self._due.pop(key, None)
        if session_id is None:
            return None
        try:
            transcript = await self.sessions.transcripts.open(session_id)
        except TranscriptError:
            return None
        profile = self.souls.profile(role)
        counter = counter_for(self.model_for(profile))
        if not self._would_compact(transcript, role, counter):
            return None
        ctx = ToolContext(role=role, session_key=key, envelope=envelope, chain=(role,))

        async def summarize(ask: SummaryAsk) -> Summary:
            return await self._summarize(ctx, profile, ask, None)  # the whole window: its answer is given

        return await self.compactor.compact(transcript, role=role, agent_name=profile.name, counter=counter,
                                            summarize=summarize, keep=self._keep())

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

                async def summarize(ask: SummaryAsk) -> Summary:
                    return await self._summarize(ctx, profile, ask, current_id)

                done = await self.compactor.compact(transcript, role=profile.role, agent_name=profile.name,
                                                    counter=counter, summarize=summarize, keep=self._keep())
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

    @traced("turn", lambda self, role, *_, **__: {OPERATION: "invoke_agent", ROLE: role})
    async def turn(self, role: str, key: str, envelope: Envelope, text: str, *,
                   images: tuple[ImagePart, ...] = ()) -> Reply:
        """Answer ``text`` as ``role`` in session ``key``. The caller holds the key's lock.

        The stages, in order (see :mod:`board.agent.turn`): open the transcript, record the user's
        message (not again for a resumed one), compact the history, build the prompt, run the
        exchange, record the answer and sync, observe, reply. ``images`` go with this turn's
        message only (the transcript keeps its text, which names them); when the model that
        answered could not see them, the reply says so before the answer, once per conversation
        while Sabha runs (:data:`UNSEEN_NOTICE`; the model itself was told by a marker)."""
        profile = self.souls.profile(role)
        transcript, remembered = await self._open_and_recall(key, role, envelope)
        asked = record_user(transcript, envelope, text, role=role, key=key)
        timeout = self.settings.turn_timeout_s
        deadline = asyncio.get_running_loop().time() + timeout if timeout else None
        ctx = ToolContext(role=role, session_key=key, envelope=envelope, chain=(role,), deadline=deadline,
                          transcript=transcript, consult_cache={})
        model = self.model_for(profile)
        summary, history = await self._history(transcript, profile, ctx, counter_for(model), str(asked["id"]))
        prompt = BuiltPrompt(
            static=self.prompts.static(profile, self.souls.profiles(), self.souls.roster.name),
            dynamic=self.context_for(ctx, remembered, text=text,
                                     earlier=[m.content for m in history if m.role == "user"]),
            messages=(*history, replace(entry_message(asked) or ChatMessage(role="user", content=text),
                                        images=images)),
            summary=summary_block_text(summary) if summary else None,
        )
        outcome = await self.run(ExchangeRequest(profile=profile, ctx=ctx, prompt=prompt,
                                                 model=ModelChoice(model=model), on_event=transcript.append,
                                                 stream=take_stream()))
        await record_answer(transcript, profile, outcome)
        self._note_due(key, transcript, role, counter_for(model))
        observe(self.turn_observers, envelope, key, profile, outcome)
        if not outcome.degraded:
            tell_listeners(self.turn_listeners, TurnHeard(envelope, role, key, str(asked["id"]), text))
        return Reply.to(envelope, role=role, name=profile.name, emoji=profile.emoji,
                        text=self._with_unseen_notice(envelope, outcome), session_key=key,
                        degraded=outcome.degraded)

    async def _open_and_recall(self, key: str, role: str, envelope: Envelope
                               ) -> tuple[Transcript, tuple[Remembered, ...]]:
        """The session's transcript and what ``role`` remembers about the sender, read in one statement: the live
        session row (:meth:`Sessions.live_join`) is carried in the facts' read, so a turn's reads are one round
        trip to the database's thread, not two (issue 44). The facts and the sessions are in the same database
        (:func:`board.app.build.build_parts`). Without memory the session is read alone; when the read fails it is
        read alone too and nothing is recalled (a memory read must not stop the answer, :class:`FactMemory`)."""
        if self.memory is None:
            return await self.sessions.open(key, role), ()
        try:
            remembered, live = await self.memory.recall_with(sender_id(envelope), role, scope_of(envelope),
                                                             also=self.sessions.live_join(key))
        except Exception:
            log.exception("recalling memory for %s failed", role)
            return await self.sessions.open(key, role), ()
        return await self.sessions.open(key, role, live=self.sessions.live_of(live)), remembered

    def _with_unseen_notice(self, envelope: Envelope, outcome: ExchangeOutcome) -> str:
        """The answer, after :data:`UNSEEN_NOTICE` the first time in the sender's conversation (whichever
        role answers: several answering one message say it once) that the model could not see a picture."""
        place = f"{envelope.channel}:{envelope.chat_id}:{envelope.thread_id}:{envelope.sender}"
        if not outcome.unseen_images or outcome.degraded or place in self._told_unseen:
            return outcome.text
        self._told_unseen.add(place)
        return f"{UNSEEN_NOTICE}\n\n{outcome.text}"
