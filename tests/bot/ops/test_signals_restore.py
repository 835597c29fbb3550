"""Two :class:`bot.ops.signals.StopSignals` given back out of order (issue 38 review): Ctrl-C and SIGTERM
still reach the handler the process had before, never asyncio's no-op (that left them ignored)."""

from __future__ import annotations

import asyncio
import signal
from types import FrameType

from bot.ops.signals import STOP_SIGNALS, StopSignals


def _mine(signum: int, frame: FrameType | None) -> None:
    """The process's own handler (``sabha``'s quiet Ctrl-C, in the program)."""


def test_stop_signals_uninstalled_out_of_order_give_the_signals_back() -> None:
    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    loop = asyncio.new_event_loop()
    try:
        for sig in STOP_SIGNALS:
            signal.signal(sig, _mine)
        first, second = StopSignals(lambda: None), StopSignals(lambda: None)
        first.install(loop)
        second.install(loop)  # it finds asyncio's own no-op handler in place
        first.uninstall()
        second.uninstall()  # not LIFO
        for sig in STOP_SIGNALS:
            assert signal.getsignal(sig) is _mine, (sig, signal.getsignal(sig))
        second, first = StopSignals(lambda: None), StopSignals(lambda: None)
        first.install(loop)
        second.install(loop)
        second.uninstall()  # LIFO, as before
        first.uninstall()
        for sig in STOP_SIGNALS:
            assert signal.getsignal(sig) is _mine, (sig, signal.getsignal(sig))
    finally:
        loop.close()
        for sig, handler in before.items():
            signal.signal(sig, handler)
