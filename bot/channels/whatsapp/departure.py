"""When a WhatsApp reply's request leaves: the "sending" mark at the moment the request has its connection, and
the connection closed when that mark cannot be taken.

:func:`leaving_trace` is the aiohttp trace config of the channel's session: on ``on_connection_create_end`` and
``on_connection_reuseconn`` it awaits ``progress.leaving()`` of the request's :class:`SendProgress` (its
``trace_request_ctx``), right before the request is written (aiohttp has no signal before the first byte;
``on_request_headers_sent`` comes after). When that raises (the state store cannot take the mark, the lease is
lost), nothing has been written and the request stops with that error.

aiohttp then forgets the connection without closing it: a new one (``TCPConnector.connect`` releases only its
placeholder) and a pooled one (``_get`` takes it out of the acquired set, not back into the pool) stay open,
a socket leaked per refused mark for as long as the process runs. :class:`ClosingConnector` closes them.
It overrides ``connect``, ``_create_connection`` and ``_get`` of aiohttp's ``TCPConnector`` (3.x);
``tests/bot/channels/whatsapp/test_whatsapp_departure.py`` counts the server's open connections, so a change in
aiohttp shows there.
"""

from __future__ import annotations

from contextvars import ContextVar
from types import SimpleNamespace
from typing import TYPE_CHECKING

import aiohttp

from bot.intake.delivery import SendProgress

if TYPE_CHECKING:
    from aiohttp.client_proto import ResponseHandler
    from aiohttp.client_reqrep import ClientRequest, ConnectionKey
    from aiohttp.connector import Connection
    from aiohttp.tracing import Trace

__all__ = ["ClosingConnector", "leaving_trace"]

#: The connections a ``connect`` call of this task made (None outside one).
_made: ContextVar[list[ResponseHandler] | None] = ContextVar("sabha_whatsapp_made", default=None)


async def _connected(session: aiohttp.ClientSession, context: SimpleNamespace, params: object) -> None:
    """A request has its connection and is about to be written: its delivery may post from here."""
    progress = getattr(context, "trace_request_ctx", None)
    if isinstance(progress, SendProgress):
        await progress.leaving()


def leaving_trace() -> aiohttp.TraceConfig:
    """The trace config that tells each request's :class:`SendProgress` it is leaving (see the module docstring)."""
    leaving = aiohttp.TraceConfig()
    leaving.on_connection_create_end.append(_connected)
    leaving.on_connection_reuseconn.append(_connected)
    return leaving


class ClosingConnector(aiohttp.TCPConnector):
    """aiohttp's connector, closing the connection of a request stopped by a trace signal (see the module
    docstring)."""

    async def connect(self, req: ClientRequest, traces: list[Trace], timeout: aiohttp.ClientTimeout) -> Connection:
        made: list[ResponseHandler] = []
        token = _made.set(made)
        try:
            return await super().connect(req, traces, timeout)
        except BaseException:
            for proto in made:  # made for this request, never handed to it: nothing else holds it
                proto.close()
            raise
        finally:
            _made.reset(token)

    async def _create_connection(self, req: ClientRequest, traces: list[Trace],
                                 timeout: aiohttp.ClientTimeout) -> ResponseHandler:
        proto = await super()._create_connection(req, traces, timeout)
        made = _made.get()
        if made is not None:
            made.append(proto)
        return proto

    async def _get(self, key: ConnectionKey, traces: list[Trace]) -> Connection | None:
        pooled = [proto for proto, _ in self._conns.get(key, ())]
        try:
            return await super()._get(key, traces)
        except BaseException:
            # taken out of the pool by this call and handed to nobody (another request's are acquired)
            still = {proto for proto, _ in self._conns.get(key, ())}
            for proto in pooled:
                if proto not in still and proto not in self._acquired:
                    proto.close()
            raise
