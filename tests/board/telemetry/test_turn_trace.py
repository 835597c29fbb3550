"""A chat turn's trace when the advisor consults a colleague: through the board's front door
(``board.handle``), tracing started as ``sabha run`` starts it, the scripted model, the local OTLP receiver.
answer -> admission, turn -> chat -> execute_tool consult -> consultation -> the colleague's chat; the ledger rows
of both advisors carry the turn's trace id."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from board.envelope import Envelope
from board.llm.base import LLMRequest
from board.telemetry.exporting import TraceExport, start_tracing
from board.telemetry.spans import span
from tests.support.board import board_with
from tests.support.fakes.otlp_receiver import OtlpReceiver, SpanNode, render
from tests.support.fakes.scripted_model import ScriptedModel, Step, call, say

pytestmark = [pytest.mark.backends, pytest.mark.usefixtures("boards_on_backend")]

QUESTION = "What should the Lisbon pilot cost?"


def consult_finance(request: LLMRequest) -> Step:
    """The chair consults finance once; finance answers; the chair answers with it."""
    if request.persona.role == "finance":
        return say("Finance: about 40k.")
    if request.messages[-1].role == "tool":
        return say("The chair: finance says about 40k.")
    return call("consult", {"role": "finance", "question": "What would the pilot cost?"})


def names(node: SpanNode) -> list[str]:
    return [c.span.name for c in node.children]


async def test_a_consultation_sits_beneath_the_tool_call_of_the_turn_that_asked(workspace: Path,
                                                                              data_dir: Path) -> None:
    board = await board_with(workspace, data_dir, ScriptedModel(default=consult_finance))
    try:
        async with OtlpReceiver() as receiver:
            tracing = start_tracing(TraceExport(endpoint=receiver.endpoint, service_name="sabha-test"))
            try:
                with span("message", root=True):
                    reply = await board.handle(Envelope(channel="console", text=QUESTION, sender="owner",
                                                        sender_name="Owner", is_owner=True))
            finally:
                await asyncio.to_thread(tracing.stop)
        rows = await board.parts.db.fetchall("SELECT role, trace_id FROM llm_calls WHERE purpose != 'memory'")
    finally:
        await board.close()
    assert "40k" in reply.text
    [message] = [n for n in receiver.trees() if n.span.name == "message"]
    print("\n".join(render(message)))
    [answer] = message.named("answer")
    assert names(answer) == ["admission", "turn"]
    [turn] = answer.named("turn")
    assert turn.span.attributes["sabha.role"] == "general" and turn.span.attributes["gen_ai.operation.name"] == \
        "invoke_agent"
    assert [n.split(" ")[0] for n in names(turn)] == ["chat", "execute_tool", "chat"]
    [tool] = turn.named("execute_tool")
    [consultation] = tool.named("consultation")
    assert consultation.span.attributes["sabha.consulted"] == "finance"
    [asked] = consultation.named("chat ")
    assert asked.span.attributes["sabha.role"] == "finance"
    trace = message.span.trace_id
    assert {s.trace_id for s in message.walk()} == {trace}
    assert {r["role"] for r in rows} == {"general", "finance"} and {r["trace_id"] for r in rows} == {trace}
    values = [str(v) for s in receiver.spans for v in s.attributes.values()]
    assert not any(QUESTION in v or "40k" in v or "pilot cost" in v for v in values)
