"""What an exchange is asked: who answers, what, where, and within which limits.

Owns the frozen values a caller builds once (a chat turn, a consultation, a meeting seat, a
compaction summary) and hands to :func:`board.agent.exchange.run_exchange`. Nothing here does
I/O or changes while the exchange runs. A new capability (an image part, a streamed reply, a
thinking budget) is a field here and a stage that reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from board.agent.tools import Tool, ToolContext
from board.llm.base import ChatMessage, PromptBlock, Thinking
from board.llm.purpose import CallPurpose
from board.llm.stream import StreamSink
from board.workspace.prompt import BuiltPrompt
from board.workspace.souls import AgentProfile

__all__ = ["EventHook", "ExchangeRequest", "ModelChoice", "PromptInput", "ToolPolicy"]

#: Receives ``tool_call`` / ``tool_result`` transcript entries as they happen.
EventHook = Callable[[dict[str, Any]], None]

#: A built prompt (system + messages), the messages of a conversation, or one question.
PromptInput = BuiltPrompt | tuple[ChatMessage, ...] | str

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _empty() -> Mapping[str, Any]:
    return _EMPTY


@dataclass(frozen=True, kw_only=True)
class ToolPolicy:
    """Which tools the exchange may call, and how many rounds of them."""

    #: None: the role's own permitted tools (soul, ``board.agents.<role>.tools``, ``tools.default``).
    allowed: tuple[str, ...] | None = None
    #: Added to the registry and permitted for this exchange only (the meeting's scoreboard tools).
    extra: tuple[Tool, ...] = ()
    #: None: ``llm.max_tool_iterations``; 0: the model is offered no tools at all (unless ``offer_only``).
    max_rounds: int | None = None
    #: Offer the tools as the role's turns do (the same schemas, ``tool_choice`` auto) but run none: a call
    #: ends the exchange as at the cap. For a request that must repeat the cached prefix of the role's turns
    #: byte for byte (the summariser's, :meth:`board.agent.runner.AgentRunner.compact`): a provider keys
    #: its cache on the tools, and Anthropic's on ``tool_choice`` too.
    offer_only: bool = False


@dataclass(frozen=True, kw_only=True)
class ModelChoice:
    """Which model answers and how; None everywhere means the role's and the config's own."""

    model: str | None = None
    fallbacks: tuple[str, ...] | None = None
    max_tokens: int | None = None
    #: Replaces the role's own (soul front matter or ``board.agents.<role>``).
    temperature: float | None = None
    #: Replaces the role's own thinking level and ``llm.thinking``.
    thinking: Thinking | None = None


@dataclass(frozen=True, kw_only=True)
class ExchangeRequest:
    """One thing asked of one role; see the package docstring for how it is answered.

    ``system``: when given, replaces the role's system prompt; a block named ``dynamic`` in it
    (per-turn content) is sent after the conversation instead, so it never sits inside a cached
    prefix. ``purpose`` names the exchange in the ledger (a :class:`CallPurpose`).
    ``response_schema`` asks for one JSON object of that shape (its answer skips the free-text
    guardrails: it is validated instead). ``metadata`` travels with every model request.
    ``stream`` sees the answer while it is written (:mod:`board.llm.stream`; the final text,
    after the guardrails, is still the outcome's).
    """

    profile: AgentProfile
    ctx: ToolContext
    prompt: PromptInput
    system: tuple[PromptBlock, ...] | None = None
    tools: ToolPolicy = field(default_factory=ToolPolicy)
    model: ModelChoice = field(default_factory=ModelChoice)
    purpose: CallPurpose = CallPurpose.TURN
    response_schema: Mapping[str, Any] | None = None
    ledger_tags: Mapping[str, Any] = field(default_factory=_empty)
    metadata: Mapping[str, Any] = field(default_factory=_empty)
    on_event: EventHook | None = None
    stream: StreamSink | None = None
