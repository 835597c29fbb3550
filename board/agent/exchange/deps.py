"""The collaborators an exchange works with, frozen for its run.

Owns :class:`ExchangeDeps` (caller, tools, prompts, memory, ledger, guardrails, allowance,
outside tools, prices, policy, clock), the protocols each collaborator meets, and a no-op implementation of
each optional one, so no stage tests ``if x is not None``. The runner builds the deps from its
current wiring at the start of every exchange (a reload may have replaced its settings).
"""

from __future__ import annotations

import fnmatch
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from board.agent.guardrails import GuardInput
from board.agent.outside import NO_OUTSIDE_TOOLS, OutsideTools
from board.agent.tools import ToolContext, ToolRegistry
from board.conversation.scope import scope_of
from board.llm.base import LLMRequest, PromptBlock, Thinking
from board.llm.pricing import PriceTable
from board.llm.resilience import AttemptHook, CallResult, RequestFit
from board.llm.vision import sees_images
from board.spending.allowance import Reservation, SpendGate, current_allowance, worst_case
from board.spending.budget import sender_id
from board.spending.ledger import LLMCallRecord, ToolCallRecord
from board.storage import Row
from board.storage.sql import RowJoin
from board.workspace.prompt import Remembered
from board.workspace.souls import AgentProfile

__all__ = [
    "NO_ALLOWANCE",
    "NO_GUARDRAILS",
    "NO_LEDGER",
    "NO_MEMORY",
    "AllowanceGate",
    "CallRecorder",
    "ExchangeDeps",
    "ExchangePolicy",
    "FactMemory",
    "FactRecall",
    "GatedAllowance",
    "Memory",
    "ModelCaller",
    "OutputGuard",
    "PromptSource",
]

log = logging.getLogger("sabha.agent")


class ModelCaller(Protocol):
    """Calls a model chain with deadline, retry and fallback (:class:`board.llm.resilience.ResilientCaller`)."""

    async def call(self, request: LLMRequest, chain: Sequence[str], *, deadline: float | None = None,
                   on_attempt: AttemptHook | None = None, fit: RequestFit | None = None) -> CallResult: ...

    def streams(self, model: str) -> bool:
        """Whether ``model``'s provider streams its answers (``llm.providers.<p>.stream``)."""
        ...


class PromptSource(Protocol):
    """A role's system blocks and the per-turn block of a context (the runner is one)."""

    def system_for(self, profile: AgentProfile, ctx: ToolContext) -> tuple[PromptBlock, ...]: ...

    def context_for(self, ctx: ToolContext, memory: Sequence[Remembered] = ()) -> str: ...


class Memory(Protocol):
    """What a role remembers about the user of a context."""

    async def recall(self, ctx: ToolContext) -> tuple[Remembered, ...]: ...


class CallRecorder(Protocol):
    """Where model and tool calls are written (:class:`board.spending.ledger.Ledger`)."""

    async def record_llm_call(self, rec: LLMCallRecord) -> None: ...

    async def record_tool_call(self, rec: ToolCallRecord) -> None: ...


class OutputGuard(Protocol):
    """The checks a free-text answer passes on its way out (:class:`board.agent.guardrails.Guardrails`)."""

    async def apply(self, answer: GuardInput, *, session_key: str | None = None, meeting_id: str | None = None,
                    purpose: str | None = None) -> str: ...

    def preview(self, answer: GuardInput) -> str | None:
        """What a streamed preview of the text so far may show (scrubbed), None: stop the preview."""
        ...


class AllowanceGate(Protocol):
    """Holds a model call's worst case against a stranger's limits before it is made
    (:mod:`board.spending.allowance`)."""

    async def reserve(self, request: LLMRequest, chain: Sequence[str], prices: PriceTable) -> Reservation | None: ...


class FactRecall(Protocol):
    """A store of what roles remember about users (:class:`board.memory.facts.FactStore`)."""

    async def recall(self, user: str, role: str, scope: str) -> tuple[Remembered, ...]: ...

    async def recall_with(self, user: str, role: str, scope: str, also: RowJoin | None = None
                          ) -> tuple[tuple[Remembered, ...], Row | None]:
        """:meth:`recall`, and the row ``also`` joins, read in the same statement (a turn's session)."""
        ...


class _NoMemory:
    async def recall(self, ctx: ToolContext) -> tuple[Remembered, ...]:
        return ()


class _NoLedger:
    async def record_llm_call(self, rec: LLMCallRecord) -> None:
        return None

    async def record_tool_call(self, rec: ToolCallRecord) -> None:
        return None


class _NoGuardrails:
    async def apply(self, answer: GuardInput, *, session_key: str | None = None, meeting_id: str | None = None,
                    purpose: str | None = None) -> str:
        return answer.text

    def preview(self, answer: GuardInput) -> str | None:
        return answer.text


class _NoAllowance:
    async def reserve(self, request: LLMRequest, chain: Sequence[str], prices: PriceTable) -> Reservation | None:
        return None


NO_MEMORY: Memory = _NoMemory()
NO_LEDGER: CallRecorder = _NoLedger()
NO_GUARDRAILS: OutputGuard = _NoGuardrails()
NO_ALLOWANCE: AllowanceGate = _NoAllowance()


@dataclass(frozen=True)
class FactMemory:
    """:class:`Memory` over a fact store: nothing without a user; only the facts learned where the turn is
    (a group turn never sees a direct chat's, :func:`board.conversation.scope.scope_of`); a failed read recalls
    nothing."""

    store: FactRecall

    async def recall(self, ctx: ToolContext) -> tuple[Remembered, ...]:
        if ctx.envelope is None:
            return ()
        try:
            return await self.store.recall(sender_id(ctx.envelope), ctx.role, scope_of(ctx.envelope))
        except Exception:  # a memory read must not stop the answer
            log.exception("recalling memory for %s failed", ctx.role)
            return ()


@dataclass(frozen=True)
class GatedAllowance:
    """:class:`AllowanceGate` through a :class:`SpendGate`: only a stranger's message carries limits."""

    gate: SpendGate

    async def reserve(self, request: LLMRequest, chain: Sequence[str], prices: PriceTable) -> Reservation | None:
        if current_allowance.get() is None:
            return None
        worst, unpriced = worst_case(request, list(chain), prices)
        return await self.gate.reserve(worst, model=unpriced)


@dataclass(frozen=True, kw_only=True)
class ExchangePolicy:
    """The config's defaults for an exchange (``llm.*``, ``tools.default``)."""

    default_model: str = "offline"
    fallbacks: tuple[str, ...] = ()
    max_tokens: int = 1024
    max_tool_iterations: int = 4
    default_tools: tuple[str, ...] | None = None
    text_tool_models: tuple[str, ...] = ()
    turn_timeout_s: float | None = 300.0
    thinking: Thinking = Thinking.OFF  # llm.thinking: a role's own (soul or board.agents) wins
    keep_thinking: bool = False  # llm.keep_thinking: the model's thinking goes to the transcript
    vision_models: tuple[str, ...] = ()  # media.vision_models: models that see pictures besides the known ones

    def model_for(self, profile: AgentProfile) -> str:
        """The model a role uses: config/soul override, else the default."""
        return profile.model or self.default_model

    def uses_text_protocol(self, model: str) -> bool:
        """True when ``model`` is configured for the ``[TOOL: name ARG: {...}]`` text protocol."""
        return any(fnmatch.fnmatchcase(model, pattern) for pattern in self.text_tool_models)

    def sees_images(self, model: str) -> bool:
        """True when ``model`` is sent pictures (:func:`board.llm.vision.sees_images`)."""
        return sees_images(model, self.vision_models)

    def allowed_tools(self, profile: AgentProfile, registry: ToolRegistry) -> tuple[str, ...]:
        """Tools ``profile`` may call: its own list, else ``tools.default``, else every tool of its role.
        ``mcp:`` entries (outside tools, :mod:`board.tools.mcp`) are not the role's own: a list of only those
        keeps the defaults."""
        own = _own_tools(profile.tools)
        if own is not None:
            return own
        if self.default_tools is not None:
            return tuple(self.default_tools)
        return tuple(registry.names_for(profile.role))


def _own_tools(entries: Sequence[str] | None) -> tuple[str, ...] | None:
    """``entries`` without the ``mcp:`` ones; None (the defaults) when nothing else is left of a list that had some."""
    if entries is None:
        return None
    own = tuple(e for e in entries if not e.startswith("mcp:"))
    return None if not own and entries else own


@dataclass(frozen=True, kw_only=True)
class ExchangeDeps:
    """Everything an exchange calls out to; see the module docstring."""

    caller: ModelCaller
    tools: ToolRegistry
    prompts: PromptSource
    policy: ExchangePolicy
    prices: PriceTable
    memory: Memory = NO_MEMORY
    ledger: CallRecorder = NO_LEDGER
    guardrails: OutputGuard = NO_GUARDRAILS
    allowance: AllowanceGate = NO_ALLOWANCE
    #: The outside (MCP) tools of the context's role, added to what the exchange may call.
    outside: OutsideTools = NO_OUTSIDE_TOOLS
    #: Seconds for latency (monotonic).
    clock: Callable[[], float] = time.perf_counter
