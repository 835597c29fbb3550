"""Consultation through the real runner and the scripted model: depth, cycles, timeouts,
duplicates, the consulted agent's own soul, and what gets recorded where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.app import Board
from board.envelope import Envelope
from board.llm.base import LLMRequest
from board.room.consult import ConsultSettings
from tests.support.board import board_with, last_user
from tests.support.fakes.scripted_model import ScriptedModel, Step, call, say
from tests.support.llm import session_entries

pytestmark = [pytest.mark.backends, pytest.mark.usefixtures("boards_on_backend")]

SPECIALISTS = ["general", "research", "content", "finance", "strategy", "critic"]


def ask(text: str) -> Envelope:
    return Envelope(channel="console", text=text, sender="owner", sender_name="Owner", is_owner=True)


def tool_results(request: LLMRequest) -> list[dict]:
    return [json.loads(m.content) for m in request.messages if m.role == "tool"]


async def consultations(board: Board) -> list[dict]:
    rows = await board.parts.db.fetchall("SELECT * FROM consultations ORDER BY id")
    return [dict(r) for r in rows]


def always_consult(request: LLMRequest) -> Step:
    """Every agent consults the next colleague in the list until told no; then it answers."""
    role = request.persona.role
    if request.messages[-1].role == "tool":
        return say(f"{role} answers with what it has: {request.messages[-1].content[:200]}")
    if any(t.name == "consult" for t in request.tools):
        target = SPECIALISTS[(SPECIALISTS.index(role) + 1) % len(SPECIALISTS)]
        return call("consult", {"role": target, "question": f"What does {target} think?"})
    return say(f"{role}: no tools")


async def test_always_consulting_agents_stop_at_depth_two(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=always_consult)
    board = await board_with(workspace, data_dir, model)
    try:
        reply = await board.handle(ask("Should we raise prices?"))
        rows = await consultations(board)
        assert [(r["from_role"], r["to_role"], r["depth"], r["outcome"]) for r in rows] == [
            ("content", "finance", 3, "refused"),
            ("research", "content", 2, "ok"),
            ("general", "research", 1, "ok"),
        ]
        # The refusal reached the agent that asked, telling it to answer with what it has.
        refused = tool_results(model.requests_for("content")[-1].request)[0]
        assert refused["ok"] is False and refused["result"]["code"] == "depth_limit"
        assert "Answer with what you have" in refused["error"]
        assert not model.requests_for("finance")  # depth 3 was never executed
        assert reply.text.startswith("general answers with what it has")
        assert '"from": "research"' in reply.text
    finally:
        await board.close()


async def test_cycle_and_self_and_unknown_role_are_refused(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(call("consult", {"role": "finance", "question": "Runway?"}), say("general done"), role="general")
    model.script(call("consult", {"role": "general", "question": "Back to you?"}),
                 call("consult", {"role": "finance", "question": "Myself?"}),
                 call("consult", {"role": "wizard", "question": "Magic?"}),
                 say("finance done"), role="finance")
    board = await board_with(workspace, data_dir, model)
    try:
        await board.handle(ask("Runway?"))
        results = [tool_results(r.request)[-1] for r in model.requests_for("finance")[1:]]
        codes = [r["result"]["code"] for r in results]
        assert codes == ["cycle", "self", "unknown_role"]
        assert "general -> finance -> general" in results[0]["error"]
        assert "research" in results[2]["error"] and "critic" in results[2]["error"]
    finally:
        await board.close()


async def test_timeout_returns_a_structured_result_and_the_turn_goes_on(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(call("consult", {"role": "research", "question": "Market size?"}),
                 lambda req: say("answered without research: " + req.messages[-1].content), role="general")
    model.script(say("too late", latency=2.0), role="research")
    board = await board_with(workspace, data_dir, model, consultation=ConsultSettings(timeout_s=0.2))
    try:
        reply = await board.handle(ask("How big is the market?"))
        result = json.loads(reply.text.removeprefix("answered without research: "))
        assert result["ok"] is False and result["result"]["timeout"] is True
        assert "did not answer within 0.2 s" in result["error"]
        assert (await consultations(board))[0]["outcome"] == "timeout"
    finally:
        await board.close()


async def test_same_question_twice_returns_the_first_answer(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(call("consult", {"role": "finance", "question": "What is our runway?"}),
                 call("consult", {"role": "finance", "question": "what is our runway"}),
                 say("done"), role="general")
    model.script(say("14 months.\nConfidence: 0.7"), role="finance")
    board = await board_with(workspace, data_dir, model)
    try:
        await board.handle(ask("Runway?"))
        assert len(model.requests_for("finance")) == 1
        second = tool_results(model.requests_for("general")[2].request)[-1]
        assert second["ok"] is True and second["result"]["duplicate"] is True
        assert second["result"]["response"] == "14 months." and second["result"]["confidence"] == 0.7
    finally:
        await board.close()


async def test_consulted_agent_answers_in_its_own_soul_outside_its_chat(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(call("consult", {"role": "critic", "question": "What could go wrong?", "context": "EU launch"}),
                 say("general: noted"), role="general")
    model.script(say("Regulators.\nSuggest consult: research"), role="critic")
    board = await board_with(workspace, data_dir, model)
    try:
        await board.handle(ask("Launch in the EU?"))
        critic_request = model.requests_for("critic")[0].request
        assert "You are the board's pre-mortem" in critic_request.system[0].text
        assert "Question: What could go wrong?" in last_user(critic_request)
        assert "Context: EU launch" in last_user(critic_request)
        result = tool_results(model.requests_for("general")[1].request)[0]["result"]
        assert result == {"from": "critic", "response": "Regulators.", "suggest_consult": "research"}
        # Recorded in the caller's transcript, not in the critic's own chat.
        entries = await session_entries(board, "main")
        consult = next(e for e in entries if e["type"] == "consult")
        assert (consult["from"], consult["to"], consult["depth"], consult["answer"]) == \
            ("general", "critic", 1, "Regulators.")
        assert await board.parts.sessions.current("board:critic") is None
        row = (await consultations(board))[0]
        assert json.loads(row["chain"]) == ["general"] and row["outcome"] == "ok"
    finally:
        await board.close()


async def test_disabled_consultation_offers_no_consult_tool(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    board = await board_with(workspace, data_dir, model, consultation=ConsultSettings(enabled=False))
    try:
        await board.handle(ask("@finance hi"))
        assert "consult" not in [t.name for t in model.requests_for("finance")[0].request.tools]
    finally:
        await board.close()


async def test_allow_list_limits_who_may_be_consulted(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(call("consult", {"role": "critic", "question": "Risks?"}), say("ok"), role="content")
    board = await board_with(workspace, data_dir, model,
                             consultation=ConsultSettings(allow={"content": ("research",)}))
    try:
        await board.handle(ask("@content tagline?"))
        result = tool_results(model.requests_for("content")[1].request)[0]
        assert result["result"]["code"] == "not_allowed" and "research" in result["error"]
    finally:
        await board.close()


async def test_a_consulted_agent_whose_model_fails_is_reported_not_quoted(workspace: Path, data_dir: Path) -> None:
    from tests.support.fakes.scripted_model import fail

    model = ScriptedModel()
    model.script(call("consult", {"role": "research", "question": "Market size?"}), say("general: noted"),
                 role="general")
    model.script(fail("auth", retryable=False, status=401), role="research")
    board = await board_with(workspace, data_dir, model)
    try:
        await board.handle(ask("How big is the market?"))
        result = tool_results(model.requests_for("general")[1].request)[0]
        assert result["ok"] is False and result["result"]["degraded"] is True
        assert "could not answer right now" in result["error"]
        assert "setup problem" not in json.dumps(result)  # the apology is not passed off as advice
        assert (await consultations(board))[0]["outcome"] == "degraded"
    finally:
        await board.close()
