"""Helpers for the due-date and reminder suites: a board on the scripted model and a fake clock whose
meetings decide three action items with the due dates a test gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.clock import FakeClock
from board.envelope import Envelope
from board.llm.base import LLMRequest
from board.roles import RosterSpec
from board.room.meeting import MeetingSettings
from tests.support.board import decision_record, last_user, open_board, structured_answer
from tests.support.fakes.scripted_model import ScriptedModel, Step, say
from tests.support.llm import FAST_RETRY
from tests.support.schedule import START

SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
#: a forum topic of the owner's Telegram group
TOPIC = dict(channel="telegram", sender="1", chat_id="-100777", thread_id=42, is_owner=True, is_group=True)
#: a stranger in another chat
STRANGER = dict(channel="telegram", sender="9", chat_id="9", is_owner=False)
TASKS = ("Model EU VAT registration costs", "Shortlist three German launch partners", "Draft the German landing page")


def scripted(dues: tuple[str | None, ...]) -> ScriptedModel:
    """A model whose meetings decide :data:`TASKS` due at ``dues`` (as written)."""
    record = decision_record("Pilot Germany for one quarter", "Smallest bet that tests demand",
                             [(task, owner) for task, owner in zip(TASKS, ("finance", "strategy", "content"),
                                                                    strict=True)])
    for item, due in zip(record["action_items"], dues, strict=True):
        if due is not None:
            item["due"] = due
    decision = json.dumps(record)

    def answer(request: LLMRequest) -> Step:
        stance = {"position": "support", "confidence": 0.6, "assumption": "it pays"}
        structured = structured_answer(request, SPECIALISTS, stance=stance, decide=lambda: decision)
        if structured is not None:
            return structured
        if "draft decision" in last_user(request):
            return say("NO OBJECTION")
        return say("Fine by me.\nSTANCE: " + json.dumps(stance))

    return ScriptedModel(default=answer)


async def board_on(workspace: Path, data_dir: Path, model: ScriptedModel, clock: FakeClock | None = None,
                   **settings: Any) -> Board:
    """An open board on ``model`` whose meetings give each member one turn, on ``clock``."""
    board_settings = BoardSettings(
        workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
        agent=AgentSettings(default_model=f"{model.name}:main", retry=FAST_RETRY),
        meetings=MeetingSettings(max_turns_per_agent=1), **settings)
    return await open_board(board_settings, model.registry(), clock=clock or FakeClock(START))


async def say_to(board: Board, text: str, place: dict[str, Any] | None = None) -> str:
    """What the board answers ``text`` said in ``place`` (default: the owner's forum topic)."""
    reply = await board.handle(Envelope(text=text, **(place or TOPIC)))
    return reply.text


async def hold_meeting(board: Board) -> list[int]:
    """Run a meeting in the topic to its decision; the ids of its action items."""
    await say_to(board, "/meeting Should we expand to Europe?")
    await board.parts.room.drain(30)
    return [row.id for row in await board.parts.room.store.actions(limit=10)]
