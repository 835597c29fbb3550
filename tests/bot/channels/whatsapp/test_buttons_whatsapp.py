"""Decision buttons on WhatsApp through a real ``sabha run`` (the offline model, the fake Graph API):
the decision comes with interactive reply buttons Ratify / Veto / Revisit; the owner's button reply
ratifies it, a member's is refused, a second press is told it is already done; a template's
quick reply carrying a command works the same; Revisit by button asks for the reason."""

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
        """``user`` taps the reply button ``title`` (whose id is ``command``)."""
        await self.send(notification([message(user, "interactive", interactive={
            "type": "button_reply", "button_reply": {"id": command, "title": title}},
            context={"from": "15550009999", "id": "wamid.decision"})]))

    async def said(self, fragment: str, count: int = 1, timeout: float = 30.0) -> list[SentText]:
        await eventually(lambda: sum(fragment in s.body for s in self.graph.sent) >= count, repr(fragment), timeout)
        return [s for s in self.graph.sent if fragment in s.body]


@pytest.fixture
async def whatsapp(tmp_path: Path, fake_graph: FakeGraphAPI) -> AsyncIterator[WhatsApp]:
    copy_default_workspace(tmp_path / "workspace")
    config = tmp_path / "sabha.yaml"
    config.write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
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


def ruling(tmp_path: Path, meeting_id: str) -> tuple[str | None, str | None]:
    with sqlite3.connect(tmp_path / "sessions" / "sabha.db") as db:
        row = db.execute("SELECT ratification, ruled_by FROM meetings WHERE id = ?", (meeting_id,)).fetchone()
    return row[0], row[1]


async def decision(wa: WhatsApp, topic: str, count: int = 1) -> str:
    """Call a meeting; the meeting id its decision's buttons name."""
    await wa.send(text_notification(OWNER, f"/meeting {topic}"))
    await eventually(lambda: sum(bool(s.buttons) for s in wa.graph.sent) >= count, "the decision's buttons", 60)
    carrier = [s for s in wa.graph.sent if s.buttons][count - 1]
    assert [t for t, _ in carrier.buttons] == ["Ratify", "Veto", "Revisit"]
    assert carrier.payload["type"] == "interactive" and len(carrier.body) <= 1024
    return carrier.buttons[0][1].split()[1]


async def test_the_owners_button_reply_ratifies_and_the_others_change_nothing(
    whatsapp: WhatsApp, tmp_path: Path
) -> None:
    meeting_id = await decision(whatsapp, "Should we hire a growth lead?")
    await whatsapp.press(FRIEND, "Ratify", f"/ratify {meeting_id}")
    [refused] = await whatsapp.said("/ratify is for the board's owner only")
    assert refused.user == FRIEND and ruling(tmp_path, meeting_id) == (None, None)
    await whatsapp.press(OWNER, "Ratify", f"/ratify {meeting_id}")
    [done] = await whatsapp.said(f"Decision {meeting_id}")
    assert "ratified by" in done.body and done.user == OWNER
    assert ruling(tmp_path, meeting_id) == ("ratified", f"whatsapp:{OWNER}")
    await whatsapp.press(OWNER, "Ratify", f"/ratify {meeting_id}")
    [again] = await whatsapp.said("is already ratified")
    assert "nothing changed" in again.body


async def test_a_template_quick_reply_with_a_command_and_revisit_by_button_asking_for_the_reason(
    whatsapp: WhatsApp, tmp_path: Path
) -> None:
    meeting_id = await decision(whatsapp, "Should we drop the free plan?")
    await whatsapp.press(OWNER, "Revisit", f"/revisit {meeting_id}")
    [asked] = await whatsapp.said(f"reply /revisit {meeting_id} <reason>")
    assert asked.user == OWNER and ruling(tmp_path, meeting_id) == (None, None)
    quick_reply = {"text": "Veto", "payload": f"/veto {meeting_id}"}  # a template's quick-reply button
    await whatsapp.send(notification([message(OWNER, "button", button=quick_reply,
                                              context={"from": "15550009999", "id": "wamid.T1"})]))
    [vetoed] = await whatsapp.said(f"Decision {meeting_id}")
    assert "vetoed by" in vetoed.body and "open action item(s)" in vetoed.body
    assert ruling(tmp_path, meeting_id) == ("vetoed", f"whatsapp:{OWNER}")
