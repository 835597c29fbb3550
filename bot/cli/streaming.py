"""Answers that stream in the terminal: the :class:`board.llm.stream.StreamSink` of ``sabha chat``.

Piped (:class:`PipedStream`): the answer's line ``<emoji> <Name>: <text>`` is written to stdout
word by word as the model writes it, and ended with a newline when the answer is done. When the
final answer is not what streamed (a guardrail changed it, a failed attempt was retried, the
model answered degraded), the streamed line is ended and the final answer follows as a line of
its own: the last line of an answer is always the answer. A tool call says "looking it up" on
stderr, not in the answer.

Typed at (:class:`ScreenStream`): the text grows in the waiting area under the prompt (a
prompt_toolkit window), which is erased when the answer
is printed in full; "looking it up" shows there while a tool runs.

Only whole words are shown, each masked (:func:`board.masking.mask`): a secret is never printed
by halves. Only a provider with ``llm.providers.<p>.stream: true`` streams.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from board.llm.stream import PreviewText, whole_words
from board.masking import mask

__all__ = ["LOOKING", "PipedStream", "ScreenStream"]

LOOKING = "looking it up…"


class PipedStream:
    """Writes a streamed answer to a pipe; see the module docstring."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.label = ""
        self._text = ""
        self._written = ""  # the (masked) text written after the label
        self._open = False  # a streamed line is being written

    @property
    def started(self) -> bool:
        """Some of the answer has been written."""
        return self._open

    def on_speaker(self, label: str) -> None:
        self.label = label

    def on_text(self, delta: str) -> None:
        self._text += delta
        ready = mask(whole_words(self._text))
        if len(ready) <= len(self._written) or not ready.startswith(self._written):
            return
        if not self._open:
            self.out.write(mask(f"{self.label}: ") if self.label else "")
            self._open = True
        self.out.write(ready[len(self._written):])
        self.out.flush()
        self._written = ready

    def on_tool(self, name: str) -> None:
        self._void()
        self.err.write(f"sabha: {LOOKING}\n")
        self.err.flush()

    def on_restart(self) -> None:
        self._void()

    def _void(self) -> None:
        """What streamed so far is not the answer: end its line; the answer starts anew."""
        if self._open:
            self.out.write("\n")
            self.out.flush()
        self._text, self._written, self._open = "", "", False

    def finish(self, rendered: str | None) -> None:
        """The answer is done: ``rendered`` (its ``<emoji> <Name>: <text>`` line; None: no answer)
        completes the streamed line, or follows it when it differs."""
        if not self._open:
            if rendered is not None:
                self._line(rendered)
            return
        streamed = (mask(f"{self.label}: ") if self.label else "") + self._written
        if rendered is not None and mask(rendered).startswith(streamed):
            self._line(mask(rendered)[len(streamed):])
            return
        self.out.write("\n")
        if rendered is not None:
            self._line(rendered)

    def _line(self, text: str) -> None:
        self.out.write(mask(text) + "\n")
        self.out.flush()


class ScreenStream(PreviewText):
    """Keeps the streamed text for the waiting area of the typed-at chat; see the module docstring."""

    looking = LOOKING

    def __init__(self, redraw: Callable[[], None] | None = None) -> None:
        self.redraw = redraw
        self.label = ""

    @property
    def started(self) -> bool:
        """Some of the answer (or "looking it up") is showing."""
        return bool(self._text.strip() or self._status)

    def view(self, waiting: str) -> str:
        """What the waiting area shows: the answer so far, else "looking it up", else ``waiting``."""
        shown = mask(whole_words(self._text))
        if shown.strip():
            return f"{self.label}: {shown}…" if self.label else f"{shown}…"
        return f"… {self._status}" if self._status else waiting

    def on_speaker(self, label: str) -> None:
        self.label = label

    def _changed(self) -> None:
        if self.redraw is not None:
            self.redraw()  # prompt_toolkit coalesces redraws
