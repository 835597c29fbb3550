"""The provider protocol: messages and tool schemas in, text, tool calls and usage out.

Every model Sabha talks to (the offline model, Anthropic, OpenAI-compatible servers)
implements :class:`LLMProvider`. Records crossing this boundary are frozen dataclasses
so a provider can never mutate the agent's state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from board.llm.stream import DeltaHook

__all__ = [
    "THINKING_BUDGETS",
    "ChatMessage",
    "ErrorKind",
    "ImagePart",
    "LLMError",
    "LLMProvider",
    "LLMRequest",
    "LLMResponse",
    "MessageRole",
    "Persona",
    "PromptBlock",
    "Thinking",
    "ToolCall",
    "ToolChoice",
    "ToolSpec",
    "Usage",
]

MessageRole = Literal["user", "assistant", "tool"]
ToolChoice = Literal["auto", "none"]


@dataclass(frozen=True)
class PromptBlock:
    """One block of the system prompt.

    ``cacheable`` marks a byte-stable block (the static block: base directives, AGENTS.md,
    USER.md, soul, roster; the compaction summary, stable between compactions); providers
    with explicit prompt caching put a breakpoint on it.
    """

    name: str
    text: str
    cacheable: bool = False


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call, described by a JSON schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]
    #: only reads (an outside tool the server marks read-only, or none of the world's state changes): a model
    #: may call it unasked (the offline model calls only these)
    read_only: bool = False
    #: how an answer cites its result (``git.git_log`` for ``[git.git_log]``); None: not cited (Sabha's own)
    cite: str | None = None


@dataclass(frozen=True)
class ToolCall:
    """A tool invocation requested by the model.

    ``parse_error`` is set when the model sent arguments that are not a JSON object
    (``arguments`` is then empty and ``raw_arguments`` holds what was sent); the tool
    loop answers such a call with a structured error instead of running the tool.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str | None = None
    parse_error: str | None = None


@dataclass(frozen=True)
class ImagePart:
    """A picture sent with a user's message, as bytes a provider encodes its own way (Anthropic
    image blocks, OpenAI ``image_url`` data URLs, Gemini inline data)."""

    mime: str
    data: bytes = field(repr=False)
    name: str | None = None


@dataclass(frozen=True)
class ChatMessage:
    """One message of the conversation sent to the model.

    ``cache_point`` asks for a prompt-cache breakpoint at the end of ``content`` (providers
    with explicit caching, Anthropic, mark it; the others ignore it). ``context`` is per-turn
    text Sabha sends with the message (time, channel, sender...): it is never part of a
    cached prefix and never stored in the transcript; providers send it after the content,
    Anthropic after the request's last breakpoint. ``images`` are the pictures of this turn's
    user message, for a model that sees.
    """

    role: MessageRole
    content: str
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    cache_point: bool = False
    context: str = ""
    images: tuple[ImagePart, ...] = ()  # a user message's pictures (this turn's only; history keeps the text)


@dataclass(frozen=True)
class Persona:
    """Who is speaking: the role slug, display name, emoji and soul text.

    Real models read the persona from the system prompt; the offline model and the
    ledger use these fields directly.
    """

    role: str
    name: str
    emoji: str
    soul: str = ""


class Thinking(StrEnum):
    """How much a model thinks before it answers (``thinking:`` of a role or ``llm.thinking``)."""

    OFF = "off"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @classmethod
    def of(cls, value: object) -> Thinking:
        """``value`` as written in YAML, where a bare ``off`` reads as false (and ``on`` as true: medium);
        ValueError for anything else."""
        if isinstance(value, bool):
            return cls.MEDIUM if value else cls.OFF
        if isinstance(value, str) and value.strip().lower() in cls._value2member_map_:
            return cls(value.strip().lower())
        raise ValueError(f"thinking must be off, low, medium or high (got {value!r})")


#: Anthropic's extended thinking budget (tokens) per level; OpenAI takes the level as ``reasoning_effort``.
THINKING_BUDGETS: dict[Thinking, int] = {Thinking.LOW: 1024, Thinking.MEDIUM: 4096, Thinking.HIGH: 16384}


@dataclass(frozen=True)
class LLMRequest:
    """Everything a provider needs for one completion."""

    model: str
    system: tuple[PromptBlock, ...]
    messages: tuple[ChatMessage, ...]
    persona: Persona
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 1024
    metadata: dict[str, Any] = field(default_factory=dict)
    tool_choice: ToolChoice = "auto"
    temperature: float | None = None  # None: the provider's default
    thinking: Thinking | None = None  # None or off: the model answers without thinking first
    #: A streaming provider gives each piece of the answer's text here (:mod:`board.llm.stream`).
    on_delta: DeltaHook | None = field(default=None, compare=False, repr=False)

    @property
    def system_text(self) -> str:
        """The whole system prompt as one string, blocks separated by blank lines."""
        return "\n\n".join(block.text for block in self.system if block.text)

    @property
    def context_text(self) -> str:
        """The per-turn context the messages carry (see :attr:`ChatMessage.context`)."""
        return "\n\n".join(m.context for m in self.messages if m.context)


@dataclass(frozen=True)
class Usage:
    """Token counts reported by a provider (zero where the provider reports none).

    ``input_tokens`` is the *uncached* part of the prompt; ``cache_read_tokens`` and
    ``cache_write_tokens`` are the parts read from / written to the prompt cache, so
    the whole prompt is their sum (:attr:`prompt_tokens`) for every provider.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """Every input token, cached or not."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def as_dict(self) -> dict[str, int]:
        """The JSON form written to transcripts."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


@dataclass(frozen=True)
class LLMResponse:
    """A completion: text and/or tool calls, plus usage."""

    text: str
    model: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    stop_reason: str = "end_turn"
    ttft_ms: float | None = None
    thinking: str = ""  # the model's thinking before the answer, where the API returns it; never shown


ErrorKind = Literal[
    "timeout", "connection", "rate_limit", "server", "bad_response", "auth", "bad_request", "config", "other"
]


class LLMError(Exception):
    """A provider failed. ``retryable`` says whether trying again could help.

    ``kind`` classifies the failure for logs and the ledger; ``retry_after`` is the
    server's ``retry-after`` hint in seconds, when it sent one.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status: int | None = None,
        kind: ErrorKind = "other",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.status = status
        self.kind = kind
        self.retry_after = retry_after

    @property
    def setup_problem(self) -> bool:
        """True when only the owner can fix it: a missing or rejected key (401/403), an unknown
        model (404) or a model string naming no configured provider."""
        return self.kind in ("auth", "config") or self.status == 404


@runtime_checkable
class LLMProvider(Protocol):
    """A model backend. ``name`` is the provider prefix of model strings (``offline``)."""

    @property
    def name(self) -> str:
        """The provider prefix of model strings."""
        ...

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Run one completion. Raise :class:`LLMError` on failure."""
        ...
