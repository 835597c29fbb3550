"""The interpreter's process-wide settings that keep a webhook's acknowledgement short (notes/daemon-latency.md).

Owns: :data:`SWITCH_INTERVAL_S` and :func:`settle_after_start`, called once the daemon's start-up made what it
keeps for good. The collector's pause during a burst of receipts is :mod:`bot.intake.collector`.
"""

from __future__ import annotations

import gc
import sys

__all__ = ["SWITCH_INTERVAL_S", "settle_after_start"]

#: The interpreter's switch interval in the daemon (Python's default is 5 ms): the longest a thread that needs
#: the GIL waits for the one holding it to let go. A webhook's claim is committed on the state db's express
#: thread, and each of its statements must win the GIL back from the event loop, which holds it through a
#: burst; the front desk's thread waits the same way while the main thread runs turns.
SWITCH_INTERVAL_S = 0.001


def settle_after_start() -> None:
    """What start-up made (SDK modules, schemas, souls) lives as long as the process: moved out of the collector's
    sight, a full collection takes a few ms instead of ~60 ms, which a webhook's acknowledgement would otherwise
    wait for. And the switch interval (:data:`SWITCH_INTERVAL_S`)."""
    gc.freeze()
    if sys.getswitchinterval() > SWITCH_INTERVAL_S:
        sys.setswitchinterval(SWITCH_INTERVAL_S)
