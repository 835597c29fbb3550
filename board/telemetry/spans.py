"""The tracing facade: :func:`span` (a context manager), :func:`traced` (its decorator form for coroutine
functions) and :func:`trace_id` (the current trace's id, for a log line or a ledger row).

While tracing is off (the default) :func:`span` hands back one shared :class:`QuietSpan` whose every method does
nothing, and :func:`traced` awaits the function as it is: a hot path pays one global read, and no module of
OpenTelemetry is imported. :func:`install` (called by :mod:`board.telemetry.exporting` when tracing starts) hands
in the tracer; from then on each :func:`span` is a real span, the child of the current one (asyncio tasks inherit
it), or with ``root=True`` the first of a new trace, linked to the span that started it. Work that waits in
storage (a message in the inbox) carries its span's context as W3C ``traceparent`` text (:func:`traceparent`); the
span that takes it up later opens with ``parent=`` that text and so joins the trace it arrived in.

What goes into attributes is sizes, names, counts, models, money: never a prompt, an answer, a tool's
arguments or a secret (the callers keep to that; :func:`span` drops ``None`` values).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Mapping
from types import TracebackType
from typing import Any, ParamSpec, Protocol, TypeVar, overload

__all__ = ["AttributeValue", "LiveSpan", "QuietSpan", "SpanHandle", "install", "is_on", "span", "trace_id",
           "traced", "traceparent", "uninstall"]

AttributeValue = str | bool | int | float
_P = ParamSpec("_P")
_T = TypeVar("_T")


class SpanHandle(Protocol):
    """What a caller may do with the span it opened: add attributes once it knows them."""

    def set(self, key: str, value: AttributeValue | None) -> None: ...

    def update(self, attributes: Mapping[str, AttributeValue | None]) -> None: ...


class QuietSpan:
    """The span while tracing is off: a context manager and handle that does nothing (one shared instance)."""

    __slots__ = ()

    def __enter__(self) -> QuietSpan:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None

    def set(self, key: str, value: AttributeValue | None) -> None:
        """Nothing: tracing is off."""

    def update(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        """Nothing: tracing is off."""


_QUIET = QuietSpan()
#: The OpenTelemetry tracer while tracing is on (typed loosely: its module is imported only then).
_tracer: Any = None


def _clean(attributes: Mapping[str, AttributeValue | None] | None) -> dict[str, AttributeValue]:
    return {k: v for k, v in (attributes or {}).items() if v is not None}


class LiveSpan:
    """One real span, current while its ``with`` block runs; an exception leaving it marks it failed."""

    __slots__ = ("_attributes", "_manager", "_name", "_otel", "_parent", "_root")

    def __init__(self, name: str, attributes: Mapping[str, AttributeValue | None] | None, root: bool,
                 parent: str | None = None) -> None:
        self._name, self._attributes, self._root, self._parent = name, _clean(attributes), root, parent
        self._manager: Any = None
        self._otel: Any = None

    def __enter__(self) -> LiveSpan:
        from opentelemetry import context, trace  # loaded already: tracing is on

        options: dict[str, Any] = {"attributes": self._attributes}
        if self._root:  # a trace of its own, linked to the one it was started from (a message that opened a meeting)
            # Taken up from storage: the child of the span that stored it, and linked to it (the messaging conventions:
            # a consumer's span SHOULD link to the producer's context and, for a single message, MAY take it as parent).
            stored = _stored_context(self._parent)
            current = trace.get_current_span(stored).get_span_context() if stored is not None else \
                trace.get_current_span().get_span_context()
            options["context"] = stored if stored is not None else context.Context()
            if current.is_valid:
                options["links"] = [trace.Link(current)]
        self._manager = _tracer.start_as_current_span(self._name, **options)
        self._otel = self._manager.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._manager.__exit__(kind, exc, tb)

    def set(self, key: str, value: AttributeValue | None) -> None:
        """Set one attribute (``None``: left out)."""
        if value is not None:
            self._otel.set_attribute(key, value)

    def update(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        """Set several attributes (``None`` values left out)."""
        self._otel.set_attributes(_clean(attributes))


def _stored_context(parent: str | None) -> Any:
    """The OpenTelemetry context of a stored ``traceparent`` (None: none stored, or not valid W3C text)."""
    if not parent:
        return None
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    stored = TraceContextTextMapPropagator().extract({"traceparent": parent})
    return stored if trace.get_current_span(stored).get_span_context().is_valid else None


def span(name: str, attributes: Mapping[str, AttributeValue | None] | None = None, *,
         root: bool = False, parent: str | None = None) -> QuietSpan | LiveSpan:
    """A span named ``name`` around a ``with`` block (``with span("x", {...}) as s: ... s.set(k, v)``); nothing
    while tracing is off. ``root``: the first span of a new trace, linked to the current one; or, given a valid
    ``parent`` (stored ``traceparent`` text), the child of that span."""
    if _tracer is None:
        return _QUIET
    return LiveSpan(name, attributes, root, parent)


def traceparent() -> str | None:
    """The current span's context as W3C ``traceparent`` text (``00-<trace id>-<span id>-<flags>``), to store with
    work taken up later (:func:`traced`'s ``parent``); None while tracing is off or no span is current."""
    if _tracer is None:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)  # nothing when no valid span is current
    return carrier.get("traceparent")


class _Decorator(Protocol):
    """A decorator that keeps the coroutine function's signature."""

    def __call__(self, function: Callable[_P, Coroutine[Any, Any, _T]], /) -> Callable[_P, Coroutine[Any, Any, _T]]:
        ...


@overload
def traced(name: str, attributes: None = None, *, root: bool = False,
           parent: Callable[..., str | None] | None = None) -> _Decorator: ...


@overload
def traced(name: str, attributes: Callable[_P, Mapping[str, AttributeValue | None]], *, root: bool = False,
           parent: Callable[_P, str | None] | None = None
           ) -> Callable[[Callable[_P, Coroutine[Any, Any, _T]]], Callable[_P, Coroutine[Any, Any, _T]]]: ...


def traced(name: str, attributes: Callable[..., Mapping[str, AttributeValue | None]] | None = None, *,
           root: bool = False, parent: Callable[..., str | None] | None = None) -> Any:
    """A coroutine function run inside :func:`span` ``name``; ``attributes`` gets the call's arguments and
    names the span's attributes (called only while tracing is on). With ``root``, ``parent`` (also given the
    call's arguments) may name a stored ``traceparent``: the span is then its child, in the trace the work
    arrived in (else, or when it names none, the first span of a new trace)."""

    def decorate(function: Callable[_P, Coroutine[Any, Any, _T]]) -> Callable[_P, Coroutine[Any, Any, _T]]:
        @functools.wraps(function)
        async def run(*args: _P.args, **kwargs: _P.kwargs) -> _T:
            if _tracer is None:
                return await function(*args, **kwargs)
            with LiveSpan(name, attributes(*args, **kwargs) if attributes is not None else None, root,
                          parent(*args, **kwargs) if parent is not None else None):
                return await function(*args, **kwargs)

        return run

    return decorate


def trace_id() -> str | None:
    """The current trace's id (32 hex digits), or None: tracing is off or no span is current."""
    if _tracer is None:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None


def is_on() -> bool:
    """Whether spans are recorded now."""
    return _tracer is not None


def install(tracer: object) -> None:
    """From now on :func:`span` records with ``tracer`` (an OpenTelemetry ``Tracer``)."""
    global _tracer
    _tracer = tracer


def uninstall() -> None:
    """From now on :func:`span` does nothing again."""
    global _tracer
    _tracer = None
