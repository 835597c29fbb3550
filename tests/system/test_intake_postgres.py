"""A real ``sabha run`` with ``state.url: postgresql://...``: the WhatsApp webhook on a PostgreSQL state store.

* the server stops: a webhook POST answers 503 (Meta retries it), ``/readyz`` says "state store unreachable"
  and why; the server returns: the redelivery is answered once (a marker after it proves nothing more comes);
* two replicas on one database, a conversation's messages posted to each in turn: each answered once, in
  order; one replica killed (SIGKILL) mid-turn: the other answers what it left once its lease expired.
"""

from __future__ import annotations

import asyncio
import re
import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, ClientTimeout

from tests.bot.channels.whatsapp.test_whatsapp_durability import USERS, write_config
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.pg import fresh_database
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, post, text_notification

pytestmark = pytest.mark.xdist_group("bursts")

_ECHO = re.compile(r"ECHO [^\n]*?\b([A-Z]\d{3})\b")


def answers(graph: FakeGraphAPI) -> list[str]:
    """The markers answered, in the order the replies reached the fake Graph API."""
    return [m for sent in graph.sent for m in _ECHO.findall(sent.body)]


def on_postgres(config: Path, url: str, name: str = "", lease_s: float = 15) -> Path:
    """``config`` with ``state.url`` (and the replica's name, lease) set; written next to it as its own file."""
    text = config.read_text(encoding="utf-8")
    text += f"state:\n  url: {url}\n  pool_size: 4\nreplicas:\n  lease_s: {lease_s}\n"
    if name:
        text += f"  name: {name}\n"
    path = config.with_name(f"sabha-{name or 'pg'}.yaml")
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
async def pg_state(pg_server: Any) -> Any:
    async with fresh_database(pg_server) as url:
        yield url


@pytest.fixture
def model(echo_model: EchoModel) -> EchoModel:
    echo_model.latency = 0.05
    return echo_model


async def readyz(http: ClientSession, port: int | None) -> tuple[int, dict[str, Any]]:
    async with http.get(f"http://127.0.0.1:{port}/readyz") as resp:
        return resp.status, await resp.json()


async def test_postgresql_down_webhook_503_readyz_says_why_then_answered_once(
    tmp_path: Path, fake_graph: FakeGraphAPI, model: EchoModel, pg_server: Any, pg_state: str
) -> None:
    env = {"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    sabha = SabhaProcess(on_postgres(write_config(tmp_path, fake_graph, model), pg_state), env=env)
    user = USERS[0]
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=15)) as http:
            url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
            assert (await post(http, url, text_notification(user, "D001 before")))[0] == 200
            await eventually(lambda: "D001" in answers(fake_graph), "the first answer", timeout=20)
            assert (await readyz(http, sabha.port))[0] == 200
            down = text_notification(user, "D002 while the server is down")
            await asyncio.to_thread(pg_server.stop, "fast")
            try:
                status, _ = await post(http, url, down)
                assert status == 503  # not acknowledged: Meta delivers it again
                code, body = await readyz(http, sabha.port)
                assert code == 503
                assert any(r.startswith("state store unreachable: ") for r in body["reasons"]), body
            finally:
                await asyncio.to_thread(pg_server.start)
            retried = 0
            while (status := (await post(http, url, down))[0]) != 200:  # Meta's retries, until one is taken
                retried += 1
                assert retried < 50, status
                await asyncio.sleep(0.2)
            assert (await post(http, url, down))[0] == 200  # and once more: a redelivery
            assert (await post(http, url, text_notification(user, "D003 marker")))[0] == 200
            await eventually(lambda: "D003" in answers(fake_graph), "the marker's answer", timeout=30)
            code, body = await readyz(http, sabha.port)
            assert code == 200, body
        await asyncio.sleep(0.3)
    finally:
        await sabha.close()
    assert Counter(answers(fake_graph)) == {"D001": 1, "D002": 1, "D003": 1}
    assert answers(fake_graph) == ["D001", "D002", "D003"]


async def test_two_replicas_one_conversation_in_order_and_a_killed_one_is_taken_over(
    tmp_path: Path, fake_graph: FakeGraphAPI, model: EchoModel, pg_state: str
) -> None:
    env = {"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    config = write_config(tmp_path, fake_graph, model)
    a = SabhaProcess(on_postgres(config, pg_state, "a", lease_s=2), env=env)
    b = SabhaProcess(on_postgres(config, pg_state, "b", lease_s=2), env=env)
    user = USERS[1]
    try:
        await a.start()
        async with ClientSession(timeout=ClientTimeout(total=15)) as http:
            # The sender is known before b starts: the WhatsApp identity store keeps a per-process view of the
            # people it has seen (a person first seen by two replicas at once is another helper's to fix).
            first = f"http://127.0.0.1:{a.port}/whatsapp/webhook"
            assert (await post(http, first, text_notification(user, "S000 hello")))[0] == 200
            await eventually(lambda: "S000" in answers(fake_graph), "the first answer", timeout=30)
            await b.start()
            urls = [f"http://127.0.0.1:{p.port}/whatsapp/webhook" for p in (a, b)]
            for n in range(10):  # a load balancer's round robin
                assert (await post(http, urls[n % 2], text_notification(user, f"R{n:03d} question")))[0] == 200
                await asyncio.sleep(0.02)
            await eventually(lambda: len(answers(fake_graph)) >= 11, "ten answers", timeout=30)
            assert answers(fake_graph) == ["S000", *(f"R{n:03d}" for n in range(10))]

            model.latency = 3.0  # the next turn is still running when its replica is killed
            assert (await post(http, urls[0], text_notification(user, "K001 asked of a")))[0] == 200
            await eventually(lambda: model.in_flight >= 1, "a's turn to start", timeout=10)
            await a.signal(signal.SIGKILL)
            model.latency = 0.05
            assert (await post(http, urls[1], text_notification(user, "K002 asked of b")))[0] == 200
            await eventually(lambda: "K002" in answers(fake_graph), "b to answer what a left", timeout=30)
        await asyncio.sleep(0.5)
    except BaseException:
        print("--- a ---\n", a.log[-6000:], "\n--- b ---\n", b.log[-6000:])
        raise
    finally:
        await a.close()
        await b.close()
    seen = answers(fake_graph)
    assert Counter(seen) == {"S000": 1, **{f"R{n:03d}": 1 for n in range(10)}, "K001": 1, "K002": 1}, seen
    assert seen[-2:] == ["K001", "K002"]
