"""burst46 (issue 44): the Telegram client's pool checks idle connections without anyio's attribute table, and still
sees a connection the server closed (the next request goes on a new one, never on the dead one)."""

from __future__ import annotations

import asyncio

import httpx
from telegram.request import HTTPXRequest

from bot.channels.telegram.connections import CheapIdleChecks, cheap_idle_checks
from bot.channels.telegram.files import FileRequest


def test_the_channel_s_request_pool_uses_the_cheap_idle_checks() -> None:
    """The guard of the cut: removing it from FileRequest fails this."""
    request = FileRequest(connection_pool_size=8)
    pool = request._client._transport._pool  # type: ignore[attr-defined]
    assert isinstance(pool._network_backend, CheapIdleChecks)
    plain = HTTPXRequest(connection_pool_size=8)
    assert not isinstance(plain._client._transport._pool._network_backend, CheapIdleChecks)  # type: ignore[attr-defined]


async def test_a_connection_the_server_closed_while_idle_is_not_used_again() -> None:
    connections = 0
    closed = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        await reader.readuntil(b"\r\n\r\n")
        body = b'{"ok": true}'
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
                     b"Connection: keep-alive\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()  # the server hangs up on the idle keep-alive connection
        await writer.wait_closed()
        closed.set()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with httpx.AsyncClient() as client:
        assert cheap_idle_checks(client)
        assert (await client.get(f"http://127.0.0.1:{port}/")).status_code == 200
        await closed.wait()
        for _ in range(100):  # the FIN reaches the client's socket
            await asyncio.sleep(0.01)
            pool = client._transport._pool  # type: ignore[attr-defined]
            if all(c._connection is None or c._connection._network_stream.get_extra_info("is_readable")
                   for c in pool._connections):
                break
        assert (await client.get(f"http://127.0.0.1:{port}/")).status_code == 200
    server.close()
    await server.wait_closed()
    assert connections == 2
