"""A meeting's trace as an OTLP/HTTP receiver gets it (issue 44, "Traces"): an in-process daemon with
``telemetry.enabled`` exporting to the local receiver (tests/support/fakes/otlp_receiver.py), the real WhatsApp
channel on the fake Graph API, every role on the scripted model. The owner's ``/meeting`` is one trace (intake,
admission, answer, send); the meeting it starts is another, linked to it: meeting -> framing, three rounds ->
five seats each -> their model calls, the critic's tool call in round 2 beneath its seat; the synthesis and the
challenge. One trace id over the whole meeting, the same on its ledger rows and its log lines; GenAI attributes on
each model call; no prompt text and no secret in any attribute."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path

import pytest
from aiohttp import ClientSession

from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.llm.base import LLMRequest, Usage
from board.llm.pricing import ModelPrice, PriceTable
from board.roles import RosterSpec
from board.room.consult import ConsultSettings
from board.room.meeting import MeetingSettings
from board.storage import StateURL
from bot.app import all_migrations
from bot.channels.whatsapp.channel import WhatsAppChannel
from bot.config.load import load_config
from bot.daemon import Daemon, channel_parts
from tests.support.board import framing, last_user, schema_of, valid_decision
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.otlp_receiver import OtlpReceiver, SpanNode, render
from tests.support.fakes.scripted_model import ScriptedModel, Step, call, say
from tests.support.llm import FAST_RETRY
from tests.support.telegram import eventually
from tests.support.whatsapp import FAST, OWNER, post, text_notification, wa_settings

pytestmark = pytest.mark.backends

SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
TOPIC = "Expand to Europe with the Lisbon pilot?"
STANCE = '{"position": "conditional", "confidence": 0.6, "assumption": "the numbers hold up"}'
#: The critic's tool call's argument: it must never reach a span (arguments go as their size only).
SECRET_REASON = "VAT-unmodelled-7f3a"


def brain(request: LLMRequest) -> Step:
    """The chair frames and decides, each specialist speaks in every round; the critic logs a disagreement in
    round 2 before speaking. Each call reports tokens, 40 of them read from the cache."""
    usage = Usage(input_tokens=60, output_tokens=20, cache_read_tokens=40)
    schema = schema_of(request)
    if schema is not None:
        if "questions" in schema.get("properties", {}):
            return say(framing(SPECIALISTS), usage=usage)
        if "position" in schema.get("properties", {}):
            return say(STANCE, usage=usage)
        return say(valid_decision(["general", *SPECIALISTS]), usage=usage)
    text = last_user(request)
    if "draft decision" in text:
        return say("NO OBJECTION", usage=usage)
    round_no = int(text.split("Round ", 1)[1].split(" ", 1)[0]) if "Round " in text else 0
    role = request.persona.role
    if role == "critic" and round_no == 2 and not any(m.role == "tool" for m in request.messages):
        return replace(call("log_disagreement", {"target_participant_name": "Finance", "topic": "VAT",
                                                 "reasoning": SECRET_REASON, "severity": 3}), usage=usage)
    return say(f"{role} in round {round_no}: my view.\nSTANCE: {STANCE}", usage=usage)


def spans_named(node: SpanNode, prefix: str) -> list[SpanNode]:
    found = [node] if node.span.name.startswith(prefix) else []
    return found + [n for child in node.children for n in spans_named(child, prefix)]


async def open_meeting_board(workspace: Path, data_dir: Path, state: StateURL | None, model: ScriptedModel) -> Board:
    """A board on the test's backend with every migration Sabha has (the daemon's too), every role on ``model``
    (priced, so each call has a cost) and meetings of three rounds."""
    agent = AgentSettings(default_model="scripted:main", retry=FAST_RETRY,
                          prices=PriceTable({"scripted:main": ModelPrice(input=3.0, output=15.0)}))
    settings = BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(), agent=agent,
                             meetings=MeetingSettings(max_turns_per_agent=3), consultation=ConsultSettings(),
                             state=state)
    return await Board.open(settings, model.registry(), migrations=all_migrations())


async def hold_meeting(board: Board, config: Path, graph: FakeGraphAPI) -> None:
    """An in-process daemon on ``board`` with WhatsApp on ``graph``: the owner asks for a meeting; until it ended
    and its decision was posted; then the daemon stops (exporting what is queued)."""
    daemon = Daemon(load_config(config, env={"OTLP_TENANT": "board-7"}), board=board, channels=[],
                    install_signals=False)
    channel = WhatsAppChannel(channel_parts(board), wa_settings(graph), hub=daemon.hub, pacing=FAST)
    daemon.channels = [channel]
    task = asyncio.create_task(daemon.run())
    try:
        await eventually(lambda: daemon.ready.is_set() or task.done(), "the daemon's start", 300)
        assert daemon.ready.is_set(), task.result()
        url = f"http://127.0.0.1:{daemon.port}{channel.settings.webhook_path}"
        async with ClientSession() as http:
            code, _ = await post(http, url, text_notification(OWNER, f"/meeting {TOPIC}"))
        assert code == 200

        async def ended() -> bool:
            rows = await board.parts.db.fetchall("SELECT status FROM meetings")
            return bool(rows) and all(r["status"] == "ended" for r in rows)

        await eventually(ended, "the meeting's end", 300)
        await eventually(lambda: len(graph.sent) >= 2, "the start and the decision on WhatsApp", 120)
    finally:
        daemon.request_stop()
        await asyncio.wait_for(task, 120)


async def test_a_three_round_meeting_with_a_tool_call_is_one_trace_to_the_receiver(
    tmp_path: Path, workspace: Path, data_dir: Path, state_url: StateURL | None, fake_graph: FakeGraphAPI,
    caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    board = await open_meeting_board(workspace, data_dir, state_url, ScriptedModel(default=brain))
    try:
        async with OtlpReceiver() as receiver:
            config = tmp_path / "sabha.yaml"
            config.write_text(f"workspace: {workspace}\ndata_dir: {data_dir}\nserver:\n  host: 127.0.0.1\n"
                              f"  port: 0\ntelemetry:\n  enabled: true\n  endpoint: {receiver.endpoint}\n"
                              "  service_name: sabha-test\n  headers:\n    x-tenant: ${OTLP_TENANT}\n",
                              encoding="utf-8")
            await hold_meeting(board, config, fake_graph)
        rows = await board.parts.db.fetchall("SELECT meeting_id, trace_id, purpose FROM llm_calls")
    finally:
        await board.close()

    roots = {node.span.name: node for node in receiver.trees()}
    assert {"receipt", "meeting"} <= roots.keys(), sorted(roots)
    meeting, receipt = roots["meeting"], roots["receipt"]
    [message] = receipt.named("message")  # the answer, taken up from the stored row, is in the receipt's trace
    print("\n".join(render(receipt)))
    print("\n".join(render(meeting)))

    # the message: its receipt -> the claim; intake -> admission and the answer -> the send, one trace
    assert [c.span.name for c in receipt.children] == ["claim", "message"]
    assert {s.trace_id for s in receipt.walk()} == {message.span.trace_id}
    assert [c.span.name for c in message.children] == ["answer", "send"]
    assert message.children[0].children[0].span.name == "admission"
    assert message.span.attributes["sabha.channel"] == "whatsapp"

    # the meeting: a trace of its own, linked to the message that started it
    trace = meeting.span.trace_id
    assert {s.trace_id for s in meeting.walk()} == {trace} and trace != message.span.trace_id
    assert meeting.span.links == (message.span.trace_id,)
    phases = [c.span.name for c in meeting.children]
    assert phases[:4] == ["meeting.framing", "meeting.round", "meeting.round", "meeting.round"], phases
    assert {"meeting.synthesis", "meeting.challenge"} <= set(phases[4:]), phases
    rounds = meeting.named("meeting.round")
    assert [r.span.attributes["sabha.round"] for r in rounds] == [1, 2, 3]
    for node in rounds:
        seats = node.named("meeting.seat")
        assert sorted(s.span.attributes["sabha.role"] for s in seats) == sorted(SPECIALISTS)
        for seat in seats:
            assert seat.named("chat "), f"{seat.span.name} of {seat.span.attributes} made no model call"
    [critic] = [s for s in rounds[1].named("meeting.seat") if s.span.attributes["sabha.role"] == "critic"]
    [tool] = critic.named("execute_tool")
    assert tool.span.name == "execute_tool log_disagreement"
    assert tool.span.attributes["gen_ai.tool.name"] == "log_disagreement" and tool.span.attributes["sabha.tool.ok"]
    assert tool.span.attributes["sabha.tool.arguments_bytes"] > len(SECRET_REASON)
    assert [c.span.name for c in critic.children] == ["chat main", "execute_tool log_disagreement", "chat main"]

    # each model call: the GenAI conventions' attributes, its cost and role
    chats = spans_named(meeting, "chat ")
    assert chats and all(c.span.attributes["gen_ai.request.model"] == "main" for c in chats)
    said = [c.span.attributes for c in chats]
    assert all(a["gen_ai.usage.input_tokens"] == 100 and a["gen_ai.usage.cache_read.input_tokens"] == 40
                        and a["gen_ai.usage.output_tokens"] == 20 and a["gen_ai.provider.name"] == "scripted"
                        and a["sabha.cost_usd"] > 0 and a["sabha.role"] for a in said)

    # the ledger rows of the meeting carry its trace id; the message's own model calls (none: /meeting) its own
    meeting_rows = [r for r in rows if r["meeting_id"]]
    assert meeting_rows and {r["trace_id"] for r in meeting_rows} == {trace}
    assert len(meeting_rows) == len(chats)
    # and so do the log lines written inside it
    assert any(getattr(r, "trace_id", None) == trace for r in caplog.records)
    # the exporter sent the configured header; nothing said, asked or secret is an attribute
    assert receiver.headers and all(h.get("x-tenant") == "board-7" for h in receiver.headers)
    values = [str(v) for s in receiver.spans for v in s.attributes.values()]
    for text in (TOPIC, SECRET_REASON, "my view", fake_graph.token, "board-7"):
        assert not any(text in v for v in values), f"{text!r} is in a span attribute"
    assert {s.service for s in receiver.spans} == {"sabha-test"}
