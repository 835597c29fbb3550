"""A scripted fake model implementing :class:`board.llm.base.LLMProvider`, for any test suite.

Usage::

    model = ScriptedModel()
    model.script(call("lookup", {"q": "gst"}), say("It is 18%."))        # any role, in order
    model.script(say("From finance: no."), role="finance")              # only finance's calls
    providers = model.registry()          # a ProviderRegistry where "scripted:<anything>" is this model
    settings = AgentSettings(default_model="scripted:main", ...)
    ...
    model.requests[0].request.tools, model.requests_for("finance"), model.requests[0].at

Each call takes the next step of its role's queue, else of the shared queue, else the
``default`` (by default: ``"<role>: <last user message>"``). A step is a :class:`Step`
(text and/or tool calls, usage, an error to raise, a latency to sleep first) or a
callable ``(LLMRequest) -> Step``. Every request is recorded with its wall-clock and
monotonic time, role and purpose, so suites can assert what each agent was asked, in
what order and how concurrently. ``latency`` (per model or per step) makes calls slow.

User memory's extractions (``purpose == "extraction"``, run in the background after a turn) are
kept apart so they never take a scripted step nor show in ``requests``: they are recorded in
``memory_requests`` and answered by ``memory`` (a :class:`StepLike`; by default no facts).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from board.llm.base import LLMError, LLMRequest, LLMResponse, ToolCall, Usage
from board.llm.registry import ProviderRegistry

__all__ = ["Received", "ScriptedModel", "Step", "call", "calls", "fail", "say"]


@dataclass(frozen=True)
class Step:
    """One scripted answer (or failure)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    error: LLMError | None = None
    latency: float | None = None
    stop_reason: str | None = None


StepLike = Step | str | Callable[[LLMRequest], Step | str]

_counter = 0


def _next_id() -> str:
    global _counter
    _counter += 1
    return f"call_{_counter}"


def say(text: str, *, usage: Usage | None = None, latency: float | None = None) -> Step:
    """A plain text answer."""
    return Step(text=text, usage=usage, latency=latency)


def call(name: str, args: Mapping[str, Any] | str | None = None, *, id: str | None = None, text: str = "",
         latency: float | None = None) -> Step:
    """One tool call; ``args`` as a string is sent raw (and may be invalid JSON on purpose)."""
    return calls((name, args if args is not None else {}), text=text, latency=latency, ids=(id,) if id else ())


def calls(*specs: tuple[str, Mapping[str, Any] | str], text: str = "", latency: float | None = None,
          ids: tuple[str, ...] = ()) -> Step:
    """Parallel tool calls: ``calls(("a", {...}), ("b", {...}))``."""
    out = []
    for i, (name, args) in enumerate(specs):
        cid = ids[i] if i < len(ids) else _next_id()
        if isinstance(args, str):
            try:
                value = json.loads(args)
            except json.JSONDecodeError as exc:
                problem = f"arguments are not valid JSON ({exc.msg})"
                out.append(ToolCall(cid, name, {}, raw_arguments=args, parse_error=problem))
                continue
            if not isinstance(value, dict):
                out.append(ToolCall(cid, name, {}, raw_arguments=args, parse_error="arguments must be a JSON object"))
                continue
            out.append(ToolCall(cid, name, value, raw_arguments=args))
        else:
            out.append(ToolCall(cid, name, dict(args), raw_arguments=json.dumps(dict(args))))
    return Step(text=text, tool_calls=tuple(out), latency=latency, stop_reason="tool_use")


def fail(kind: str = "server", *, retryable: bool | None = None, status: int | None = 500,
         message: str = "scripted failure", retry_after: float | None = None) -> Step:
    """Raise an :class:`LLMError` for this call."""
    if retryable is None:
        retryable = kind in ("server", "timeout", "connection", "rate_limit")
    return Step(error=LLMError(message, retryable=retryable, status=status, kind=kind,  # type: ignore[arg-type]
                               retry_after=retry_after))


@dataclass(frozen=True)
class Received:
    """One request the model got."""

    request: LLMRequest
    role: str
    purpose: str
    at: float = field(default_factory=time.time)
    monotonic: float = field(default_factory=time.monotonic)

    @property
    def last_user_text(self) -> str:
        """The text of the last user message."""
        return next((m.content for m in reversed(self.request.messages) if m.role == "user"), "")


def _default(request: LLMRequest) -> Step:
    received = next((m.content for m in reversed(request.messages) if m.role == "user"), "")
    return Step(text=f"{request.persona.role}: {received}")


class ScriptedModel:
    """See the module docstring."""

    def __init__(self, name: str = "scripted", *, default: StepLike = _default, latency: float = 0.0) -> None:
        self.name = name
        self.default = default
        self.latency = latency
        self.requests: list[Received] = []
        self.memory_requests: list[Received] = []
        self.memory: StepLike = '{"facts": []}'
        self._shared: deque[StepLike] = deque()
        self._by_role: dict[str, deque[StepLike]] = defaultdict(deque)

    def script(self, *steps: StepLike, role: str | None = None) -> ScriptedModel:
        """Queue steps for ``role`` (or for any role when None)."""
        (self._by_role[role] if role else self._shared).extend(steps)
        return self

    @property
    def pending(self) -> int:
        """Scripted steps not used yet."""
        return len(self._shared) + sum(len(q) for q in self._by_role.values())

    def requests_for(self, role: str, *, purpose: str | None = None) -> list[Received]:
        """Requests made as ``role`` (optionally only those of one purpose, e.g. ``turn``)."""
        return [r for r in self.requests if r.role == role and (purpose is None or r.purpose == purpose)]

    def registry(self, registry: ProviderRegistry | None = None) -> ProviderRegistry:
        """A provider registry (new, or the given one) where ``<name>:<anything>`` is this model."""
        registry = registry or ProviderRegistry()
        registry.register(self.name, lambda: self)
        return registry

    def _next(self, request: LLMRequest) -> Step:
        queue = self._by_role.get(request.persona.role)
        step: StepLike = queue.popleft() if queue else self._shared.popleft() if self._shared else self.default
        if callable(step) and not isinstance(step, Step):
            step = step(request)
        return Step(text=step) if isinstance(step, str) else step

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Record the request, wait the step's latency, then answer or raise."""
        received = Received(request, request.persona.role, str(request.metadata.get("purpose", "turn")))
        if received.purpose == "extraction":
            self.memory_requests.append(received)
            memory = self.memory(request) if callable(self.memory) and not isinstance(self.memory, Step) \
                else self.memory
            step = Step(text=memory) if isinstance(memory, str) else memory
        else:
            self.requests.append(received)
            step = self._next(request)
        delay = step.latency if step.latency is not None else self.latency
        if delay:
            await asyncio.sleep(delay)
        if step.error is not None:
            raise step.error
        usage = step.usage or Usage(
            input_tokens=max(1, len(request.system_text) // 4) + sum(len(m.content) // 4 + 1 for m in request.messages),
            output_tokens=max(1, len(step.text) // 4),
        )
        return LLMResponse(
            text=step.text, model=request.model, tool_calls=step.tool_calls, usage=usage,
            stop_reason=step.stop_reason or ("tool_use" if step.tool_calls else "end_turn"),
        )
