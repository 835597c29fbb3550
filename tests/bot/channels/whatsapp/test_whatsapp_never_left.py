"""WhatsApp: a send that failed before its request had a connection is not "may have arrived" (review of the
delivery work, finding 6): aiohttp raises ConnectionTimeoutError (not ClientConnectorError) for a request that
waited too long for one of the connector's connections; nothing was written, so it is retried, and given up as
not sent, never written off as maybe delivered. The real GraphClient against the fake Graph API, its connector
limited to one connection, held by a read receipt."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from aiohttp import ClientTimeout

from bot.channels.whatsapp.outbound import GraphClient
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress
from tests.bot.channels.whatsapp.test_whatsapp_departure import ReadsHeld
from tests.support.kill import Hold, wait_for
from tests.support.whatsapp import FAST, OWNER, wa_settings


async def test_a_send_that_timed_out_waiting_for_a_connection_is_not_sent_and_not_may_have_arrived() -> None:
    async with ReadsHeld() as graph:
        client = GraphClient(wa_settings(graph), replace(FAST, timeout_s=0.5, max_retries=2))
        client.connections = 1
        await client.open()
        marks: list[str] = []

        async def mark() -> None:
            marks.append("sending")

        graph.reads_held = hold = Hold()
        assert client.session is not None  # a read receipt with a long timeout of its own takes the one connection
        read = asyncio.create_task(client.session.post(
            client.url, json={"messaging_product": "whatsapp", "status": "read", "message_id": "wamid.IN1"},
            timeout=ClientTimeout(total=60)))
        try:
            await wait_for(lambda: hold.waiting == 1, "the read receipt held")
            progress = SendProgress(before_first_request=mark)
            with pytest.raises(SendFailed) as failed:
                await client.send_text(OWNER, "the answer", progress=progress)
            assert (failed.value.outcome, marks, progress.untouched, graph.sent) == (
                DeliveryOutcome.NOT_SENT, [], True, []), failed.value
        finally:
            hold.opened.set()
            (await read).close()
            await client.close()
