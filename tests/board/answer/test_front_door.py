"""The front door (issue 37): one message from an unlinked WhatsApp sender, through the real intake
(an in-process daemon with the real WhatsApp channel against the fake Graph API, a signed webhook),
is cleaned once, its sender looked up once and the daily budget checked once on its way to the answer.
The message carries a document with a caption, so it takes the whole path: admission, the media read
after the gate, the turn.

Lookups and budget checks are counted where they happen: the state db's statements (sqlite3's trace
callback on the board's connection). Cleanings are counted by a spy on :func:`board.envelope.cleaned`
in every module that holds it by name.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession

import board.envelope
from board.app import Board, BoardSettings
from board.envelope import Envelope
from board.spending.budget import BudgetSettings
from bot.channels.whatsapp.channel import WhatsAppChannel
from bot.config.load import load_config
from bot.daemon import Daemon, channel_parts
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.telegram import RecordingModel, eventually, last_user_text, use_model
from tests.support.whatsapp import FAST, FRIEND, message, notification, post, wa_settings

LOOKUP = "FROM people_identities WHERE identity = "  # People.identify: the sender's person, if linked
DAILY = "FROM llm_calls WHERE ts >= "  # Budget.check: what the whole board spent today


@pytest.fixture
def settings(settings: BoardSettings) -> BoardSettings:
    """The default test board with a daily budget (so a check of it is a statement one can count)."""
    return replace(settings, budget=BudgetSettings(daily_usd=100.0))


@pytest.fixture
def cleanings(monkeypatch: pytest.MonkeyPatch) -> list[Envelope]:
    """Every envelope :func:`board.envelope.cleaned` is called with, wherever it was imported."""
    real = board.envelope.cleaned
    seen: list[Envelope] = []

    def spy(envelope: Envelope) -> Envelope:
        seen.append(envelope)
        return real(envelope)

    for module in list(sys.modules.values()):
        if module is not None and getattr(module, "cleaned", None) is real:
            monkeypatch.setattr(module, "cleaned", spy)
    return seen


@pytest.fixture
async def statements(board: Board) -> AsyncIterator[list[str]]:
    """Every SQL statement the board's state db connection runs from now on."""
    seen: list[str] = []
    conn: Any = board.parts.db
    await conn.conn.set_trace_callback(seen.append)
    yield seen
    await conn.conn.set_trace_callback(None)


async def test_one_message_from_an_unlinked_sender_is_cleaned_looked_up_and_budget_checked_once(
    tmp_path: Path, board: Board, fake_graph: FakeGraphAPI, cleanings: list[Envelope], statements: list[str]
) -> None:
    model = use_model(board, RecordingModel(answer=lambda r: f"echo: {last_user_text(r)}"))
    config = tmp_path / "sabha.yaml"
    config.write_text(f"workspace: {board.settings.workspace}\ndata_dir: {board.settings.data_dir}\n"
                      "server:\n  host: 127.0.0.1\n  port: 0\n", encoding="utf-8")
    daemon = Daemon(load_config(config, env={}), board=board, channels=[], install_signals=False)
    channel = WhatsAppChannel(channel_parts(board), wa_settings(fake_graph), hub=daemon.hub, pacing=FAST)
    daemon.channels = [channel]
    task = asyncio.create_task(daemon.run())
    try:
        await asyncio.wait_for(daemon.ready.wait(), 300)
        url = f"http://127.0.0.1:{daemon.port}{channel.settings.webhook_path}"
        del cleanings[:], statements[:]  # from the webhook on
        data = b"Board notes\nQ3 revenue was 42 lakh.\n"
        media_id = fake_graph.add_media(data, "text/plain")
        document = {"id": media_id, "mime_type": "text/plain", "filename": "q3.txt", "caption": "What is our runway?",
                    "sha256": base64.b64encode(hashlib.sha256(data).digest()).decode()}
        async with ClientSession() as http:
            code, _ = await post(http, url, notification([message(FRIEND, "document", document=document)]))
        assert code == 200
        await eventually(lambda: len(fake_graph.sent) == 1, "the answer")
        assert model.calls, "the model answered"
    finally:
        daemon.request_stop()
        await asyncio.wait_for(task, 30)
    counts = {"identity lookups": sum(LOOKUP in s for s in statements),
              "cleanings": len(cleanings),
              "daily-budget checks": sum(DAILY in s and "sender" not in s and "scope" not in s for s in statements)}
    print("front door:", counts)
    assert counts == {"identity lookups": 1, "cleanings": 1, "daily-budget checks": 1}
