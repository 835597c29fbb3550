"""Behind an HTTP proxy a Telegram request that never left is not "may have arrived" (review of the delivery work,
finding 2): the proxy's CONNECT is not the request's departure, so a proxy refusing the tunnel (502, upstream
down) leaves the reply unmarked and the failure proves nothing was sent. Real PTB through a real proxy server on
127.0.0.1 that answers every CONNECT with 502."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from telegram import Bot

from bot.channels.telegram.departure import departure_hooks
from bot.channels.telegram.files import FileRequest
from bot.channels.telegram.outbound import Outbound, Target
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress
from tests.support.telegram import OWNER, TOKEN


@pytest.fixture
async def refusing_proxy() -> AsyncIterator[tuple[str, list[bytes]]]:
    """An HTTP proxy whose upstream is down: each CONNECT gets 502 Bad Gateway."""
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            seen.append(head.split(b" ", 1)[0])
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        server.close()
        await server.wait_closed()


async def test_a_request_refused_at_the_proxy_s_connect_is_not_marked_sending_nor_may_have_arrived(
        refusing_proxy: tuple[str, list[bytes]]) -> None:
    proxy, seen = refusing_proxy
    request = FileRequest(connection_pool_size=2, proxy=proxy, httpx_kwargs=departure_hooks())
    bot = Bot(TOKEN, base_url="https://127.0.0.1:9/bot", request=request)  # never reached: the tunnel is refused
    outbound = Outbound(bot, max_retries=1)
    outbound.retry_delay_s = 0.01
    marks: list[str] = []

    async def mark() -> None:
        marks.append("sending")

    progress = SendProgress(before_first_request=mark)
    try:
        with pytest.raises(SendFailed) as failed:
            await outbound.send(Target(OWNER), "the answer", progress=progress)
    finally:
        await request.shutdown()
    assert seen and set(seen) == {b"CONNECT"}
    assert (marks, failed.value.outcome, progress.untouched) == ([], DeliveryOutcome.NOT_SENT, True), failed.value
