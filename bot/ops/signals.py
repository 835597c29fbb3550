"""SIGTERM / SIGINT: the first asks for a clean shutdown, a second one exits at once.

A clean shutdown finishes running answers up to ``inbox.shutdown_grace_s``; someone who
cannot wait sends the signal again (a second Ctrl-C, ``systemctl kill``) and the process
exits immediately with 128 + the signal number (130 for SIGINT, 143 for SIGTERM), the
way shells report a death by signal. Nothing is lost by it: every message was stored
before it was acknowledged, so the next start answers what is left (a reply that may
have left already is never sent twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable

__all__ = ["StopSignals", "exit_code_for", "restore_handler"]

log = logging.getLogger("sabha.signals")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _asyncios(handler: object) -> bool:
    """Whether ``handler`` is asyncio's own (the no-op it installs while a loop handles the signal)."""
    return str(getattr(handler, "__module__", "") or "").startswith("asyncio")


def restore_handler(sig: int, previous: object) -> None:
    """Put back the Python-level handler ``sig`` had before the loop took it (a function only). When that
    was asyncio's own no-op (another loop's handler, given back since: handlers uninstalled out of order),
    the handler now in place stays, unless it is asyncio's no-op too: then Python's default (a no-op left
    behind would ignore Ctrl-C and SIGTERM for the rest of the process)."""
    if not callable(previous) or threading.current_thread() is not threading.main_thread():
        return
    if _asyncios(previous):
        if _asyncios(signal.getsignal(sig)):
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
        return
    signal.signal(sig, previous)


def exit_code_for(sig: int) -> int:
    """128 + the signal number (SIGINT 130, SIGTERM 143)."""
    return 128 + int(sig)


class StopSignals:
    """Installs the handlers on the running loop; see the module docstring.

    ``on_stop`` runs at the first signal; at the second, ``before_exit`` runs (best effort)
    and the process ends through ``exit`` (``os._exit``: no clean-up that could hang).
    """

    def __init__(self, on_stop: Callable[[], None], *, before_exit: Callable[[], None] | None = None,
                 exit: Callable[[int], object] = os._exit) -> None:
        self.on_stop = on_stop
        self.before_exit = before_exit
        self.exit = exit
        self.received: list[signal.Signals] = []
        self._installed: list[signal.Signals] = []
        self._previous: dict[signal.Signals, object] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        """Handle SIGTERM and SIGINT on ``loop`` (where the platform allows it)."""
        self._loop = loop
        for sig in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                previous = signal.getsignal(sig)
                loop.add_signal_handler(sig, self.handle, sig)
                self._installed.append(sig)
                self._previous[sig] = previous

    def uninstall(self) -> None:
        """Give the signals back to the handlers they had before (``sabha``'s quiet Ctrl-C:
        :mod:`bot.cli.interrupt`), where asyncio would put Python's defaults."""
        if self._loop is not None:
            for sig in self._installed:
                with contextlib.suppress(Exception):
                    self._loop.remove_signal_handler(sig)
                    restore_handler(sig, self._previous.get(sig))
        self._installed.clear()
        self._previous.clear()

    def handle(self, sig: signal.Signals) -> None:
        """One signal arrived."""
        self.received.append(sig)
        if len(self.received) == 1:
            log.info("%s received: shutting down (send it again to exit at once)", sig.name)
            self.on_stop()
            return
        code = exit_code_for(sig)
        log.warning("%s received again: exiting now (code %d); messages not answered yet stay stored and are "
                    "answered at the next start", sig.name, code)
        if self.before_exit is not None:
            try:
                self.before_exit()
            except Exception:  # leaving anyway
                log.exception("clean-up before exiting failed")
        for handler in logging.getLogger().handlers:
            with contextlib.suppress(Exception):
                handler.flush()
        self.exit(code)
