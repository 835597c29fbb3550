"""A local OTLP/HTTP trace receiver: what an OpenTelemetry Collector's ``otlphttp`` receiver does with
``POST /v1/traces`` (protobuf ``ExportTraceServiceRequest``, gzip or not), on 127.0.0.1.

Each span is decoded with the official protobuf classes (``opentelemetry-proto``) into a :class:`ReceivedSpan`;
:meth:`OtlpReceiver.trees` puts them back together by parent id, and :func:`render` prints one as an indented list
with durations (the span tree in notes/tracing.md came from it). ``fail_next`` answers the next exports 503, as a
collector that is down does."""

from __future__ import annotations

import asyncio
import gzip
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.fakes.local_server import LocalServer

__all__ = ["OtlpReceiver", "ReceivedSpan", "SpanNode", "render"]


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as the receiver decoded it."""

    trace_id: str
    span_id: str
    parent_id: str
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status: int  # 0 unset, 1 ok, 2 error
    links: tuple[str, ...]  # trace ids of the linked spans
    service: str

    @property
    def ms(self) -> float:
        """How long it took, in milliseconds."""
        return (self.end_ns - self.start_ns) / 1e6


@dataclass
class SpanNode:
    """A span and its children, in start order."""

    span: ReceivedSpan
    children: list[SpanNode] = field(default_factory=list)

    def walk(self) -> list[ReceivedSpan]:
        """This span and every one below it, depth first."""
        return [self.span, *(s for child in self.children for s in child.walk())]

    def named(self, prefix: str) -> list[SpanNode]:
        """The children whose name starts with ``prefix``."""
        return [c for c in self.children if c.span.name.startswith(prefix)]


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


class OtlpReceiver(LocalServer):
    """``POST /v1/traces``: decoded spans in :attr:`spans`; :attr:`headers` has each export's request headers."""

    name = "fake OTLP receiver"

    def __init__(self) -> None:
        super().__init__()
        self.spans: list[ReceivedSpan] = []
        self.headers: list[dict[str, str]] = []
        self.fail_next = 0
        self.arrived = asyncio.Event()

    @property
    def endpoint(self) -> str:
        """The base URL to configure as ``telemetry.endpoint``."""
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/traces", self._export)

    async def _export(self, request: web.Request) -> web.Response:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        body = await request.read()
        self.headers.append(dict(request.headers))
        if self.fail_next:
            self.fail_next -= 1
            return web.Response(status=503, text="collector unavailable")
        if request.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if request.content_type != "application/x-protobuf":
            return web.Response(status=415, text=f"expected application/x-protobuf, got {request.content_type}")
        export = ExportTraceServiceRequest()
        export.ParseFromString(body)
        for resource_spans in export.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for s in scope_spans.spans:
                    self.spans.append(ReceivedSpan(
                        trace_id=s.trace_id.hex(), span_id=s.span_id.hex(), parent_id=s.parent_span_id.hex(),
                        name=s.name, start_ns=s.start_time_unix_nano, end_ns=s.end_time_unix_nano,
                        attributes={a.key: _value(a.value) for a in s.attributes}, status=s.status.code,
                        links=tuple(link.trace_id.hex() for link in s.links),
                        service=str(resource.get("service.name", ""))))
        self.arrived.set()
        return web.Response(body=ExportTraceServiceResponse().SerializeToString(),
                            content_type="application/x-protobuf")

    def trees(self) -> list[SpanNode]:
        """Every root span (no parent among the received) with its descendants, roots and children by start."""
        nodes = {s.span_id: SpanNode(s) for s in sorted(self.spans, key=lambda s: s.start_ns)}
        roots = []
        for node in nodes.values():
            parent = nodes.get(node.span.parent_id)
            if parent is None:
                roots.append(node)
            else:
                parent.children.append(node)
        return roots


#: Attributes :func:`render` shows beside a span's name.
SHOWN = ("sabha.role", "sabha.round", "gen_ai.tool.name", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
         "gen_ai.usage.cache_read.input_tokens", "sabha.cost_usd", "sabha.channel")


def render(node: SpanNode, depth: int = 0) -> list[str]:
    """``node``'s tree as indented lines: name, duration, a few attributes."""
    shown = " ".join(f"{k.rsplit('.', 1)[-1] if 'usage' not in k else k.split('usage.')[1]}={node.span.attributes[k]}"
                     for k in SHOWN if k in node.span.attributes)
    lines = [f"{'  ' * depth}- {node.span.name} ({node.span.ms:.1f} ms){' ' + shown if shown else ''}"]
    for child in node.children:
        lines += render(child, depth + 1)
    return lines
