"""A meeting over ``board.meetings.confirm_over_usd`` on WhatsApp through a real ``sabha run`` (the offline model
priced in ``llm.prices`` so its estimate is not zero, the fake Graph API): ``/meeting`` replies that it waits,
the estimate comes with interactive reply buttons Start / Cancel, a member's Start is refused and starts
nothing, the owner's Start starts the meeting once (a second press says it already did)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession, ClientTimeout

from board.workspace.paths import copy_default_workspace
from tests.support.daemon import SabhaProcess
from tests.support.fakes.graph_api import FakeGraphAPI, SentText
from tests.support.telegram import eventually
from tests.support.whatsapp import (
    APP_SECRET,
    FRIEND,
    NUMBER_ID,
    OWNER,
    VERIFY_TOKEN,
    message,
    notification,
    post,
    text_notification,
)


class WhatsApp:
    """A running ``sabha run`` with WhatsApp on the fake Graph API, and a way to write to it."""

    def __init__(self, sabha: SabhaProcess, http: ClientSession, graph: FakeGraphAPI) -> None:
        self.sabha, self.http, self.graph = sabha, http, graph

    async def send(self, body: dict[str, object]) -> None:
        status, _ = await post(self.http, f"http://127.0.0.1:{self.sabha.port}/whatsapp/webhook", body)
        assert status == 200

    async def press(self, user: str, title: str, command: str) -> None:
        await self.send(notification([message(user, "interactive", interactive={
            "type": "button_reply", "button_reply": {"id": command, "title": title}},
            context={"from": "15550009999", "id": "wamid.ask"})]))

    async def said(self, fragment: str, count: int = 1, timeout: float = 60.0) -> list[SentText]:
        await eventually(lambda: sum(fragment in s.body for s in self.graph.sent) >= count, repr(fragment), timeout)
        return [s for s in self.graph.sent if fragment in s.body]


@pytest.fixture
async def whatsapp(tmp_path: Path, fake_graph: FakeGraphAPI) -> AsyncIterator[WhatsApp]:
    copy_default_workspace(tmp_path / "workspace")
    config = tmp_path / "sabha.yaml"
    config.write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
        "llm:", "  model: offline", "  prices:", "    offline: {input: 100, output: 400}",
        "board:", "  meetings:", "    confirm_over_usd: 0.05", "    budget_usd: 1000", "    max_turns_per_agent: 1",
        "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
        "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
        f"  graph_base_url: {fake_graph.base_url}", f"  api_version: {fake_graph.version}",
        f'  allowed_numbers: ["{OWNER}", "{FRIEND}"]']) + "\n", encoding="utf-8")
    sabha = SabhaProcess(config, env={"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET})
    await sabha.start()
    async with ClientSession(timeout=ClientTimeout(total=20)) as http:
        try:
            yield WhatsApp(sabha, http, fake_graph)
        finally:
            await sabha.close()


def count(tmp_path: Path, sql: str) -> int:
    with sqlite3.connect(tmp_path / "sessions" / "sabha.db") as db:
        return int(db.execute(sql).fetchone()[0])


async def test_start_by_reply_button_the_owners_press_only(whatsapp: WhatsApp, tmp_path: Path) -> None:
    await whatsapp.send(text_notification(OWNER, "/meeting Should we open a Pune office?"))
    [waits] = await whatsapp.said("waits for your Start (request 1)")
    assert waits.user == OWNER and "Expected: about $" in waits.body
    await eventually(lambda: any(s.buttons for s in whatsapp.graph.sent), "the estimate with its buttons", 60)
    [ask] = [s for s in whatsapp.graph.sent if s.buttons]
    assert list(ask.buttons) == [("Start", "/start_meeting 1"), ("Cancel", "/cancel_meeting 1")]
    assert ask.payload["type"] == "interactive" and len(ask.body) <= 1024
    assert "offline: $100 in / $400 out per million tokens" in ask.body

    await whatsapp.press(FRIEND, "Start", "/start_meeting 1")
    [refused] = await whatsapp.said("/start_meeting is for the board's owner only")
    assert refused.user == FRIEND
    assert count(tmp_path, "SELECT COUNT(*) FROM meetings") == 0

    await whatsapp.press(OWNER, "Start", "/start_meeting 1")
    [started] = await whatsapp.said("Starting the board meeting on \u201cShould we open a Pune office?\u201d")
    assert started.user == OWNER
    await whatsapp.press(OWNER, "Start", "/start_meeting 1")
    await whatsapp.said("Meeting request 1 was already started as meeting m-")
    assert count(tmp_path, "SELECT COUNT(*) FROM meetings") == 1
