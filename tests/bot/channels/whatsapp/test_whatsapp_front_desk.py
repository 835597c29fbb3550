"""WhatsApp on the front desk (``server.front_desk_port``: :mod:`bot.channels.held.desk`), on a real ``sabha run``:
signed notifications posted to the front desk's port are answered once each; a missing or wrong
``X-Hub-Signature-256`` is refused there (401 / 403) and never stored."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from pathlib import Path

from aiohttp import ClientSession

from tests.bot.channels.whatsapp.test_whatsapp_durability import USERS, answered, write_config
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, post, text_notification

COUNT = 24
_DESK = re.compile(r"front desk: webhooks \S+ received on http://127\.0\.0\.1:(\d+) ")


async def test_notifications_on_the_front_desk_are_answered_once_and_forgeries_never_stored(
        tmp_path: Path, fake_graph: FakeGraphAPI, echo_model: EchoModel) -> None:
    config = write_config(tmp_path, fake_graph, echo_model)
    config.write_text(config.read_text(encoding="utf-8").replace("  port: 0\n", "  port: 0\n  front_desk_port: 0\n",
                                                                 1), encoding="utf-8")
    sabha = SabhaProcess(config, env={"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET})
    db = tmp_path / "sessions" / "sabha.db"
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
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
            texts = [str(r[0]) for r in conn.execute("SELECT envelope FROM inbound_messages").fetchall()]
        assert not any("Q900" in text for text in texts), "a forged notification was stored"
    finally:
        await sabha.close()
    counts = answered(fake_graph)
    assert "Q900" not in counts
    assert all(counts[q] == 1 for q in wanted), counts
