"""A message resumed after a crash is written to its transcript once and asked once.

The intake hands the same envelope (same channel and message id) to ``Board.handle``
again when a crash cut its first turn short after the user entry was written.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from board.envelope import Envelope
from board.llm.base import LLMRequest
from board.storage.url import StateURL
from tests.support.fakes.scripted_model import ScriptedModel, Step, say
from tests.support.llm import scripted_board, session_entries

pytestmark = pytest.mark.backends

QUESTION = "What is our runway?"


def resumed(message_id: str = "42", text: str = QUESTION) -> Envelope:
    return Envelope(channel="console", text=text, sender="owner", message_id=message_id, is_owner=True)


async def crash_mid_turn(workspace: Path, data_dir: Path, state: StateURL | None, envelope: Envelope) -> None:
    """Start a turn, and cut it short (as a crash would) while the model is thinking."""
    thinking = asyncio.Event()

    def slow(request: LLMRequest) -> Step:
        thinking.set()
        return say("too late", latency=30)

    board = await scripted_board(workspace, data_dir, ScriptedModel().script(slow), state=state)
    try:
        turn = asyncio.create_task(board.handle(envelope))
        await asyncio.wait_for(thinking.wait(), 10)
        turn.cancel()
        await asyncio.gather(turn, return_exceptions=True)
    finally:
        await board.close()


async def test_a_resumed_message_is_in_the_transcript_once(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    await crash_mid_turn(workspace, data_dir, state_url, resumed())
    model = ScriptedModel().script(say("About 14 months."))
    board = await scripted_board(workspace, data_dir, model, state=state_url)  # the restart
    try:
        reply = await board.handle(resumed())
        assert reply.text == "About 14 months."
        entries = await session_entries(board, "main")
        users = [e for e in entries if e.get("role") == "user"]
        assert [(u["text"], u["message_id"]) for u in users] == [(QUESTION, "42")]
        asked = [m.content for m in model.requests[0].request.messages if m.role == "user"]
        assert asked == [QUESTION]
        # The conversation goes on normally after the resumed turn.
        await board.handle(resumed("43", "And after the raise?"))
        asked = [m.content for m in model.requests[-1].request.messages]
        assert asked == [QUESTION, "About 14 months.", "And after the raise?"]
    finally:
        await board.close()


async def test_a_new_message_with_the_same_text_is_still_written(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    board = await scripted_board(workspace, data_dir, model, state=state_url)
    try:
        await board.handle(resumed("1", "ping"))
        await board.handle(resumed("2", "ping"))
        await board.handle(Envelope(channel="other", text="ping", sender="owner", message_id="2", is_owner=True))
        users = [e for e in await session_entries(board, "main") if e.get("role") == "user"]
        assert [(u["channel"], u["message_id"]) for u in users] == [("console", "1"), ("console", "2"), ("other", "2")]
    finally:
        await board.close()
