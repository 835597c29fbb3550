"""Issue 23: a meeting at its critical path. A 3-round meeting is 5 model calls in sequence
(framing, three rounds, the synthesis): a member's disagreement or consensus comes in the
statement it already returns (no second turn), the challenger reviews beside the synthesis,
and the templates are compiled once per process (an edited template still takes effect)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import jinja2

from board.agent.runner import AgentSettings
from board.app import BoardSettings
from board.llm.base import LLMRequest, LLMResponse
from board.llm.offline import OfflineProvider
from board.llm.registry import ProviderRegistry
from board.roles import RosterSpec
from board.room.meeting import MeetingEvent, MeetingSettings, StopReason
from board.workspace.paths import copy_default_workspace
from board.workspace.prompt import PromptBuilder
from tests.support.board import board_with, framing, last_user, on_both_backends, open_board, schema_of, valid_decision
from tests.support.fakes.scripted_model import ScriptedModel, Step, say

SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
OWNERS = ["general", *SPECIALISTS]
LATENCY = 0.15


class TimedOffline(OfflineProvider):
    """The offline model (what a first meeting runs on), each call taking ``LATENCY`` and kept with its span."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float, str, str]] = []  # start, end, role, what was asked

    async def complete(self, request: LLMRequest) -> LLMResponse:
        start = time.perf_counter()
        await asyncio.sleep(LATENCY)
        asked = last_user(request) if request.messages and request.messages[-1].role == "user" else "(tool results)"
        self.spans.append((start, time.perf_counter(), request.persona.role, asked))
        return await super().complete(request)


def longest_chain(spans: list[tuple[float, float, str, str]]) -> int:
    """The most calls that ran one after another (each starting once the previous had ended)."""
    ordered = sorted(spans, key=lambda span: span[1])
    chain: list[int] = []
    for i, span in enumerate(ordered):
        chain.append(1 + max((chain[j] for j in range(i) if ordered[j][1] <= span[0]), default=0))
    return max(chain, default=0)


@on_both_backends
async def test_a_three_round_meeting_is_five_model_calls_in_sequence_and_keeps_the_objection(
    workspace: Path, data_dir: Path
) -> None:
    model = TimedOffline()
    registry = ProviderRegistry()
    registry.register("offline", lambda: model)
    settings = BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
                             agent=AgentSettings(default_model="offline"),
                             meetings=MeetingSettings(max_turns_per_agent=3, agent_timeout_s=60))
    async with await open_board(settings, registry) as board:
        result = await board.parts.room.hold("Should we expand to Europe next year?")
        kinds = {r["kind"] for r in await board.parts.db.fetchall(
            "SELECT kind FROM meeting_events WHERE meeting_id = ?", (result.meeting_id,))}
    assert result.stop_reason is StopReason.COMPLETED and result.rounds == 3
    second_turns = [role for _s, _e, role, asked in model.spans if asked == "(tool results)"]
    assert second_turns == []  # nobody needed a second turn to log the scoreboard
    assert longest_chain(model.spans) == 5, sorted((round(s, 2), round(e, 2), r) for s, e, r, _ in model.spans)
    review = next(span for span in model.spans if "draft decision" in span[3])
    synthesis = next(span for span in model.spans if "Write the board's decision" in span[3])
    assert review[0] < synthesis[1] and synthesis[0] < review[1]  # the challenger reviewed beside the synthesis
    assert {"disagreement", "consensus", "objection"} <= kinds  # stated in round 2, still recorded
    decision = result.decision
    assert decision is not None and decision.final_objection is not None and decision.final_objection.who == "critic"
    assert any(d.who == "critic" for d in decision.dissent)
    assert decision.final_objection.text.splitlines()[0] in result.minutes  # the objection nobody wanted to hear


@on_both_backends
async def test_disagreement_and_consensus_stated_in_the_statement_are_recorded_without_a_second_turn(
    workspace: Path, data_dir: Path
) -> None:
    disagree = {"target_participant_name": "Finance", "topic": "VAT is ignored",
                "reasoning": "No model of EU VAT", "severity": 4}
    agree = {"participants": ["finance", "strategy"], "topic": "Start with one country", "strength": 4}
    stance = json.dumps({"position": "conditional", "confidence": 0.6, "assumption": "the numbers hold up"})

    def answer(request: LLMRequest) -> Step:
        role, schema, text = request.persona.role, schema_of(request), last_user(request)
        if schema is not None:
            if "questions" in schema.get("properties", {}):
                return say(framing(SPECIALISTS))
            if "position" in schema.get("properties", {}):
                return say(stance)
            return say(valid_decision(OWNERS))
        if "draft decision" in text:
            return say("NO OBJECTION")
        if "Round 2 of" in text and role == "critic":
            return say(f"Finance forgets VAT.\nDISAGREE: {json.dumps(disagree)}\nSTANCE: {stance}")
        if "Round 2 of" in text and role == "finance":
            return say(f"Strategy and I agree.\n**CONSENSUS:** {json.dumps(agree)}\nSTANCE: {stance}")
        return say(f"{role}: my view.\nSTANCE: {stance}")

    model = ScriptedModel(default=answer)
    events: list[MeetingEvent] = []

    async def collect(event: MeetingEvent) -> None:
        events.append(event)

    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=2))
    try:
        result = await board.parts.room.hold("Expand to Europe?", extra_subscribers=[collect])
        rows = await board.parts.db.fetchall("SELECT kind, data FROM meeting_events WHERE meeting_id = ? "
                                       "AND kind IN ('disagreement', 'consensus')", (result.meeting_id,))
        statements = await board.parts.db.fetchall("SELECT role, text FROM meeting_statements WHERE meeting_id = ? "
                                             "AND round = 2", (result.meeting_id,))
    finally:
        await board.close()
    round_two = [r for r in model.requests if "Round 2 of" in r.last_user_text]
    assert sorted(r.role for r in round_two) == sorted(SPECIALISTS)  # one call each, no second turn
    assert "DISAGREE:" in round_two[0].last_user_text  # members are told how to state it
    stored = {r["kind"]: json.loads(r["data"]) for r in rows}
    assert stored["disagreement"]["target"] == "finance" and stored["disagreement"]["severity"] == 4
    assert stored["consensus"]["participants"] == ["finance", "strategy"]
    shown = {e.kind: e for e in events if e.kind in ("disagreement", "consensus")}
    assert shown["disagreement"].role == "critic" and "VAT" in shown["disagreement"].text
    said = {r["role"]: r["text"] for r in statements}
    assert said["critic"] == "Finance forgets VAT." and said["finance"] == "Strategy and I agree."
    assert result.decision is not None and any(d.who == "critic" for d in result.decision.dissent)


def test_templates_are_compiled_once_per_process_and_an_edit_still_takes_effect(
    tmp_path: Path, monkeypatch: object
) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    copy_default_workspace(first)
    copy_default_workspace(second)
    context = {"meeting": {"id": "m-1", "topic": "T", "roster": "board", "started_at": "", "ended_at": "",
                           "stop_reason": "completed", "cost_usd": 0.0},
               "agenda": "A", "participants": [], "rounds": [], "warnings": [], "disagreements": [],
               "consensus": [], "decision": None, "peer_ranking": [], "notes": [], "challenge_round": None}
    PromptBuilder(first).render("minutes.md.j2", **context)  # compiled here (or already by an earlier test)
    compiled: list[str] = []
    original = jinja2.Environment.compile

    def counting(self: jinja2.Environment, source: object, name: str | None = None,
                 filename: str | None = None, raw: bool = False, defer_init: bool = False) -> object:
        compiled.append(str(name))
        return original(self, source, name, filename, raw, defer_init)  # type: ignore[call-overload]

    monkeypatch.setattr(jinja2.Environment, "compile", counting)  # type: ignore[attr-defined]
    fresh = PromptBuilder(second)  # a new board: a new environment
    before = fresh.render("minutes.md.j2", **context)
    assert compiled == []  # the minutes template was not compiled again
    template = second / "templates" / "minutes.md.j2"
    template.write_text("EDITED {{ meeting.topic }}\n" + template.read_text())
    after = fresh.render("minutes.md.j2", **context)
    assert after.startswith("EDITED T") and not before.startswith("EDITED")
    assert compiled == ["minutes.md.j2"]


def test_the_phases_messages_and_convergence_are_pure_functions_of_the_record(tmp_path: Path) -> None:
    from board.agent.tools import ToolContext
    from board.room.decision import Stance
    from board.room.meeting.challenge import review_message
    from board.room.meeting.context import MeetingContext
    from board.room.meeting.convergence import converged, dissenters, unanimous
    from board.room.meeting.decide import synthesis_message
    from board.room.meeting.rounds import round_message
    from board.room.meeting.state import MeetingState
    from board.workspace.souls import SoulStore

    copy_default_workspace(tmp_path / "ws")
    souls = SoulStore(tmp_path / "ws", RosterSpec(), remember=False)
    chair, critic, finance = (souls.profile(r) for r in ("general", "critic", "finance"))

    async def never(*_: object) -> None:
        raise AssertionError("a pure function spoke")

    m = MeetingContext(id="m-1", topic="Expand?", roster="board", chair=chair, specialists=[finance, critic],
                       speak=never, store=None, settings=MeetingSettings(), render_minutes=str,  # type: ignore[arg-type]
                       subscribers=[], base_ctx=ToolContext(role="general", session_key="meeting"),
                       resolve_role=lambda name: None)
    s = MeetingState(agenda="Decide", questions={"finance": "Cost?", "critic": "Risk?"}, current_round=2)
    yes = Stance(position="support", confidence=0.8, assumption="demand is there")
    no = Stance(position="oppose", confidence=0.7, assumption="VAT stays unmodelled")
    s.rounds = [{"finance": "Cheap.", "critic": "VAT eats it."}, {"finance": "Still cheap.", "critic": "Still VAT."}]
    s.stances = [{"finance": yes, "critic": no}, {"finance": yes, "critic": no}]
    assert "DISAGREE:" in round_message(m, s, finance, 2) and "VAT eats it." in round_message(m, s, finance, 2)
    assert "You are this meeting's challenger" in round_message(m, s, critic, 2)
    assert dissenters(m, s) == {"critic": "VAT eats it.\nStill VAT.\nVAT stays unmodelled\nVAT stays unmodelled"}
    assert not unanimous(s, 2) and not converged(s)
    assert '- critic: "Still VAT.' in synthesis_message(m, s)
    assert "draft decision" in review_message(m, s) and "Still VAT." in review_message(m, s)
    s.stances[1]["critic"] = yes
    assert unanimous(s, 2) and converged(s) and dissenters(m, s) == {}
