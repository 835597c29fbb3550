"""A turn's place under the cap is given up once its answer is stored (issue 44, ack49), on a real ``sabha run``.

With ``inbox.max_concurrent_turns: 1`` the fake Graph API holds the reply to one user's first message at the wire
(its request written, Meta's answer not yet given). Delivering a stored answer is no work the cap bounds: another
user's message is answered meanwhile. The held user's own next message is not: it waits for the delivery before
its turn starts (order within a conversation), and both are answered once, in order, each recorded as answered."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import ClientSession, ClientTimeout, web

from tests.bot.channels.whatsapp.test_whatsapp_durability import USERS, write_config
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, post, text_notification

pytestmark = pytest.mark.xdist_group("bursts")

HELD, OTHER = USERS[0], USERS[1]


@dataclass
class HoldsOneUser(FakeGraphAPI):
    """The fake Graph API holding the text sends to :data:`HELD` (not read receipts) until :meth:`open`."""

    opened: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: int = 0

    async def _messages(self, request: web.Request) -> web.Response:
        payload = await request.json()
        if payload.get("status") != "read" and payload.get("to") == HELD and not self.opened.is_set():
            self.waiting += 1
            await self.opened.wait()
        return await super()._messages(request)


@pytest.fixture
async def graph() -> AsyncIterator[HoldsOneUser]:
    async with HoldsOneUser() as server:
        yield server


def _statuses(root: Path) -> list[str]:
    with sqlite3.connect(root / "sessions" / "sabha.db") as db:
        return [str(r[0]) for r in db.execute("SELECT status FROM inbound_messages ORDER BY received_at")]


async def test_an_answer_being_delivered_holds_its_conversation_not_a_place_under_the_cap(
        tmp_path: Path, graph: HoldsOneUser, echo_model: EchoModel) -> None:
    echo_model.latency = 0.0
    env = {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    sabha = SabhaProcess(write_config(tmp_path, graph, echo_model, ["inbox:", "  max_concurrent_turns: 1"]), env=env)
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=30)) as http:
            url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
            assert (await post(http, url, text_notification(HELD, "Q1 first")))[0] == 200
            await eventually(lambda: graph.waiting == 1, "the answer to Q1 held at the wire")
            assert (await post(http, url, text_notification(HELD, "Q2 second")))[0] == 200
            assert (await post(http, url, text_notification(OTHER, "Q3 someone else")))[0] == 200
            # The one place under the cap is free while Q1's answer is on the wire: the other user is answered.
            await eventually(lambda: any("ECHO Q3" in body for body in graph.texts_to(OTHER)),
                             "the other user's answer while the first answer is being delivered", timeout=30)
            # The held conversation's next message waits for its delivery: its turn has not begun.
            assert not any("Q2" in q for q in echo_model.questions), echo_model.questions
            assert graph.waiting == 1
            graph.opened.set()
            await eventually(lambda: any("ECHO Q2" in body for body in graph.texts_to(HELD)), "Q2 answered")
            await eventually(lambda: _statuses(tmp_path).count("answered") == 3, "every outcome recorded")
    finally:
        await sabha.close()
    held = graph.texts_to(HELD)
    assert [b for b in held if "ECHO Q1" in b] and [b for b in held if "ECHO Q2" in b], held
    assert [i for i, b in enumerate(held) if "ECHO Q1" in b] < [i for i, b in enumerate(held) if "ECHO Q2" in b]
    assert sum("ECHO Q" in b for b in graph.texts_to(HELD) + graph.texts_to(OTHER)) == 3  # each answered once
    assert echo_model.questions.index("Q1 first") < echo_model.questions.index("Q2 second")
