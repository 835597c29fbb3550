"""Streamed answers: where a model's text goes while it is still being written.

Owns :class:`StreamSink` (what a turn's caller gives to see the answer as it comes: who
answers, text deltas, a tool call being made, a restart when a failed attempt's partial text is void),
the per-turn claim that carries it from the caller to the one chat turn that streams
(:func:`streaming_to` / :func:`take_stream`, a context variable like the spending context),
and :func:`emit`, which a provider calls with each delta (a sink's failure never stops the
answer).

What streams is a preview. The answer itself is still the exchange's final text (after the
guardrails): a caller shows the deltas, then replaces them with the reply it is handed.
Only a provider with ``llm.providers.<p>.stream: true`` produces deltas; the others answer
whole and the caller simply never hears ``on_text``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Protocol

__all__ = ["DeltaHook", "StreamSink", "emit", "streaming_to", "take_stream"]

log = logging.getLogger("sabha.llm")

#: Receives one piece of the answer's text, as the provider reads it.
DeltaHook = Callable[[str], None]


class StreamSink(Protocol):
    """What sees a turn's answer while it is written. Called on the event loop; must not block
    (a sink schedules its own I/O) and should not raise (a raise is logged and ignored)."""

    def on_speaker(self, label: str) -> None:
        """Who is answering (``<emoji> <Name>``), before the text (again before each model call)."""
        ...

    def on_text(self, delta: str) -> None:
        """More of the answer's text."""
        ...

    def on_tool(self, name: str) -> None:
        """The model asked for tool ``name``: the text so far is void; show "looking it up"."""
        ...

    def on_restart(self) -> None:
        """The attempt that wrote the text so far failed (a retry or a fallback follows): it is void."""
        ...


class _Claim:
    """One caller's sink, taken by the first chat turn that asks (several roles answering one
    message: only the first streams)."""

    def __init__(self, sink: StreamSink) -> None:
        self.sink: StreamSink | None = sink

    def take(self) -> StreamSink | None:
        sink, self.sink = self.sink, None
        return sink


_current: ContextVar[_Claim | None] = ContextVar("sabha_stream", default=None)


@contextlib.contextmanager
def streaming_to(sink: StreamSink | None) -> Iterator[None]:
    """The chat turn run inside the block streams its answer to ``sink`` (None: no streaming)."""
    token = _current.set(_Claim(sink) if sink is not None else None)
    try:
        yield
    finally:
        _current.reset(token)


def take_stream() -> StreamSink | None:
    """The sink of the caller, for the one turn that streams (None afterwards and outside a block)."""
    claim = _current.get()
    return claim.take() if claim is not None else None


def emit(hook: DeltaHook | None, delta: str) -> None:
    """Give ``delta`` to ``hook`` (a provider's call); a failing hook is logged, never raised."""
    if hook is None or not delta:
        return
    try:
        hook(delta)
    except Exception:  # a preview must not break the answer
        log.exception("streaming a delta failed")
