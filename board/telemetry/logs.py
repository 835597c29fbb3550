"""The trace id on log lines: :class:`TraceIdFilter` gives each record made while a span is current a
``trace_id`` attribute (the JSON format prints it as a field, the text format at the end of the line), so a slow
meeting's log lines lead to its trace and back. Added to the root logger's handlers while tracing is on."""

from __future__ import annotations

import logging

from board.telemetry.spans import trace_id

__all__ = ["TraceIdFilter", "attach", "detach"]


class TraceIdFilter(logging.Filter):
    """Adds ``trace_id`` to a record made inside a span; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        current = trace_id()
        if current is not None and not hasattr(record, "trace_id"):
            record.trace_id = current
        return True


_FILTER = TraceIdFilter()


def attach() -> None:
    """Put the filter on every handler of the root logger (where Sabha's records are written)."""
    for handler in logging.getLogger().handlers:
        if _FILTER not in handler.filters:
            handler.filters.insert(0, _FILTER)


def detach() -> None:
    """Take it off again."""
    for handler in logging.getLogger().handlers:
        if _FILTER in handler.filters:
            handler.removeFilter(_FILTER)
