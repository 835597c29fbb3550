"""WhatsApp on the front desk (``server.front_desk_port``: :mod:`bot.channels.held.desk`), on a real ``sabha run``
with each state store (SQLite; PostgreSQL, where the desk writes through its own pool): signed notifications posted
to the front desk's port are answered once each; a missing or wrong ``X-Hub-Signature-256`` is refused there
(401 / 403) and never stored."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession

from tests.bot.channels.whatsapp.test_whatsapp_durability import USERS, answered, write_config
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.pg import fresh_database
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, post, text_notification

COUNT = 24
_DESK = re.compile(r"front desk: webhooks \S+ received on http://127\.0\.0\.1:(\d+) ")


@pytest.fixture(params=["sqlite", "postgres"])
async def state(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    """The ``state:`` lines of the config: SQLite in data_dir, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield ""
        return
    pg_server: Any = request.getfixturevalue("pg_server")
    async with fresh_database(pg_server) as url:
        yield f"state:\n  url: {url}\n  pool_size: 4\n"


async def stored_texts(state: str, tmp_path: Path) -> list[str]:
    """The envelopes of every stored inbound message."""
    if not state:
        import sqlite3

        with sqlite3.connect(f"file:{tmp_path / 'sessions' / 'sabha.db'}?mode=ro", uri=True, timeout=10) as conn:
            return [str(r[0]) for r in conn.execute("SELECT envelope FROM inbound_messages").fetchall()]
    import asyncpg

    conn = await asyncpg.connect(state.split("url: ", 1)[1].split("\n", 1)[0])
    try:
        return [str(r[0]) for r in await conn.fetch("SELECT envelope FROM inbound_messages")]
    finally:
        await conn.close()


async def test_notifications_on_the_front_desk_are_answered_once_and_forgeries_never_stored(
        tmp_path: Path, fake_graph: FakeGraphAPI, echo_model: EchoModel, state: str) -> None:
    config = write_config(tmp_path, fake_graph, echo_model)
    text = config.read_text(encoding="utf-8").replace("  port: 0\n", "  port: 0\n  front_desk_port: 0\n", 1)
    config.write_text(text + state, encoding="utf-8")
    sabha = SabhaProcess(config, env={"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET})
    try:
        await sabha.start()
        ports = [m.group(1) for line in sabha.lines if (m := _DESK.search(line))]
        assert ports, "the daemon logged no front desk"
        url = f"http://127.0.0.1:{ports[-1]}/whatsapp/webhook"
        async with ClientSession() as http:
            forged = text_notification(USERS[0], "Q900 forged")
            assert (await post(http, url, forged, signature="sha256=" + "0" * 64))[0] == 403
            assert (await post(http, url, forged, signature=None))[0] == 401
            statuses = await asyncio.gather(*(post(http, url, text_notification(USERS[i % len(USERS)],
                                                                                f"Q{i:03d} what now?"))
                                              for i in range(COUNT)))
        assert [s for s, _ in statuses] == [200] * COUNT, statuses
        wanted = {f"Q{i:03d}" for i in range(COUNT)}
        await eventually(lambda: wanted <= set(answered(fake_graph)), "every notification answered", timeout=120)
        texts = await stored_texts(state, tmp_path)
        assert texts and not any("Q900" in text for text in texts), "a forged notification was stored"
    finally:
        await sabha.close()
    counts = answered(fake_graph)
    assert "Q900" not in counts
    assert all(counts[q] == 1 for q in wanted), counts
