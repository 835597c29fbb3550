"""Tools agents may call: the registry, the call context and structured results.

A tool is a :class:`ToolSpec` (name, description, JSON schema) plus an async handler.
:meth:`ToolRegistry.call` never raises: an unknown tool, a tool the role may not use,
arguments that do not match the schema, a timeout or an exception inside the tool all
come back as ``ToolResult(ok=False, error=..., retryable=...)`` so the model can read
what went wrong and carry on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from board.envelope import Envelope
from board.llm.base import ToolSpec
from board.spending.allowance import SpendRefused

if TYPE_CHECKING:
    import jsonschema

__all__ = [
    "ConsultCache",
    "EntryLog",
    "SpendingLimit",
    "Tool",
    "ToolContext",
    "ToolHandler",
    "ToolOrigin",
    "ToolRegistry",
    "ToolResult",
    "validator_for",
]

log = logging.getLogger("sabha.tools")


class SpendingLimit(Protocol):
    """A spending limit kept across several exchanges (a board meeting's)."""

    def over_budget(self, pending_usd: float = 0.0) -> str | None:
        """Why no further model call may start (``pending_usd``: spent by the exchange in progress)."""
        ...

    def spend(self, usd: float) -> None:
        """Count cost made inside an exchange that its own cost does not include (consultations)."""
        ...


class EntryLog(Protocol):
    """Where a turn's events are written (a session transcript)."""

    def append(self, *entries: dict[str, Any]) -> None:
        """Write events."""
        ...


#: (role asked, normalised question) -> the first answer, for one exchange
ConsultCache = dict[tuple[str, str], "ToolResult"]


@dataclass(frozen=True)
class ToolContext:
    """Who is calling a tool and from where.

    ``depth`` and ``chain`` describe consultation (0 = the user's question, chain holds
    the roles asked so far); ``deadline`` is an event-loop time after which the turn
    should stop starting new work. ``budget`` is the caller's spending limit (checked
    before every model call and consultation, told what consultations cost), ``roster``
    the board whose roles may be consulted (None: the default one), ``transcript`` where
    consultations are recorded (the chat turn's transcript; None outside a chat), and
    ``consult_cache`` the answers already given in this exchange (None: no reuse).
    """

    role: str
    session_key: str
    envelope: Envelope | None = None
    depth: int = 0
    chain: tuple[str, ...] = ()
    meeting_id: str | None = None
    deadline: float | None = None
    budget: SpendingLimit | None = None
    roster: str | None = None
    transcript: EntryLog | None = None
    consult_cache: ConsultCache | None = None


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call, as the model will see it."""

    ok: bool
    data: Any = None
    error: str | None = None
    retryable: bool = False

    @classmethod
    def success(cls, data: Any) -> ToolResult:
        """A successful result."""
        return cls(ok=True, data=data)

    @classmethod
    def failure(cls, error: str, *, retryable: bool = False, data: Any = None) -> ToolResult:
        """A failed result with a reason the model can act on."""
        return cls(ok=False, error=error, retryable=retryable, data=data)

    def payload(self) -> dict[str, Any]:
        """The JSON-able form: ``{ok, result}`` or ``{ok, error, retryable}``."""
        if self.ok:
            return {"ok": True, "result": self.data}
        body: dict[str, Any] = {"ok": False, "error": self.error, "retryable": self.retryable}
        if self.data is not None:
            body["result"] = self.data
        return body

    def to_text(self) -> str:
        """The result as the text of a tool message."""
        return json.dumps(self.payload(), ensure_ascii=False, default=str)


_VALIDATORS: dict[str, jsonschema.Draft202012Validator] = {}


def validator_for(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A checked validator for ``schema``, built once per distinct schema (schemas are small and few).
    jsonschema is imported here, on a tool's first call: a turn that calls no tool never loads it."""
    import jsonschema

    key = json.dumps(schema, sort_keys=True, default=str)
    validator = _VALIDATORS.get(key)
    if validator is None:
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = _VALIDATORS[key] = jsonschema.Draft202012Validator(schema)
    return validator


@dataclass(frozen=True)
class ToolOrigin:
    """Where an outside tool comes from: ``server`` (its name in ``sabha.yaml``), ``tool`` (the server's
    own name for it) and ``read_only`` (runs when the model calls it; False: only with the owner's consent)."""

    server: str
    tool: str
    read_only: bool

    @property
    def label(self) -> str:
        """How an answer or the minutes cite this tool's result: ``server.tool``."""
        return f"{self.server}.{self.tool}"


ToolHandler = Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]]


@dataclass(frozen=True)
class Tool:
    """A registered tool: its schema and the coroutine that runs it."""

    spec: ToolSpec
    handler: ToolHandler
    timeout_s: float | None = 60.0
    roles: tuple[str, ...] | None = None  # who gets it by default; None = every role
    offered: Callable[[], bool] | None = None  # None: always; else offered to models only while it is True
    origin: ToolOrigin | None = None  # None: one of Sabha's own; else the MCP server it comes from


class ToolRegistry:
    """All tools Sabha knows; each role sees the subset it is allowed."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def register(self, tool: Tool) -> None:
        """Add (or replace) a tool. Its schema is checked on its first call (tests check every
        built-in one), so registering costs no jsonschema import."""
        self._tools[tool.spec.name] = tool

    def names(self) -> list[str]:
        """Names of every registered tool."""
        return sorted(self._tools)

    def names_for(self, role: str) -> list[str]:
        """Names of the tools ``role`` gets by default (tools limited to other roles left out)."""
        return sorted(n for n, t in self._tools.items() if t.roles is None or role in t.roles)

    def merged(self, extra: Iterable[Tool]) -> ToolRegistry:
        """A new registry holding these tools plus ``extra`` (which win on a name clash)."""
        extra = list(extra)
        if not extra:
            return self
        combined = ToolRegistry()
        combined._tools = dict(self._tools)
        for tool in extra:
            combined.register(tool)
        return combined

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, if registered."""
        return self._tools.get(name)

    def specs(self, allowed: Iterable[str]) -> tuple[ToolSpec, ...]:
        """Schemas of the allowed tools that exist, in the order given."""
        tools = [self._tools[n] for n in allowed if n in self._tools]
        return tuple(_spec_of(t) for t in tools if t.offered is None or t.offered())

    async def call(self, name: str, arguments: Any, ctx: ToolContext, allowed: Iterable[str]) -> ToolResult:
        """Run one tool call; see the module docstring. Never raises (except cancellation)."""
        allowed_set = set(allowed)
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.failure(
                f"unknown tool {name!r}; available tools: {', '.join(sorted(allowed_set & set(self._tools))) or 'none'}"
            )
        if name not in allowed_set:
            return ToolResult.failure(f"the {ctx.role} role is not allowed to use {name!r}; answer without it")
        if not isinstance(arguments, dict):
            return ToolResult.failure(f"arguments for {name!r} must be a JSON object, got {type(arguments).__name__}")
        validator = validator_for(tool.spec.parameters)
        problems = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
        if problems:
            detail = "; ".join(
                f"{'.'.join(str(p) for p in e.path) or 'arguments'}: {e.message}" for e in problems[:5]
            )
            return ToolResult.failure(f"invalid arguments for {name!r}: {detail}")
        try:
            if tool.timeout_s is None:
                return await tool.handler(arguments, ctx)
            return await asyncio.wait_for(tool.handler(arguments, ctx), tool.timeout_s)
        except TimeoutError:
            return ToolResult.failure(f"{name!r} timed out after {tool.timeout_s:g} s", retryable=True)
        except asyncio.CancelledError:
            raise
        except SpendRefused as refused:  # e.g. a consultation past a stranger's daily limit: no model was called
            return ToolResult.failure(f"not done: {refused.text}")
        except Exception as exc:  # a broken tool must not break the turn
            log.exception("tool %s failed for role %s", name, ctx.role)
            return ToolResult.failure(f"{name!r} failed: {exc}", retryable=False)


def _spec_of(tool: Tool) -> ToolSpec:
    """The spec a model is offered: an outside tool's says whether it only reads and how it is cited."""
    origin = tool.origin
    if origin is None or (tool.spec.read_only == origin.read_only and tool.spec.cite == origin.label):
        return tool.spec
    return replace(tool.spec, read_only=origin.read_only, cite=origin.label)
