"""Whether a meeting is waiting on its models now: :class:`Pace`, the moment its displays may spend the CPU.

A meeting's critical path is its model calls one phase after another; what runs between them (the round's
statements stored, the next requests built) is on that path, and so is any display's work that lands there: a
forum meeting's posts (an HTTP request through the Telegram client each, a few ms of CPU) used to land exactly
there, since a statement is shown once stored, at the end of its round. A display asks :meth:`Pace.quiet` before
each post and posts while the meeting waits on its models instead.

The gate closes when a phase begins (:meth:`Pace.phase`: the framing, a round, the synthesis) and when the last
call out comes back (the meeting works on the answers: a round's end), and opens once every call of the phase has
been asked (:meth:`Pace.asking`; any further ask opens it too: a stance asked again, the peer review), while the
meeting is paused (:meth:`Pace.idle`) and for good when it ends (:meth:`Pace.end`). A slow member keeps it open:
the meeting waits on that call anyway. A display never waits longer than it says (``at_most``).
"""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["Pace"]


class Pace:
    """One meeting's gate for its displays: open while it waits on its models (or has ended)."""

    def __init__(self) -> None:
        self._open = asyncio.Event()
        self._open.set()  # nothing asked yet: nothing to keep off the path
        self._expected = 0
        self._asked = 0
        self._in_flight = 0  # calls asked and not answered yet
        self._ended = False

    def phase(self, calls: int) -> None:
        """A phase that asks ``calls`` models side by side begins: displays wait until all are asked."""
        if self._ended:
            return
        self._expected, self._asked = calls, 0
        self._open.clear()

    def asking(self) -> None:
        """One model call is being asked."""
        self._asked += 1
        self._in_flight += 1
        if self._asked >= self._expected:
            self._open.set()

    def answered(self) -> None:
        """A model call came back; once none is out, the meeting works on the answers (until the next ask or its
        end). While others are out, a display may post: the meeting waits on them anyway."""
        self._in_flight -= 1
        if self._in_flight <= 0 and not self._ended:
            self._open.clear()

    def idle(self) -> None:
        """The meeting waits on the people at the table (paused): displays post (until the next phase)."""
        self._open.set()

    def end(self) -> None:
        """The meeting ended (or stopped here): displays post freely from now on."""
        self._ended = True
        self._open.set()

    @property
    def is_quiet(self) -> bool:
        """Whether a display may post now."""
        return self._open.is_set()

    async def quiet(self, at_most: float) -> None:
        """Until the meeting waits on its models (or has ended), at most ``at_most`` s."""
        if self._open.is_set():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._open.wait(), at_most)
