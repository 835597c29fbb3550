"""``telemetry:``, the traces' config section (OpenTelemetry over OTLP/HTTP), validated by pydantic."""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator

from board.telemetry.exporting import TraceExport
from bot.config.base import StrictModel

__all__ = ["TelemetrySection"]


class TelemetrySection(StrictModel):
    """``telemetry``: OpenTelemetry traces of each message, meeting, turn, model call and tool call, sent to an
    OTLP/HTTP receiver (an OpenTelemetry Collector, Jaeger, Grafana Tempo, Honeycomb ...). Off by default; while
    off nothing of OpenTelemetry is loaded."""

    enabled: bool = Field(False, description=(
        "true: record spans and send them to `endpoint`; the trace id goes on log lines and on the ledger's rows"))
    endpoint: str = Field("http://127.0.0.1:4318", min_length=1, description=(
        "the OTLP/HTTP receiver: its base URL (`/v1/traces` is added) or the full traces URL"))
    service_name: str = Field("sabha", min_length=1, max_length=200, description=(
        "`service.name` of the spans: tells several Sabha deployments apart in one backend"))
    headers: dict[str, SecretStr] = Field(default_factory=dict, description=(
        "HTTP headers sent with each export, e.g. `authorization: Bearer ${OTLP_TOKEN}` (use ${ENV}: the values "
        "are secrets, masked in logs)"))
    sample_ratio: float = Field(1.0, ge=0, le=1, description=(
        "share of traces kept (by trace id; a span's children follow it): 1 keeps every message and meeting"))
    timeout_s: float = Field(10, gt=0, le=300, description="how long one export request may take")
    export_delay_s: float = Field(5, gt=0, le=300, description=(
        "spans are sent in batches at most this long after they end (and at stop)"))

    @field_validator("endpoint")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is no http(s) URL; e.g. http://127.0.0.1:4318 (an OTLP/HTTP receiver)")
        return value

    def export(self, *, instance: str = "", version: str = "") -> TraceExport:
        """Where and how the spans go, for :func:`board.telemetry.exporting.start_tracing`."""
        return TraceExport(endpoint=self.endpoint, service_name=self.service_name,
                           headers={k: v.get_secret_value() for k, v in self.headers.items()},
                           sample_ratio=self.sample_ratio, timeout_s=self.timeout_s,
                           export_delay_s=self.export_delay_s, instance=instance, version=version)
