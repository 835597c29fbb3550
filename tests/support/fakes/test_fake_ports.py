"""A stopped fake keeps its port: nothing else can listen there while it is down (under xdist another worker's
server could take a freed port, and the daemon of a test that stopped its fake would find that server answering:
``test_whatsapp_without_its_graph_api_is_not_ready`` once saw WhatsApp ready with its Graph API stopped), a
connection is refused as when the service is down, and a restart serves on the same port again."""

from __future__ import annotations

import errno
import socket

import pytest
from aiohttp import ClientConnectorError, ClientSession

from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.local_server import LocalServer
from tests.support.fakes.slack_api import FakeSlackAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import TOKEN


def another_server_on(port: int) -> OSError | None:
    """Try to listen on ``port`` as another test's server would (aiohttp's TCPSite: SO_REUSEADDR); the error, or
    None when it could (the port was free)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen()
    except OSError as exc:
        return exc
    finally:
        sock.close()
    return None


async def refused(url: str) -> bool:
    async with ClientSession() as http:
        try:
            async with http.get(url):
                return False
        except ClientConnectorError as exc:
            return exc.os_error is not None and exc.os_error.errno == errno.ECONNREFUSED


async def stop_and_restart(fake: FakeGraphAPI | FakeTelegramAPI, port: int, url: str) -> None:
    """Stop ``fake``: its port stays its own (nothing else can listen there, a request is refused as by a service
    that is down); restart it: it is back on the same port."""
    await fake.stop()
    taken = another_server_on(port)
    assert taken is not None and taken.errno == errno.EADDRINUSE, taken
    assert await refused(url)
    await fake.restart()
    assert fake.port == port


@pytest.mark.parametrize("restarts", [1, 2])
async def test_a_stopped_graph_api_keeps_its_port_and_comes_back_there(restarts: int) -> None:
    async with FakeGraphAPI() as graph:
        port = graph.port
        probe = f"{graph.base_url}/{graph.version}/{graph.phone_number_id}"
        for _ in range(restarts):
            await stop_and_restart(graph, port, probe)
            async with ClientSession() as http, http.get(probe, headers={"Authorization": f"Bearer {graph.token}"}) \
                    as resp:
                assert resp.status == 200 and (await resp.json())["id"] == graph.phone_number_id
    assert another_server_on(port) is None  # left: the port is free again


async def test_a_stopped_bot_api_keeps_its_port_and_comes_back_there() -> None:
    async with FakeTelegramAPI(token=TOKEN) as fake:
        port = fake.port
        assert port is not None
        get_me = f"{fake.base_url}{TOKEN}/getMe"
        await stop_and_restart(fake, port, get_me)
        async with ClientSession() as http, http.get(get_me) as resp:
            assert resp.status == 200 and (await resp.json())["ok"] is True
    assert another_server_on(port) is None


@pytest.mark.parametrize("kind", [EchoModel, FakeSlackAPI])
async def test_leaving_a_stopped_fake_frees_its_port_whatever_else_it_calls_release(kind: type[LocalServer]) -> None:
    """Fakes with a ``release()`` of their own (a held model, a held Slack method) still free the port."""
    async with kind() as server:
        port = server.port
        await server.stop()
        assert another_server_on(port) is not None
    assert another_server_on(port) is None
