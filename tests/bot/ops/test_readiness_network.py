"""Readiness tells the truth about the network (issue 22 item 16): a real ``sabha run`` whose
channel's API is down (the fake's port closed) is not ready, for every channel.

WhatsApp: the Graph API down at start -> ``/readyz`` 503 naming the channel and ``sabha
status`` not ready (exit 1); it comes back -> ready. Then it goes down while the daemon
runs: a question's reply cannot be sent -> not ready again, the log says "network failure"
(not "WhatsApp kept refusing ... HTTP 0"); it comes back -> the reply goes out once, ready.
Telegram, in webhook mode (where no ``getUpdates`` notices) and in polling mode: the Bot API
goes down while the daemon runs -> the same, and ready again once it is back.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession

from bot.channels.whatsapp.outbound import GraphClient, Refused
from bot.intake.delivery import DeliveryOutcome, SendFailed
from tests.bot.channels.whatsapp.test_whatsapp_durability import USERS
from tests.bot.channels.whatsapp.test_whatsapp_durability import write_config as write_whatsapp_config
from tests.support.daemon import REPO, WEBHOOK_SECRET, SabhaProcess
from tests.support.daemon import write_config as write_telegram_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER as TG_OWNER
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, FAST, post, text_notification, wa_settings
from tests.system.test_startup_network import serve_again

OWNER = USERS[0]


def readyz(port: int) -> tuple[int, dict[str, Any]]:
    """``GET /readyz`` of the daemon: (status, body)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def sabha_status(config: Path) -> tuple[int, str]:
    """The real ``sabha status`` for the board of ``config``: (exit code, output)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env["PYTHONPATH"] = str(REPO)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli.main", "status", "--config", str(config), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode()


async def until_ready(port: int, what: str) -> None:
    """Wait until ``/readyz`` says ready (the watcher probes with backoff)."""
    await eventually(lambda: readyz(port)[0] == 200, what, timeout=30)


async def until_unreachable(port: int, channel: str, why: str = "network failure") -> None:
    """Wait until ``/readyz`` is 503 because ``channel`` cannot reach its API (``why``: a network failure)."""
    seen: list[tuple[int, dict[str, Any]]] = []

    def check() -> bool:
        seen.append(readyz(port))
        status, body = seen[-1]
        return status == 503 and any(r.startswith(f"channel {channel}") and "cannot reach" in r
                                     and why in r for r in body.get("reasons") or [])

    try:
        await eventually(check, f"/readyz to say {channel} cannot reach its API ({why})", timeout=30)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last /readyz: {seen[-1] if seen else None}") from None


async def test_whatsapp_without_its_graph_api_is_not_ready(tmp_path: Path, fake_graph: FakeGraphAPI,
                                                           echo_model: EchoModel) -> None:
    config = write_whatsapp_config(tmp_path, fake_graph, echo_model)
    await fake_graph.stop()  # the Graph API is unreachable when Sabha starts
    env = {"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    sabha = await SabhaProcess(config, env=env).start()
    try:
        assert sabha.port is not None
        await until_unreachable(sabha.port, "whatsapp")
        code, out = await sabha_status(config)
        assert code == 1 and "ready: NO" in out and "whatsapp" in out and "cannot reach" in out, out
        await sabha.wait_for_log(r"whatsapp: cannot reach the WhatsApp Graph API at .* \(network failure: ")

        await fake_graph.restart()
        await until_ready(sabha.port, "ready once the Graph API is back")
        code, out = await sabha_status(config)
        assert code == 0 and "ready: yes" in out, out

        await fake_graph.stop()  # down again while the daemon runs
        async with ClientSession() as http:
            status, _ = await post(http, f"http://127.0.0.1:{sabha.port}/whatsapp/webhook",
                                   text_notification(OWNER, "Q001 are you there?"))
        assert status == 200  # stored: the webhook does not need the Graph API
        await sabha.wait_for_log(r"whatsapp: network failure sending to \d+: cannot reach the WhatsApp Graph API")
        await until_unreachable(sabha.port, "whatsapp")
        code, out = await sabha_status(config)
        assert code == 1 and "ready: NO" in out, out

        await fake_graph.restart()
        await eventually(lambda: any("ECHO Q001" in t for t in fake_graph.texts_to(OWNER)), "the reply", timeout=30)
        await until_ready(sabha.port, "ready again")
        assert sum("ECHO Q001" in t for t in fake_graph.texts_to(OWNER)) == 1
        assert "HTTP 0" not in sabha.log and "kept refusing" not in sabha.log, sabha.log
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()


async def test_a_server_that_is_not_the_graph_api_does_not_make_whatsapp_ready(
        tmp_path: Path, fake_graph: FakeGraphAPI, echo_model: EchoModel) -> None:
    """Any HTTP answer at ``whatsapp.graph_base_url`` is not the Graph API answering: another service there (here
    the model's fake, which answers the probe 404 text/plain) leaves WhatsApp not ready, and says what answered."""
    config = write_whatsapp_config(tmp_path, fake_graph, echo_model)
    stranger = f"http://127.0.0.1:{echo_model.port}"
    config.write_text(config.read_text().replace(fake_graph.base_url, stranger), encoding="utf-8")
    env = {"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    sabha = await SabhaProcess(config, env=env).start()
    try:
        assert sabha.port is not None
        await until_unreachable(sabha.port, "whatsapp", why="something else answers there: HTTP 404")
        code, out = await sabha_status(config)
        assert code == 1 and "ready: NO" in out and "whatsapp" in out, out
        await sabha.wait_for_log(r"whatsapp: cannot reach the WhatsApp Graph API at http://127\.0\.0\.1:\d+ "
                                 r"\(something else answers there: HTTP 404 .*whatsapp\.graph_base_url")
        assert fake_graph.probes == 0
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()


@pytest.mark.parametrize("mode", ["webhook", "polling"])
async def test_telegram_without_its_bot_api_is_not_ready(tmp_path: Path, fake: FakeTelegramAPI,
                                                         echo_model: EchoModel, mode: str) -> None:
    config = write_telegram_config(tmp_path, fake, echo_model, mode=mode)
    sabha = await SabhaProcess(config).start()
    try:
        assert sabha.port is not None
        assert readyz(sabha.port)[0] == 200
        await fake.stop()  # the Bot API goes down while the daemon runs
        if mode == "webhook":  # a question arrives; its reply cannot be sent (polling: getUpdates notices)
            update = fake.build_text_update(TG_OWNER, TG_OWNER, "Q002 still there?", is_forum=False,
                                            chat_type="private")
            async with ClientSession() as http, http.post(
                    f"http://127.0.0.1:{sabha.port}/telegram/webhook", json=update,
                    headers={"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}) as resp:
                assert resp.status == 200
        await sabha.wait_for_log(r"telegram: cannot reach the Telegram Bot API at .* \(network failure: ")
        await until_unreachable(sabha.port, "telegram")
        code, out = await sabha_status(config)
        assert code == 1 and "ready: NO" in out and "telegram" in out, out

        await serve_again(fake)
        await until_ready(sabha.port, "ready once the Bot API is back")
        code, out = await sabha_status(config)
        assert code == 0 and "ready: yes" in out, out
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()


async def test_a_send_that_never_reaches_the_graph_api_fails_as_a_network_failure(
        fake_graph: FakeGraphAPI, caplog: pytest.LogCaptureFixture) -> None:
    """When the retries are used up the reply is given up as a network failure (nothing was
    refused: Meta never saw it), not as "WhatsApp kept refusing the message ... HTTP 0"."""
    client = GraphClient(wa_settings(fake_graph), FAST)
    await fake_graph.stop()
    await client.open()
    try:
        with pytest.raises(SendFailed) as failed:
            await client.send_text(OWNER, "hello")
    finally:
        await client.close()
    assert not isinstance(failed.value, Refused)
    assert failed.value.outcome is DeliveryOutcome.NOT_SENT
    text = str(failed.value)
    assert text.startswith("network failure: cannot reach the WhatsApp Graph API at http://127.0.0.1:"), text
    assert "HTTP 0" not in text and "refus" not in text
    assert client.refused == 0 and client.reach.problem is not None
    assert "cannot reach the WhatsApp Graph API" in client.reach.problem
    logged = [r.getMessage() for r in caplog.records]
    assert sum("network failure sending to" in m for m in logged) == FAST.max_retries, logged
