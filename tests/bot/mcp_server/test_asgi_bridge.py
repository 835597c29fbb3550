"""The ASGI bridge (:mod:`bot.mcp_server.asgi_bridge`) on a real aiohttp server on 127.0.0.1: an ASGI
application sees the request as it was sent (method, path, query, headers, the body in chunks), its answer
reaches the client as it sent it (status, repeated headers, a body streamed in pieces), a client that leaves
a stream is told to the application as ``http.disconnect``, and an application that answers nothing is a 500."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import ClientSession, web

from bot.mcp_server.asgi_bridge import serve_asgi

BOUND_S = 60.0  # a bound for a hung bridge, not a measure of speed


async def echo(scope: Any, receive: Any, send: Any) -> None:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message["body"])
        if not message["more_body"]:
            break
    body = json.dumps({"method": scope["method"], "path": scope["path"], "query": scope["query_string"].decode(),
                       "header": dict(scope["headers"]).get(b"x-test", b"").decode(),
                       "size": sum(len(c) for c in chunks)}).encode()
    await send({"type": "http.response.start", "status": 201,
                "headers": [(b"content-type", b"application/json"), (b"x-many", b"1"), (b"x-many", b"2")]})
    await send({"type": "http.response.body", "body": body})


class Streaming:
    """Sends two pieces, then waits for the client to leave."""

    def __init__(self) -> None:
        self.told_gone = asyncio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await receive()  # the (empty) body
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"first\n", "more_body": True})
        await send({"type": "http.response.body", "body": b"second\n", "more_body": True})
        if (await receive())["type"] == "http.disconnect":
            self.told_gone.set()


async def silent(scope: Any, receive: Any, send: Any) -> None:
    return None


def handler(app: Any) -> Any:
    async def handle(request: web.Request) -> web.StreamResponse:
        return await serve_asgi(app, request)

    return handle


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, Streaming]]:
    streaming = Streaming()
    app = web.Application()
    app.router.add_route("*", "/echo", handler(echo))
    app.router.add_get("/stream", handler(streaming))
    app.router.add_get("/silent", handler(silent))
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", streaming
    finally:
        await runner.cleanup()


async def test_the_application_sees_the_request_and_its_answer_reaches_the_client(
        server: tuple[str, Streaming]) -> None:
    base, _ = server
    body = b"x" * 300_000  # several chunks
    async with asyncio.timeout(BOUND_S), ClientSession() as http, http.post(
            f"{base}/echo?a=1&b=two", data=body, headers={"X-Test": "yes"}) as response:
        assert response.status == 201
        assert response.headers.getall("X-Many") == ["1", "2"]
        assert await response.json() == {"method": "POST", "path": "/echo", "query": "a=1&b=two", "header": "yes",
                                         "size": len(body)}


async def test_a_stream_arrives_in_pieces_and_a_client_that_leaves_is_told(server: tuple[str, Streaming]) -> None:
    base, streaming = server
    async with asyncio.timeout(BOUND_S):
        async with ClientSession() as http, http.get(f"{base}/stream") as response:
            assert response.status == 200
            assert await response.content.readline() == b"first\n"
            assert await response.content.readline() == b"second\n"
        await streaming.told_gone.wait()  # the client closed the connection: the application heard of it


async def test_an_application_that_answers_nothing_is_a_500(server: tuple[str, Streaming]) -> None:
    base, _ = server
    async with asyncio.timeout(BOUND_S), ClientSession() as http, http.get(f"{base}/silent") as response:
        assert response.status == 500
