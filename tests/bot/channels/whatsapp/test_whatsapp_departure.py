"""WhatsApp's "sending" mark is taken once the request has its connection, not while it waits for one
(bot/channels/whatsapp/outbound.py: aiohttp's trace signals): the real GraphClient against the fake Graph API,
its connector limited to one connection, held by a read receipt. A mark that cannot be stored (the state store
out: the real Inbox on a store that fails its 'sending' update) stops the request and leaves no connection open,
new or pooled (aiohttp forgets a connection whose trace signal raised without closing it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from aiohttp import web

from board.envelope import Envelope, Reply
from board.storage import Database, StorageError
from bot.channels.whatsapp.outbound import GraphClient
from bot.intake.delivery import SendProgress
from bot.intake.inbox import Arrival, Inbox, LeaseLost
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.outage_db import OutageDatabase
from tests.support.kill import Hold, wait_for
from tests.support.whatsapp import FAST, OWNER, wa_settings


@dataclass
class ReadsHeld(FakeGraphAPI):
    """The fake Graph API whose read receipts wait for :attr:`reads_held` to open."""

    reads_held: Hold | None = None

    async def _messages(self, request: web.Request) -> web.Response:
        hold = self.reads_held
        if hold is not None and (await request.json()).get("status") == "read":
            hold.waiting += 1
            try:
                await hold.opened.wait()
            finally:
                hold.waiting -= 1
        return await super()._messages(request)


@pytest.fixture
async def graph() -> AsyncIterator[ReadsHeld]:
    async with ReadsHeld() as server:
        yield server


@pytest.fixture
async def client(graph: ReadsHeld) -> AsyncIterator[GraphClient]:
    client = GraphClient(wa_settings(graph), FAST)
    client.connections = 1
    await client.open()
    try:
        yield client
    finally:
        await client.close()


async def test_a_reply_waiting_for_a_connection_is_not_marked_sending(graph: ReadsHeld, client: GraphClient) -> None:
    marks: list[str] = []

    async def mark() -> None:
        marks.append("sending")

    graph.reads_held = Hold()
    read = asyncio.create_task(client.mark_read("wamid.IN1"))  # takes the one connection
    await wait_for(lambda: graph.reads_held is not None and graph.reads_held.waiting == 1, "the read receipt held")
    progress = SendProgress(before_first_request=mark)
    send = asyncio.create_task(client.send_text(OWNER, "the answer", progress=progress))
    await asyncio.sleep(0.3)  # it waits for the connection: nothing left, so nothing may be marked
    assert marks == [] and progress.untouched and graph.sent == []
    graph.reads_held.opened.set()
    await asyncio.wait_for(asyncio.gather(read, send), 30)
    assert marks == ["sending"] and [s.body for s in graph.sent] == ["the answer"]


async def test_a_mark_that_cannot_be_stored_stops_the_request(graph: ReadsHeld, client: GraphClient) -> None:
    async def lost() -> None:
        raise LeaseLost("another replica holds the conversation")

    with pytest.raises(LeaseLost, match="another replica"):
        await client.send_text(OWNER, "a late answer", progress=SendProgress(before_first_request=lost))
    assert graph.sent == []
    await client.send_text(OWNER, "the next one")  # the connector is still usable
    assert [s.body for s in graph.sent] == ["the next one"]


def open_connections(graph: FakeGraphAPI) -> int:
    """Connections the fake Graph API's server holds open right now."""
    assert graph._runner is not None and graph._runner.server is not None
    return len(graph._runner.server.connections)


@pytest.mark.parametrize("pooled", [False, True], ids=["new connection", "pooled connection"])
async def test_a_mark_the_store_cannot_take_leaves_no_connection_open(
        graph: ReadsHeld, client: GraphClient, database: Database, pooled: bool) -> None:
    envelope = Envelope(channel="whatsapp", text="q", sender=OWNER, chat_id=OWNER, message_id="wamid.IN1")
    [pending] = await Inbox(database, "whatsapp").store([Arrival(envelope, OWNER)])
    store = OutageDatabase(database, lambda sql: "status = 'sending'" in sql)
    inbox = Inbox(store, "whatsapp")  # the same rows, on a store that fails the "sending" update when armed
    await inbox.replied(pending, Reply.to(envelope, role="general", name="G", emoji="", text="the answer"))
    if pooled:
        await client.send_text(OWNER, "an earlier answer")  # its connection goes back to the pool
        assert open_connections(graph) == 1
    store.armed = True  # the disk is full from here
    with pytest.raises(StorageError):
        await client.send_text(OWNER, "the answer", progress=SendProgress(
            before_first_request=lambda: inbox.sending(pending)))
    assert store.failed, "the outage was not reached: the test no longer pins the moment down"
    assert [s.body for s in graph.sent] == (["an earlier answer"] if pooled else [])
    await wait_for(lambda: open_connections(graph) == 0, "the connection of the request that never left closed")
