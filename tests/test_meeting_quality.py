"""Board quality (issue 13): the scoreboard, stances, dissent integrity, conformity, memory in the room."""

from __future__ import annotations

import json
from pathlib import Path

from board.llm.base import LLMRequest
from board.room.meeting import MeetingEvent, MeetingSettings
from board.service import Board
from tests.board_support import board_with, framing, last_user, schema_of, valid_decision
from tests.fakes.scripted_model import ScriptedModel, Step, call, say

SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
OWNERS = ["general", *SPECIALISTS]


def round_of(request: LLMRequest) -> int:
    text = last_user(request)
    return int(text.split("Round ", 1)[1].split(" ", 1)[0]) if "Round " in text else 0


async def hold(board: Board, topic: str = "Expand to Europe?", **kwargs: object) -> tuple:  # type: ignore[type-arg]
    events: list[MeetingEvent] = []

    async def collect(event: MeetingEvent) -> None:
        events.append(event)

    result = await board.room.hold(topic, extra_subscribers=[collect], **kwargs)
    return result, events


async def test_scoreboard_tools_answer_ok_and_their_events_reach_subscribers(workspace: Path, data_dir: Path) -> None:
    disagree = {"target_participant_name": "Finance", "topic": "VAT is ignored",
                "reasoning": "No model of EU VAT", "severity": 4}
    agree = {"participants": ["finance", "strategy"], "topic": "Start with one country", "strength": 4}

    def answer(request: LLMRequest) -> Step:
        role, schema = request.persona.role, schema_of(request)
        if schema is not None:
            if "questions" in schema.get("properties", {}):
                return say(framing(SPECIALISTS))
            if "action_items" in schema.get("properties", {}):
                return say(valid_decision(OWNERS, dissent=[{"who": "critic", "why": "No model of EU VAT"}]))
            return say(json.dumps({"position": "support", "confidence": 0.7, "assumption": "demand exists"}))
        if request.messages[-1].role == "tool":
            return say(f"{role}: done.")
        if round_of(request) == 2 and role == "critic":
            return call("log_disagreement", disagree)
        if round_of(request) == 2 and role == "finance":
            return call("log_consensus", agree)
        return say(f"{role}: my view.")

    model = ScriptedModel(default=answer)
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=2))
    try:
        result, events = await hold(board)
        answers = [json.loads(r.request.messages[-1].content) for r in model.requests
                   if r.request.messages and r.request.messages[-1].role == "tool"]
        assert len(answers) == 2 and all(a["ok"] is True for a in answers)
        assert {a["result"]["logged"] for a in answers} == {"disagreement", "consensus"}
        # one call each: the model was not told to retry, so nothing is stored twice
        rows = await board.db.fetchall("SELECT kind FROM meeting_events WHERE meeting_id = ? AND kind != 'decision'",
                                       (result.meeting_id,))
        assert sorted(r["kind"] for r in rows) == ["consensus", "disagreement"]
        shown = {e.kind: e for e in events if e.kind in ("disagreement", "consensus")}
        assert shown["disagreement"].role == "critic" and shown["disagreement"].data["target"] == "finance"
        assert shown["disagreement"].data["severity"] == 4 and "VAT" in shown["disagreement"].text
        assert shown["consensus"].role == "finance"
        assert shown["consensus"].data["participants"] == ["finance", "strategy"]
    finally:
        await board.close()
