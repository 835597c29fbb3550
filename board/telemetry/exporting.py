"""Tracing switched on and off: the OpenTelemetry SDK with a batching OTLP/HTTP (protobuf) exporter.

:func:`start_tracing` imports the SDK and the exporter (only then: with tracing off none of it is loaded), builds a
tracer provider of its own (not the process-wide global one, so a test or a restart can start it again) with the
service's resource, a parent-based ratio sampler and a :class:`BatchSpanProcessor` (spans leave in the background,
off the event loop, in batches), installs its tracer in :mod:`board.telemetry.spans` and the trace id filter on the
log handlers. :meth:`Tracing.stop` takes both out again and exports what is still queued (a bounded wait).
An endpoint that does not answer costs dropped spans and a logged warning from the exporter, never a turn.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from board.telemetry import logs, spans

__all__ = ["TRACES_PATH", "TraceExport", "Tracing", "start_tracing", "traces_url"]

log = logging.getLogger("sabha.telemetry")

#: Where an OTLP/HTTP receiver takes traces, under its base URL.
TRACES_PATH = "/v1/traces"


@dataclass(frozen=True)
class TraceExport:
    """Where and how spans are sent."""

    endpoint: str
    service_name: str = "sabha"
    headers: Mapping[str, str] = field(default_factory=dict)
    sample_ratio: float = 1.0
    timeout_s: float = 10.0
    export_delay_s: float = 5.0
    instance: str = ""
    version: str = ""


def traces_url(endpoint: str) -> str:
    """The traces URL for ``endpoint``: a receiver's base URL gets :data:`TRACES_PATH`; a URL already ending in
    it (or in another path than ``/``) is taken as it is."""
    trimmed = endpoint.rstrip("/")
    rest = trimmed.partition("://")[2]
    has_path = "/" in rest
    return trimmed if has_path else f"{trimmed}{TRACES_PATH}"


@dataclass
class Tracing:
    """Tracing while it is on; :meth:`stop` ends it."""

    provider: Any
    url: str

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop recording; export what is queued (at most ``timeout_s``); shut the exporter down. Blocking: call it
        off the event loop (``asyncio.to_thread``)."""
        spans.uninstall()
        logs.detach()
        try:
            self.provider.force_flush(int(timeout_s * 1000))
        finally:
            self.provider.shutdown()
        log.info("tracing stopped")


def start_tracing(export: TraceExport) -> Tracing:
    """Start recording spans and sending them to ``export.endpoint``; see the module docstring."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    resource: dict[str, str] = {"service.name": export.service_name}
    if export.version:
        resource["service.version"] = export.version
    if export.instance:
        resource["service.instance.id"] = export.instance
    provider = TracerProvider(resource=Resource.create(resource),
                              sampler=ParentBased(TraceIdRatioBased(export.sample_ratio)))
    url = traces_url(export.endpoint)
    exporter = OTLPSpanExporter(endpoint=url, headers=dict(export.headers), timeout=export.timeout_s)
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=export.export_delay_s * 1000))
    spans.install(provider.get_tracer("sabha"))
    logs.attach()
    log.info("tracing on: spans of %s go to %s (sampled %g)", export.service_name, url, export.sample_ratio)
    return Tracing(provider, url)
