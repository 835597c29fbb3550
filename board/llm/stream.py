"""Streamed answers: where a model's text goes while it is still being written.

Owns :class:`StreamSink` (what a turn's caller gives to see the answer as it comes: who
answers, text deltas, a tool call being made, a restart when a failed attempt's partial text is void),
the per-turn claim that carries it from the caller to the one chat turn that streams
(:func:`streaming_to` / :func:`take_stream`, a context variable like the spending context),
and :func:`emit`, which a provider calls with each delta (a sink's failure never stops the
answer).

:class:`CheckedSink` stands between a turn and its caller's sink: only whole words pass (a
word cut by a delta boundary waits for its end, so a secret or a model name is never shown in
pieces), and the text so far passes a check first (the output guardrails' preview: model names
scrubbed; a prompt leak freezes the preview where it was, until the final answer replaces it).

What streams is a preview. The answer itself is still the exchange's final text (after the
guardrails): a caller shows the deltas, then replaces them with the reply it is handed.
Only a provider that streams (``llm.providers.<p>.stream``: on unless set to false; the offline model never
streams) produces deltas; the others answer whole and the caller simply never hears ``on_text``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Protocol

__all__ = ["CheckedSink", "DeltaHook", "PreviewCheck", "PreviewText", "StreamSink", "emit", "streaming_to",
           "take_stream", "whole_words"]

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


#: The text a preview may show of the answer so far (None: show nothing more of this answer).
PreviewCheck = Callable[[str], "str | None"]


def whole_words(text: str) -> str:
    """``text`` up to its last whitespace (the trailing word may not be complete yet)."""
    cut = max(text.rfind(" "), text.rfind("\n"), text.rfind("\t"))
    return text[:cut + 1] if cut >= 0 else ""


class PreviewText:
    """What a preview shows of an answer being written: the text so far, or a status line while a tool
    runs (``looking``) or after a failed attempt (``retrying``). The sink calls of
    :class:`StreamSink` (but :meth:`StreamSink.on_speaker`, which each preview names its own way);
    a subclass redraws in :meth:`_changed`."""

    looking: str | None = "looking it up…"
    retrying: str | None = None

    _text: str = ""
    _status: str | None = None

    def on_text(self, delta: str) -> None:
        self._text += delta
        self._status = None
        self._changed()

    def on_tool(self, name: str) -> None:
        self._text, self._status = "", self.looking
        self._changed()

    def on_restart(self) -> None:
        self._text, self._status = "", self.retrying
        self._changed()

    def _changed(self) -> None:
        """The text or the status changed: show it (the subclass's)."""


class CheckedSink:
    """A :class:`StreamSink` that forwards to ``sink`` only whole words of the text so far, and
    only what ``check`` lets through (see the module docstring). When the checked text does not
    continue what was already shown (a scrub reached back), or ``check`` says None, the preview
    stays as it is until a tool call or a restart begins a new text."""

    def __init__(self, sink: StreamSink, check: PreviewCheck) -> None:
        self.sink, self.check = sink, check
        self._raw = ""
        self._checked = 0  # how much of the raw text was checked (what was shown may be longer or shorter)
        self._shown = ""
        self._frozen = False

    def on_speaker(self, label: str) -> None:
        self.sink.on_speaker(label)

    def on_text(self, delta: str) -> None:
        self._raw += delta
        self._forward(whole_words(self._raw))

    def flush(self) -> None:
        """The model's text is complete: its last word too (checked like the rest)."""
        self._forward(self._raw)

    def _forward(self, words: str) -> None:
        if self._frozen or len(words) <= self._checked or not words.strip():
            return
        self._checked = len(words)
        checked = self.check(words)  # the whole text so far: a run or a name across deltas is seen
        if checked is None or not checked.startswith(self._shown):
            self._frozen = True
            log.info("streaming: the preview stops here (the guardrails would change what was shown)")
            return
        more, self._shown = checked[len(self._shown):], checked
        if more:
            self.sink.on_text(more)

    def _reset(self) -> None:
        self._raw, self._checked, self._shown, self._frozen = "", 0, "", False

    def on_tool(self, name: str) -> None:
        self._reset()
        self.sink.on_tool(name)

    def on_restart(self) -> None:
        self._reset()
        self.sink.on_restart()


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
