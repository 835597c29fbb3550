"""Consent in Telegram through the real channel (python-telegram-bot on the fake Bot API, the real intake, the
scheduled-work runner that posts the question): the owner's question arrives in the very topic where the
advisor waits, with Allow once / Always allow tool / Deny; a stranger's and a member's presses are refused and
change nothing; the owner's Allow pressed in that same topic runs the call at once, although the turn that waits
for it holds the topic's lane (the intake answers consent beside the lane: without that the press would wait
behind the turn until the timeout and the call would never run)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from board.agent.outside import ConsentKind
from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.roles import RosterSpec
from board.tools.consent import ConsentSettings
from bot.app import all_migrations
from bot.scheduled import ScheduledWorkService
from tests.support.consent import WriteTool, answer_with_result
from tests.support.fakes.scripted_model import ScriptedModel, call
from tests.support.fakes.telegram_api import FakeTelegramAPI, SentMessage
from tests.support.llm import FAST_RETRY
from tests.support.telegram import FORUM, FRIEND, OWNER, STRANGER, running, tg_settings

#: Far longer than the test needs: a press that waited behind the turn would find the call timed out.
TIMEOUT_S = 90.0


@pytest.fixture
async def board(workspace: Path, data_dir: Path) -> AsyncIterator[tuple[Board, ScriptedModel]]:
    model = ScriptedModel()
    settings = BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
                             agent=AgentSettings(default_model="scripted:main", retry=FAST_RETRY),
                             consent=ConsentSettings(timeout_s=TIMEOUT_S, poll_s=0.5))
    async with await Board.open(settings, model.registry(), migrations=all_migrations()) as opened:
        yield opened, model


async def said(fake: FakeTelegramAPI, fragment: str, count: int = 1, timeout: float = 60.0) -> list[SentMessage]:
    """Wait until ``count`` sent messages contain ``fragment``; those messages."""
    await fake.wait_until(lambda: sum(fragment in m.text for m in fake.sent_messages) >= count,
                          f"{count}x {fragment!r}", timeout)
    return [m for m in fake.sent_messages if fragment in m.text]


async def test_the_owners_allow_in_the_waiting_topic_runs_the_call_members_and_strangers_change_nothing(
    board: tuple[Board, ScriptedModel], fake: FakeTelegramAPI, tmp_path: Path
) -> None:
    opened, model = board
    tool = WriteTool(opened, tmp_path)
    opened.parts.tools.register(tool.tool())
    model.script(call("files__write_file", {"path": "notes.txt", "content": "hello"}), answer_with_result)
    async with running(opened, tg_settings(fake)) as channel:
        service = ScheduledWorkService(opened, [channel], recheck_s=0.5)
        service.start()
        try:
            fake.push_text(FORUM, OWNER, "Please write hello into notes.txt")
            [question] = await said(fake, "wants to run")
            assert question.chat_id == FORUM
            assert [label for label, _ in fake.buttons_of(FORUM, question.message_id)] == [
                "Allow once", "Always allow tool", "Deny"]
            assert '"content": "hello"' in question.text and "#1" in question.text

            fake.push_press(FORUM, question.message_id, STRANGER, "Allow once")
            await fake.wait_until(lambda: len(fake.answered_presses) == 1, "the stranger's press answered")
            assert "only the board's members" in fake.answered_presses[0]["text"]
            fake.push_press(FORUM, question.message_id, FRIEND, "Allow once")
            await said(fake, "/allow is for the board's owner only")
            assert "Only the board's owner can /allow" in fake.answered_presses[1]["text"]
            row = await opened.parts.consent.store.number(1)
            assert row is not None and row.answer is None and not (tmp_path / "notes.txt").exists()

            fake.push_press(FORUM, question.message_id, OWNER, "Allow once")
            await said(fake, "Allowed once: files.write_file (#1)")
            [answer] = await said(fake, "RESULT")
            assert "wrote notes.txt" in answer.text
        finally:
            await service.stop()
    assert (tmp_path / "notes.txt").read_text() == "hello"
    row = await opened.parts.consent.store.number(1)
    assert row is not None and row.answer == "allowed_once" and row.answered_by == f"telegram:{OWNER}"
    assert row.finished_at is not None and row.ok
    assert [v.kind for v in tool.verdicts] == [ConsentKind.ALLOWED_ONCE]
