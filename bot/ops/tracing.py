"""The daemon's traces: started from ``telemetry:`` as ``sabha run`` starts (nothing when it is off, the
default: OpenTelemetry is then never imported) and stopped as it stops, after the last answers, so their spans
are exported before the process ends (:mod:`board.telemetry.exporting` does the work)."""

from __future__ import annotations

import asyncio

from board import __version__
from board.telemetry.exporting import Tracing, start_tracing
from bot.ops.config import TelemetrySection

__all__ = ["begin_tracing", "end_tracing"]


def begin_tracing(section: TelemetrySection, *, instance: str = "") -> Tracing | None:
    """Tracing on when ``section.enabled``; None otherwise."""
    if not section.enabled:
        return None
    return start_tracing(section.export(instance=instance, version=__version__))


async def end_tracing(tracing: Tracing | None) -> None:
    """Stop ``tracing`` and export what is queued, off the event loop."""
    if tracing is not None:
        await asyncio.to_thread(tracing.stop)
