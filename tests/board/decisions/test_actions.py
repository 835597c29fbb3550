"""Decisions remembered (issue 13): the meeting record in chat sessions, /actions, /done, sabha actions."""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from board.app import Board
from board.envelope import Envelope
from board.llm.base import LLMRequest
from board.room.meeting import MeetingSettings
from bot.cli import meetings as meeting_cli
from tests.support.board import board_with, decision_record, last_user, structured_answer
from tests.support.fakes.scripted_model import ScriptedModel, Step, say

pytestmark = [pytest.mark.backends, pytest.mark.usefixtures("boards_on_backend")]

SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
DECISION = json.dumps(decision_record(
    "Pilot Germany for one quarter before any wider EU launch", "Smallest bet that tests demand",
    [("Model EU VAT registration costs", "finance"), ("Shortlist three German launch partners", "strategy"),
     ("Draft the German landing page", "content")],
    dissent=[{"who": "critic", "why": "EU VAT registration costs are unmodelled"}]))
OWNER = dict(channel="telegram", sender="1", chat_id="1", is_owner=True)


def answer(request: LLMRequest) -> Step:
    role, text = request.persona.role, last_user(request)
    stance = {"position": "conditional", "confidence": 0.5, "assumption": "it pays"}
    structured = structured_answer(request, SPECIALISTS, stance=stance, decide=lambda: DECISION)
    if structured is not None:
        return structured
    if "draft decision" in text:
        return say("NO OBJECTION")
    if text.startswith("Board meeting on"):
        position = "oppose" if role == "critic" else "conditional"
        why = "EU VAT registration costs are unmodelled." if role == "critic" else "Fine by me."
        return say(f"{why}\nSTANCE: " + json.dumps({"position": position, "confidence": 0.6,
                                                   "assumption": "VAT costs matter"}))
    return say(f"{role} answers: {text[-60:]}")


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel(default=answer)


@pytest.fixture
async def board(workspace: Path, data_dir: Path, model: ScriptedModel) -> AsyncIterator[Board]:
    """A board whose meetings give each member one turn."""
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1))
    yield board
    await board.close()


async def test_after_a_meeting_the_chairs_next_prompt_and_each_participants_session_hold_the_decision(
    board: Board, model: ScriptedModel
) -> None:
    started = await board.handle(Envelope(text="/meeting Should we expand to Europe?", **OWNER))
    assert "Convening the board" in started.text
    await board.parts.room.drain(10)
    await board.handle(Envelope(text="What did we decide about Europe?", **OWNER))
    turn = model.requests_for("general", purpose="turn")[-1].request
    prompt = "\n".join(m.content for m in turn.messages)
    assert "Pilot Germany for one quarter" in prompt
    assert "critic: EU VAT registration costs are unmodelled" in prompt
    assert "Model EU VAT registration costs (owner: finance)" in prompt
    assert turn.messages[-1].content == "What did we decide about Europe?"
    # every participant's own session has it too
    await board.handle(Envelope(text="@finance what is my task?", **OWNER))
    finance = model.requests_for("finance", purpose="turn")[-1].request
    assert any("Pilot Germany for one quarter" in m.content for m in finance.messages)


async def test_actions_lists_open_items_with_owner_and_age_and_done_closes_one(
    board: Board, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = await board.handle(Envelope(text="/actions", **OWNER))
    assert "No open action items" in empty.text
    await board.parts.room.hold("Should we expand to Europe?")
    await board.parts.room.hold("Pricing for 2027")
    listed = await board.handle(Envelope(text="/actions", **OWNER))
    lines = listed.text.splitlines()
    assert lines[0].startswith("Open action items (6)")
    assert "#1 Model EU VAT registration costs (Finance owes it) · 0m old" in lines[1]
    assert "Should we expand to Europe?" in lines[1] and "Pricing for 2027" in lines[-1]
    closed = await board.handle(Envelope(text="/done 1", **OWNER))
    assert closed.text.startswith("Done: #1 Model EU VAT registration costs")
    again = await board.handle(Envelope(text="/done 1", **OWNER))
    assert "No open action item #1" in again.text
    assert "#1 " not in (await board.handle(Envelope(text="/actions", **OWNER))).text
    assert "/done <n>" in (await board.handle(Envelope(text="/done", **OWNER))).text
    # someone else's chat sees none of these (the meetings were not started there)
    stranger = await board.handle(Envelope(text="/actions", channel="telegram", sender="2", chat_id="2"))
    assert "No open action items" in stranger.text
    # sabha actions / sabha actions done N
    assert await meeting_cli.cmd_actions(board.parts, argparse.Namespace(action=[], all=False)) == 0
    out = capsys.readouterr().out
    assert "Open action items (5)" in out and "#2 Shortlist three German launch partners" in out
    assert await meeting_cli.cmd_actions(board.parts, argparse.Namespace(action=["done", "2"], all=False)) == 0
    assert "Done: #2" in capsys.readouterr().out
    assert await meeting_cli.cmd_actions(board.parts, argparse.Namespace(action=["done", "2"], all=False)) == 2
    assert await meeting_cli.cmd_actions(board.parts, argparse.Namespace(action=[], all=True)) == 0
    assert "[done]" in capsys.readouterr().out
