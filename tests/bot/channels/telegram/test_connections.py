"""burst46 (issue 44): the Telegram client's pool checks idle connections without anyio's attribute table, and still
sees a connection the server closed (the next request goes on a new one, never on the dead one)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx
from telegram.request import HTTPXRequest

from bot.channels.telegram.connections import CheapIdleChecks, cheap_idle_checks
from bot.channels.telegram.files import FileRequest
from tests.support.fakes.local_server import serve_locally


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


async def test_a_request_asks_the_kernel_once_however_many_connections_are_idle() -> None:
    """The speed-up pinned: with 20 idle connections, a request's trips through the pool take one poll each, not
    one a connection (counted by the backend; removing the snapshot makes it 20 or more a request)."""
    async with slow_server() as url, httpx.AsyncClient(limits=httpx.Limits(max_connections=32)) as client:
        assert cheap_idle_checks(client)
        await asyncio.gather(*(client.post(url, content=b"x") for _ in range(20)))
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert len(pool._connections) == 20
        backend: CheapIdleChecks = pool._network_backend
        before = backend.polls
        for _ in range(10):
            assert (await client.post(url, content=b"x")).status_code == 200
        assert backend.polls - before <= 10 * 3, backend.polls - before  # a few trips a request, one poll each


async def test_the_pool_scan_is_linear_and_keeps_the_keep_alive_limit() -> None:
    """The other half of the speed-up: httpcore 1.0 scanned its pool in O(n^2) (a list of every connection for
    each idle one); the channel's pool asks each connection whether it is idle a few times a scan, not n times. The
    keep-alive limit still holds: idle connections beyond it are closed."""
    async with slow_server() as url:
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=64)) as client:
            assert cheap_idle_checks(client)
            await asyncio.gather(*(client.post(url, content=b"x") for _ in range(40)))
            pool = client._transport._pool  # type: ignore[attr-defined]
            assert len(pool._connections) == 40
            asked = 0
            for connection in pool._connections:
                original = connection.is_idle

                def counted(original=original) -> bool:  # type: ignore[no-untyped-def]
                    nonlocal asked
                    asked += 1
                    return original()

                connection.is_idle = counted
            assert (await client.post(url, content=b"x")).status_code == 200
            assert asked <= 40 * 6, asked  # httpcore 1.0.9's own scan: 40 x 40 a trip (3,300+ here)
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=16, max_keepalive_connections=3)) as client:
            assert cheap_idle_checks(client)
            await asyncio.gather(*(client.post(url, content=b"x") for _ in range(8)))
            assert len(client._transport._pool._connections) <= 3  # type: ignore[attr-defined]


@contextlib.asynccontextmanager
async def slow_server() -> AsyncIterator[str]:
    """A local aiohttp server answering every POST after 0.05 s (so requests at once need a connection each); its
    URL, the server ended on the way out."""
    from aiohttp import web

    async def ok(request: web.Request) -> web.Response:
        await request.read()
        await asyncio.sleep(0.05)
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/", ok)
    runner, port = await serve_locally(app)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        await runner.cleanup()
