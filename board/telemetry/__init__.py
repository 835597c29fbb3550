"""Traces of what Sabha does (OpenTelemetry), off by default.

:mod:`.spans` is the facade every part calls (``span``, ``traced``, ``trace_id``): while tracing is off it
costs one global read and imports nothing of OpenTelemetry. :mod:`.exporting` switches it on (the SDK and the
OTLP/HTTP exporter, imported only then) and off again, flushing what is left; :mod:`.logs` puts the trace id on
log records; :mod:`.genai` names the GenAI semantic conventions' attributes the provider and tool spans carry.
"""

__all__ = ["exporting", "genai", "logs", "spans"]
