"""Webhooks that arrive while the daemon starts (issue item 4): the HTTP port opens before the channels are
up, and what arrives then was answered 503 (Meta delivers again only minutes later). Now it is stored
durably, answered 200, and answered to the person once the channels are up, exactly once.

A real ``sabha run`` with Telegram in webhook mode (the fake Bot API) and WhatsApp (the fake Graph API).
The window is made to last: the fake Bot API holds its answer to ``setMyCommands`` (part of the Telegram
channel's start; WhatsApp starts after it), so the port is open (``daemon.json`` names it) and no channel
accepts yet. A later message in each channel, answered, is the marker that nothing came twice. A forged
request held then (wrong secret token, wrong signature) is refused by its channel when handed over.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
from collections import Counter
from pathlib import Path

from aiohttp import ClientSession

from tests.support.daemon import WEBHOOK_SECRET, SabhaProcess, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, TOKEN, eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, post, text_notification
from tests.support.whatsapp import OWNER as WA_OWNER

WAIT = 90.0  # a step on a loaded machine
HOLD_S = 30.0  # how long the fake Bot API sits on setMyCommands: the start's window
_ECHO = re.compile(r"ECHO [^\n]*?\b(Q\d{3})\b")


class Starting(SabhaProcess):
    """A ``sabha run`` whose start is not awaited: the test works in the middle of it."""

    async def launch(self) -> Starting:
        import os
        import sys

        from tests.support.daemon import DAEMON_REPO

        env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
        env.update(self.env, PYTHONPATH=str(DAEMON_REPO), PYTHONUNBUFFERED="1")
        self.lines.clear()
        self.port = None
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", "from bot.cli import main; raise SystemExit(main.main())", "run", "--config",
            str(self.config), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=env,
            cwd=str(self.config.parent))
        self._reader = asyncio.create_task(self._read())
        return self


def config_for(root: Path, telegram: FakeTelegramAPI, graph: FakeGraphAPI, model: EchoModel,
               state_url: str | None = None) -> Path:
    return write_config(root, telegram, model, mode="webhook", extra=[
        "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
        "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
        f"  graph_base_url: {graph.base_url}", f'  allowed_numbers: ["{WA_OWNER}"]',
        *(["state:", f"  url: {state_url}"] if state_url else [])])


def env_for(graph: FakeGraphAPI) -> dict[str, str]:
    return {"TELEGRAM_BOT_TOKEN": TOKEN, "WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}


async def port_while_starting(sabha: SabhaProcess, data_dir: Path, telegram: FakeTelegramAPI) -> int:
    """The daemon's port, once it listens and its Telegram channel's start sits on setMyCommands."""
    await telegram.wait_until(lambda: bool(telegram.calls_to("setMyCommands")), "setMyCommands", WAIT)
    runtime = data_dir / "daemon.json"
    await eventually(runtime.exists, "daemon.json", timeout=WAIT)
    assert not any(re.search(r"sabha \S+ running", line) for line in sabha.lines), sabha.log
    return int(json.loads(runtime.read_text())["port"])


def answered(telegram: FakeTelegramAPI, graph: FakeGraphAPI) -> Counter[str]:
    return Counter([*(m for s in telegram.sent_messages for m in _ECHO.findall(s.text)),
                    *(m for s in graph.sent for m in _ECHO.findall(s.body))])


async def say_both(port: int, telegram: FakeTelegramAPI, tg_marker: str, wa_marker: str) -> tuple[int, int]:
    """One Telegram update and one WhatsApp notification posted to the daemon: their HTTP statuses."""
    update = telegram.build_text_update(OWNER, OWNER, f"{tg_marker} hello?", is_forum=False, chat_type="private")
    tg, _ = await telegram.deliver_webhook(f"http://127.0.0.1:{port}/telegram/webhook", update, WEBHOOK_SECRET)
    async with ClientSession() as http:
        wa, _ = await post(http, f"http://127.0.0.1:{port}/whatsapp/webhook",
                           text_notification(WA_OWNER, f"{wa_marker} hello?"))
    return tg, wa


async def forged_both(port: int, telegram: FakeTelegramAPI, tg_marker: str, wa_marker: str) -> tuple[int, int]:
    """A Telegram update with a wrong secret token and a WhatsApp notification with a wrong signature."""
    update = telegram.build_text_update(OWNER, OWNER, f"{tg_marker} forged", is_forum=False, chat_type="private")
    tg, _ = await telegram.deliver_webhook(f"http://127.0.0.1:{port}/telegram/webhook", update, "not-the-secret")
    async with ClientSession() as http:
        wa, _ = await post(http, f"http://127.0.0.1:{port}/whatsapp/webhook",
                           text_notification(WA_OWNER, f"{wa_marker} forged"), signature="sha256=" + "0" * 64)
    return tg, wa


async def test_webhooks_in_the_first_moments_are_stored_answered_200_then_answered_once(
        tmp_path: Path, fake: FakeTelegramAPI, fake_graph: FakeGraphAPI, echo_model: EchoModel) -> None:
    await held_then_answered_once(tmp_path, fake, fake_graph, echo_model)


async def test_webhooks_in_the_first_moments_on_postgres(tmp_path: Path, fake: FakeTelegramAPI,
                                                         fake_graph: FakeGraphAPI, echo_model: EchoModel,
                                                         pg_url: str) -> None:
    await held_then_answered_once(tmp_path, fake, fake_graph, echo_model, pg_url)


async def held_then_answered_once(tmp_path: Path, fake: FakeTelegramAPI, fake_graph: FakeGraphAPI,
                                  echo_model: EchoModel, state_url: str | None = None) -> None:
    fake.set_delay("setMyCommands", HOLD_S)
    sabha = Starting(config_for(tmp_path, fake, fake_graph, echo_model, state_url), env=env_for(fake_graph))
    try:
        await sabha.launch()
        port = await port_while_starting(sabha, tmp_path / "sessions", fake)
        assert await say_both(port, fake, "Q001", "Q002") == (200, 200), sabha.log
        assert await forged_both(port, fake, "Q005", "Q006") == (200, 200)  # held too: checked when handed over
        await sabha.wait_for_log(r"sabha \S+ running", timeout=WAIT)
        await eventually(lambda: {"Q001", "Q002"} <= set(answered(fake, fake_graph)), "the held messages answered",
                         timeout=WAIT)
        assert await say_both(port, fake, "Q003", "Q004") == (200, 200)  # the marker
        await eventually(lambda: {"Q003", "Q004"} <= set(answered(fake, fake_graph)), "the markers answered",
                         timeout=WAIT)
        seen = answered(fake, fake_graph)
        assert [seen[m] for m in ("Q001", "Q002", "Q003", "Q004", "Q005", "Q006")] == [1, 1, 1, 1, 0, 0], seen
        refused = [line for line in sabha.lines if "refused a request held at start" in line]
        assert len(refused) == 2 and any("(401" in r for r in refused) and any("(403" in r for r in refused), refused
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()


async def test_webhooks_held_at_start_survive_a_kill_before_the_channels_are_up(
        tmp_path: Path, fake: FakeTelegramAPI, fake_graph: FakeGraphAPI, echo_model: EchoModel) -> None:
    fake.set_delay("setMyCommands", HOLD_S)
    config = config_for(tmp_path, fake, fake_graph, echo_model)
    sabha = Starting(config, env=env_for(fake_graph))
    try:
        await sabha.launch()
        port = await port_while_starting(sabha, tmp_path / "sessions", fake)
        assert await say_both(port, fake, "Q001", "Q002") == (200, 200), sabha.log
        await sabha.signal(signal.SIGKILL)  # acknowledged, never answered: the next start must
        fake.set_delay("setMyCommands", 0)
        await sabha.start()
        await eventually(lambda: {"Q001", "Q002"} <= set(answered(fake, fake_graph)), "the held messages answered",
                         timeout=WAIT)
        assert sabha.port is not None
        assert await say_both(sabha.port, fake, "Q003", "Q004") == (200, 200)  # the marker
        await eventually(lambda: {"Q003", "Q004"} <= set(answered(fake, fake_graph)), "the markers answered",
                         timeout=WAIT)
        seen = answered(fake, fake_graph)
        assert [seen[m] for m in ("Q001", "Q002", "Q003", "Q004")] == [1, 1, 1, 1], seen
    finally:
        await sabha.close()
