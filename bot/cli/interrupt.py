"""Ctrl-C at any moment of a ``sabha`` command: one quiet line, ``Interrupted.``, exit code 130.

Python's own Ctrl-C is a ``KeyboardInterrupt`` raised wherever the program happens to be: while
modules import it is a traceback; inside ``asyncio.run`` it cancels the command half-way through
opening the state db, whose worker thread then reports "Event loop is closed" (a 24-line
traceback), and a coroutine made but not started yet warns that it "was never awaited".

:class:`Interrupts` replaces that for the program (``sabha ...`` itself, never a test calling
``main(argv)``). From the first line of :func:`bot.cli.main.main` on, SIGINT:

- while the command's event loop waits (a model, a meeting, stdin), cancels the command's task,
  so its ``finally`` blocks close the board as after any other end;
- anywhere else (importing, parsing, reading the config, the middle of a step), raises
  ``KeyboardInterrupt`` at once, as Python does;
- either way first makes the process quiet (:func:`quiet`): no log line, no warning, no report
  of a worker thread left behind; the program then prints :data:`INTERRUPTED` on stderr and
  ends with :data:`EXIT_INTERRUPTED` without waiting for threads that may be blocked (a piped
  chat's reader on stdin). A second Ctrl-C while the command cleans up ends it at once.

Commands that handle SIGINT themselves while they run (``sabha run`` stops cleanly, the
terminal chat cancels the answer it waits for) install their own handlers on the loop meanwhile.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
import warnings
from collections.abc import Coroutine
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # asyncio is imported when a command runs a coroutine: `sabha --help` never does
    import asyncio

__all__ = ["EXIT_INTERRUPTED", "INTERRUPTED", "Interrupts", "quiet", "say_interrupted"]

#: The one line an interrupted command prints (stderr).
INTERRUPTED = "Interrupted."
#: 128 + SIGINT, as shells report a program ended by Ctrl-C.
EXIT_INTERRUPTED = 130


def quiet() -> None:
    """From now on nothing but :data:`INTERRUPTED` reaches the screen: logging off, warnings off,
    and an exception in a thread left behind (aiosqlite's worker finding its loop closed) unreported."""
    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    threading.excepthook = lambda args: None
    sys.unraisablehook = lambda unraisable: None


def say_interrupted() -> None:
    """Print :data:`INTERRUPTED` on its own line on stderr (after a ``^C`` the terminal echoed)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"\n{INTERRUPTED}\n" if sys.stderr.isatty() else f"{INTERRUPTED}\n")
        sys.stderr.flush()


class Interrupts:
    """SIGINT for the program; see the module docstring."""

    def __init__(self) -> None:
        self.count = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None

    def install(self) -> None:
        """Take SIGINT over (main thread only; elsewhere Python's default stays)."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._handle)

    @property
    def interrupted(self) -> bool:
        """Whether Ctrl-C was pressed (SIGINT received by this handler)."""
        return self.count > 0

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        quiet()
        loop, task = self._loop, self._task
        if self.count == 1 and loop is not None and task is not None and not task.done() and loop.is_running():
            import asyncio  # imported already: the loop runs

            if asyncio.current_task(loop) is None:
                # The loop is waiting (select): cancel the command there, and wake the loop to do it.
                loop.call_soon_threadsafe(task.cancel)
                return
        raise KeyboardInterrupt

    def run(self, work: Coroutine[Any, Any, Any]) -> Any:
        """``asyncio.run(work)``, cancelled by Ctrl-C (then ``KeyboardInterrupt`` is raised, and the
        loop is left unclosed: the program ends without waiting for its worker threads)."""
        import asyncio

        runner = asyncio.Runner()
        interrupted = False
        try:
            return runner.run(self._main(work))
        except asyncio.CancelledError:
            if not self.interrupted:
                raise
            interrupted = True
            raise KeyboardInterrupt from None
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            self._loop = self._task = None
            if not interrupted and not self.interrupted:
                runner.close()

    async def _main(self, work: Coroutine[Any, Any, Any]) -> Any:
        import asyncio

        self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
        return await work
