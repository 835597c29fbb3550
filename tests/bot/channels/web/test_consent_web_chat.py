"""Consent in the web chat (the real channel on 127.0.0.1, its intake, the scheduled-work runner that posts the
question, a page following the conversation over SSE): the owner's question shows with its Allow once / Always
allow tool / Deny buttons in the very chat where the advisor waits, and the owner's press (what the page sends:
the button's command) runs the call at once, although the turn that waits for it holds that chat's lane."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession

from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.roles import RosterSpec
from board.tools.consent import ConsentSettings
from bot.app import all_migrations
from bot.scheduled import ScheduledWorkService
from tests.support.consent import WriteTool, answer_with_result
from tests.support.fakes.scripted_model import ScriptedModel, call
from tests.support.llm import FAST_RETRY
from tests.support.web_chat import ChatBrowser, post_message, served_chat


@pytest.fixture
async def board(workspace: Path, data_dir: Path) -> AsyncIterator[tuple[Board, ScriptedModel]]:
    model = ScriptedModel()
    settings = BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
                             agent=AgentSettings(default_model="scripted:main", retry=FAST_RETRY),
                             consent=ConsentSettings(timeout_s=90.0, poll_s=0.5))
    async with await Board.open(settings, model.registry(), migrations=all_migrations()) as opened:
        yield opened, model


async def test_the_owners_press_in_the_web_chat_runs_the_call(
        board: tuple[Board, ScriptedModel], tmp_path: Path) -> None:
    opened, model = board
    tool = WriteTool(opened, tmp_path)
    opened.parts.tools.register(tool.tool())
    model.script(call("files__write_file", {"path": "web.txt", "content": "from the page"}), answer_with_result)
    async with served_chat(opened) as chat, ClientSession() as http:
        assert chat.channel is not None
        service = ScheduledWorkService(opened, [chat.channel], recheck_s=0.5)
        service.start()
        page = ChatBrowser(lambda: chat.url, "research").start()
        try:
            status, _ = await post_message(http, chat.url, "research", "please write the file")
            assert status == 202
            await page.wait(lambda b: any("wants to run files.write_file" in r for r in b.replies()), "the question")
            entry = next(e for e in page.entries.values() if "wants to run" in e["text"])
            assert entry["buttons"] == [{"label": "Allow once", "command": "/allow 1"},
                                        {"label": "Always allow tool", "command": "/allow 1 always"},
                                        {"label": "Deny", "command": "/deny 1"}]
            status, _ = await post_message(http, chat.url, "research", "/allow 1", f"button-{entry['seq']}-0")
            assert status == 202
            await page.wait(lambda b: any("RESULT" in r for r in b.replies()), "the answer after the write")
            assert any("Allowed once: files.write_file (#1)" in r for r in page.replies())
        finally:
            await page.close()
            await service.stop()
    assert (tmp_path / "web.txt").read_text() == "from the page"
    row = await opened.parts.consent.store.number(1)
    assert row is not None and row.answer == "allowed_once" and row.finished_at is not None
