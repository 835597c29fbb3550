"""What changes while one exchange runs: owned by that run, never shared, never returned.

Owns :class:`ExchangeState` (the prompt as laid out, the tools offered, the step, usage and
cost so far, the tool events, the answer text, a failure), :class:`Failure`, and the values a
loop stage returns (:class:`Continue` with the next stage, or :data:`DONE`). Each stage's
docstring names the fields it writes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from board.agent.exchange.outcome import ToolEvent
from board.agent.tools import ToolRegistry
from board.llm.base import ChatMessage, LLMError, PromptBlock, Thinking, ToolCall, ToolSpec, Usage
from board.llm.tokens import TokenCounter

if TYPE_CHECKING:
    from board.agent.exchange.deps import ExchangeDeps
    from board.agent.exchange.request import ExchangeRequest

__all__ = ["DONE", "Continue", "Done", "ExchangeState", "Failure", "Step", "ToolRound"]


@dataclass(frozen=True)
class Failure:
    """No model answered: why, and whether the owner must fix something (a key, a model name)."""

    error: str
    cause: BaseException | None
    setup_problem: bool

    @classmethod
    def of(cls, cause: BaseException | None) -> Failure:
        # only what the owner must fix is called a setup problem, not any error that is not retried
        # (e.g. a 400 for a context that is too long)
        return cls(error=str(cause) if cause else "no model answered", cause=cause,
                   setup_problem=isinstance(cause, LLMError) and cause.setup_problem)


@dataclass(frozen=True)
class ToolRound:
    """What the model asked for in one step, handed from ``call_model`` to ``run_tools``."""

    calls: tuple[ToolCall, ...]
    response_text: str
    #: model, usage and cost of the model call that asked (written on the first ``tool_call`` entry).
    info: dict[str, Any]


@dataclass(kw_only=True)
class ExchangeState:
    """See the module docstring; built by ``resolve_model``, the first stage."""

    started: float
    model: str
    chain: tuple[str, ...]
    counter: TokenCounter
    deadline: float | None
    registry: ToolRegistry
    blocks: tuple[PromptBlock, ...] = ()
    messages: list[ChatMessage] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)
    specs: tuple[ToolSpec, ...] = ()
    text_mode: bool = False
    max_rounds: int = 0
    attribution: dict[str, Any] = field(default_factory=dict)
    first_loop_message: int = 0
    step: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float | None = 0.0
    calls: int = 0
    model_used: str = ""
    events: list[ToolEvent] = field(default_factory=list)
    pending: ToolRound | None = None
    text: str = ""
    hit_cap: bool = False
    #: the provider's stop reason of the last model answer (``max_tokens``: cut by the output limit)
    stop_reason: str = ""
    failure: Failure | None = None
    thinking: Thinking = Thinking.OFF
    thinking_text: str = ""  # what the model thought, where its API says (kept only on the owner's word)
    unseen_images: int = 0  # pictures of the turn the answering model could not see (it got a marker instead)


@dataclass(frozen=True)
class Continue:
    """Run ``step`` next."""

    step: Step


@dataclass(frozen=True)
class Done:
    """The loop is over: the state holds the answer (or the failure)."""


DONE = Done()

#: A loop stage: ``call_model`` or ``run_tools``.
Step = Callable[["ExchangeRequest", ExchangeState, "ExchangeDeps"], Awaitable[Continue | Done]]
