"""Board quality (issue 13): the scoreboard, stances, dissent integrity, conformity, memory in the room."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from board.app import Board
from board.llm.base import LLMRequest
from board.room.meeting import MeetingEvent, MeetingSettings
from tests.support.board import board_with, framing, last_user, schema_of, structured_answer, valid_decision
from tests.support.fakes.scripted_model import ScriptedModel, Step, call, say

pytestmark = [pytest.mark.backends, pytest.mark.usefixtures("boards_on_backend")]

SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
OWNERS = ["general", *SPECIALISTS]


def round_of(request: LLMRequest) -> int:
    match = re.search(r"Round (\d+) of at most", last_user(request))
    return int(match.group(1)) if match else 0


async def hold(board: Board, topic: str = "Expand to Europe?", **kwargs: object) -> tuple:  # type: ignore[type-arg]
    events: list[MeetingEvent] = []

    async def collect(event: MeetingEvent) -> None:
        events.append(event)

    result = await board.parts.room.hold(topic, extra_subscribers=[collect], **kwargs)
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
        if "draft decision" in last_user(request):
            return say("NO OBJECTION")
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
        rows = await board.parts.db.fetchall(
            "SELECT kind FROM meeting_events WHERE meeting_id = ? AND kind != 'decision'", (result.meeting_id,))
        assert sorted(r["kind"] for r in rows) == ["consensus", "disagreement"]
        shown = {e.kind: e for e in events if e.kind in ("disagreement", "consensus")}
        assert shown["disagreement"].role == "critic" and shown["disagreement"].data["target"] == "finance"
        assert shown["disagreement"].data["severity"] == 4 and "VAT" in shown["disagreement"].text
        assert shown["consensus"].role == "finance"
        assert shown["consensus"].data["participants"] == ["finance", "strategy"]
    finally:
        await board.close()


def stance(position: str, assumption: str = "the numbers hold up", confidence: float = 0.7) -> str:
    return "STANCE: " + json.dumps({"position": position, "confidence": confidence, "assumption": assumption})


def member_brain(statements: dict[tuple[str, int], str | Step | list[Step]] | None = None, *,
                 default_position: str = "conditional", decisions: list[str] | None = None,
                 review: str = "NO OBJECTION", roles: list[str] = SPECIALISTS):  # type: ignore[no-untyped-def]
    """Chair frames and decides (``decisions`` in order, then a valid one), members speak per round
    (``statements[(role, n)]``: text with its STANCE line, a step, or a list of steps), the challenger
    answers the draft review with ``review``."""
    pending: dict[tuple[str, int], list[Step]] = {}
    for key, value in (statements or {}).items():
        pending[key] = list(value) if isinstance(value, list) else [say(value) if isinstance(value, str) else value]
    queue = list(decisions or [])
    owners = ["general", *roles]

    def answer(request: LLMRequest) -> Step:
        role, text = request.persona.role, last_user(request)
        asked = {"position": default_position, "confidence": 0.5, "assumption": "asked"}
        structured = structured_answer(request, roles, stance=asked,
                                       decide=lambda: queue.pop(0) if queue else valid_decision(owners))
        if structured is not None:
            return structured
        if request.messages[-1].role == "tool":
            steps = pending.get((role, round_of(request)))
            return steps.pop(0) if steps else say(f"{role}: noted.\n{stance(default_position)}")
        if "draft decision" in text:
            return say(review)
        steps = pending.get((role, round_of(request)))
        if steps:
            return steps.pop(0)
        return say(f"{role} in round {round_of(request)}: my view.\n{stance(default_position)}")

    return answer


async def test_a_critic_who_objects_in_text_only_is_in_the_dissent_in_their_own_words(
    workspace: Path, data_dir: Path
) -> None:
    objection = "I object: EU VAT registration in every market will eat the whole margin of the pilot."
    statements = {("critic", n): f"{objection}\n{stance('oppose', 'VAT costs stay unmodelled')}" for n in (1, 2)}
    # the chair leaves the critic out twice: the second time Sabha restores the dissent itself
    model = ScriptedModel(default=member_brain(statements, decisions=[valid_decision(OWNERS)] * 2))
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=2))
    try:
        result, _ = await hold(board)
        decision = result.decision
        assert decision is not None and not decision.best_effort
        critic = [d for d in decision.dissent if d.who == "critic"]
        assert critic and "VAT registration" in critic[0].why
        assert any("restored by Sabha" in note for note in decision.notes)
        synth = [r for r in model.requests_for("general") if "action_items" in (schema_of(r.request) or {}).get(
            "properties", {})]
        assert len(synth) == 2 and "critic dissented but the dissent does not record it" in last_user(synth[1].request)
        assert "Required dissent" in last_user(synth[0].request) and "VAT registration" in last_user(synth[0].request)
        assert "restored by Sabha" in result.minutes
    finally:
        await board.close()


async def test_a_placeholder_dissent_is_refused_and_the_chair_corrects_it(workspace: Path, data_dir: Path) -> None:
    rounds = {("critic", 2): [call("log_disagreement", {"target_participant_name": "finance", "topic": "FX risk",
                                                       "reasoning": "Euro revenue against rupee costs is unhedged",
                                                       "severity": 5}),
                              say(f"The currency risk is unhedged.\n{stance('oppose', 'FX stays stable')}")]}
    decisions = [valid_decision(OWNERS, dissent=[{"who": "critic", "why": "noted"}]),
                 valid_decision(OWNERS, dissent=[{"who": "critic", "why": "Euro revenue against rupee costs is "
                                                                         "unhedged"}])]
    model = ScriptedModel(default=member_brain(rounds, decisions=decisions))
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=2))
    try:
        result, _ = await hold(board)
        synth = [r for r in model.requests_for("general") if "action_items" in (schema_of(r.request) or {}).get(
            "properties", {})]
        assert "does not give their own reasoning" in last_user(synth[1].request)
        assert result.decision is not None and not result.decision.notes
        assert [d.why for d in result.decision.dissent] == ["Euro revenue against rupee costs is unhedged"]
    finally:
        await board.close()


async def test_consensus_forged_for_a_dissenter_neither_converges_nor_silences_them(
    workspace: Path, data_dir: Path
) -> None:
    support = stance("support", "demand is there")
    statements: dict[tuple[str, int], str | Step | list[Step]] = {
        (role, n): f"{role}: go.\n{support}" for role in SPECIALISTS[:-1] for n in (1, 2, 3)}
    statements[("finance", 2)] = [call("log_consensus", {"participants": ["finance", "strategy", "critic"],
                                                         "topic": "Go to Europe now", "strength": 5}),
                                  say(f"We all agree.\n{support}")]
    for n in (1, 2, 3):
        statements[("critic", n)] = f"Europe now is a mistake: churn in our home market comes first.\n" \
                                    f"{stance('oppose', 'home churn stays high')}"
    model = ScriptedModel(default=member_brain(statements))
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=3))
    try:
        result, _ = await hold(board)
        assert result.stop_reason.value == "completed" and result.rounds == 3  # never "converged"
        assert "does not hold for critic, whose own stance disagrees" in result.minutes
        assert result.decision is not None and any(d.who == "critic" and "churn" in d.why
                                                   for d in result.decision.dissent)
    finally:
        await board.close()


async def test_any_members_serious_objection_is_kept_not_only_the_critics(workspace: Path, data_dir: Path) -> None:
    statements = {("finance", 2): [call("log_disagreement", {"target_participant_name": "strategy",
                                                             "topic": "runway too short",
                                                             "reasoning": "Nine months of runway cannot fund "
                                                                          "a second market", "severity": 4}),
                                   say(f"Runway first.\n{stance('conditional', 'we raise by spring')}")]}
    model = ScriptedModel(default=member_brain(statements))
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=2))
    try:
        result, _ = await hold(board)
        assert result.decision is not None
        finance = [d for d in result.decision.dissent if d.who == "finance"]
        assert finance and "runway" in finance[0].why.lower()
    finally:
        await board.close()


async def test_the_sabha_rosters_investor_reviews_the_draft_and_its_objection_is_kept_verbatim(
    workspace: Path, data_dir: Path
) -> None:
    members = ["investor", "cto", "analyst"]
    objection = "OBJECTION: Nobody has shown me a CAC below 400 dollars.\nUntil then this is a hobby, not a plan."
    model = ScriptedModel(default=member_brain(review=objection, roles=members))
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1))
    try:
        result = await board.parts.room.hold("Build or buy our CRM?", roster="sabha")
        reviews = [r for r in model.requests if "draft decision" in last_user(r.request)]
        assert [r.role for r in reviews] == ["investor"]
        verbatim = "Nobody has shown me a CAC below 400 dollars.\nUntil then this is a hobby, not a plan."
        assert result.decision is not None and result.decision.final_objection is not None
        assert result.decision.final_objection.who == "investor" and result.decision.final_objection.text == verbatim
        assert "> Nobody has shown me a CAC below 400 dollars.\n> Until then this is a hobby, not a plan." in \
            result.minutes
        assert any(d.who == "investor" for d in result.decision.dissent)
        # the board roster's challenger is the critic; none is configured for the roundtable
        assert MeetingSettings().challenger_for("board") == "critic"
        assert MeetingSettings(critic_role="").challenger_for("roundtable") == ""
    finally:
        await board.close()


async def test_a_unanimous_round_one_is_followed_by_the_case_against(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=member_brain(default_position="support"))
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=3))
    try:
        result, events = await hold(board)
        spoke = [r for r in model.requests if last_user(r.request).startswith("Board meeting on")]
        round_two = [r for r in spoke if round_of(r.request) == 2]
        assert len(round_two) == 5 and all("strongest case AGAINST" in last_user(r.request) for r in round_two)
        round_one = [r for r in spoke if round_of(r.request) == 1]
        assert not any("strongest case AGAINST" in last_user(r.request) for r in round_one)
        # everyone still supports after making the case against: now convergence may be declared
        assert result.stop_reason.value == "converged" and result.rounds == 2
        assert "Round 1 was unanimous" in result.minutes and "## Round 2 (the case against)" in result.minutes
        assert any(e.kind == "round_done" and "unanimous" in e.text for e in events)
    finally:
        await board.close()


async def test_every_round_restates_the_agenda_and_keeps_own_words_and_others_conclusions(
    workspace: Path, data_dir: Path
) -> None:
    filler = " ".join(f"Point {i} is that the regulatory load differs by country and must be costed."
                      for i in range(30))
    mitigation = "Mitigation: a German pilot capped at 50k euros with a kill date in June."
    statements = {("critic", 1): f"{filler} {mitigation}\n{stance('conditional', 'the cap holds')}",
                  ("finance", 1): f"Finance round one, said in full: costs first.\n{stance('conditional')}",
                  ("finance", 2): f"Finance round two, also in full.\n{stance('conditional')}"}
    model = ScriptedModel(default=member_brain(statements))
    board = await board_with(workspace, data_dir, model,
                             meetings=MeetingSettings(max_turns_per_agent=3, abridge_chars=600))
    try:
        await hold(board)
        third = last_user(next(r for r in model.requests_for("finance") if round_of(r.request) == 3).request)
        assert "Agenda:\n1. Market\n2. Money\n3. Risks" in third
        assert "Finance round one, said in full: costs first." in third and "Finance round two, also in full." in third
        # the critic's latest statement is round 2; its round-1 conclusion reaches round 2 speakers
        second = last_user(next(r for r in model.requests_for("strategy") if round_of(r.request) == 2).request)
        assert mitigation in second and "(abridged)" in second and "[stance: conditional" in second
        synth = next(r for r in model.requests_for("general")
                     if "action_items" in (schema_of(r.request) or {}).get("properties", {}))
        assert mitigation in last_user(synth.request)
    finally:
        await board.close()


async def test_sequential_speakers_hear_who_spoke_before_them_in_the_same_round(
    workspace: Path, data_dir: Path
) -> None:
    statements = {("research", 1): f"Research opens: the market is 3x ours.\n{stance('support')}"}
    model = ScriptedModel(default=member_brain(statements))
    board = await board_with(workspace, data_dir, model,
                             meetings=MeetingSettings(max_turns_per_agent=1, parallel=False))
    try:
        await hold(board)
        content = last_user(model.requests_for("content")[0].request)
        assert "Already said in this round:" in content and "Research opens: the market is 3x ours." in content
        research = last_user(model.requests_for("research")[0].request)
        assert "Already said in this round" not in research
    finally:
        await board.close()


async def test_a_missing_stance_is_asked_for_once(workspace: Path, data_dir: Path) -> None:
    statements = {("critic", 1): "No stance line here, just prose."}
    model = ScriptedModel(default=member_brain(statements, default_position="oppose"))
    board = await board_with(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1))
    try:
        result, events = await hold(board)
        asked = [r for r in model.requests_for("critic") if "position" in (schema_of(r.request) or {}).get(
            "properties", {})]
        assert len(asked) == 1 and "No stance line here" in last_user(asked[0].request)
        spoke = next(e for e in events if e.kind == "agent_spoke" and e.role == "critic")
        assert spoke.data["stance"]["position"] == "oppose" and "Stance: oppose" in spoke.text
        rows = await board.parts.db.fetchall("SELECT role, stance FROM meeting_statements WHERE meeting_id = ?",
                                       (result.meeting_id,))
        assert all(json.loads(r["stance"])["position"] in ("oppose", "conditional") for r in rows)
    finally:
        await board.close()


async def test_peer_review_ranks_anonymised_statements_for_the_chair(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=member_brain())
    board = await board_with(workspace, data_dir, model,
                             meetings=MeetingSettings(max_turns_per_agent=1, peer_review=True))
    try:
        result, events = await hold(board)
        reviews = [r for r in model.requests if "ranking" in (schema_of(r.request) or {}).get("properties", {})]
        assert len(reviews) == 5
        for review in reviews:
            text = last_user(review.request)
            assert len(re.findall(r"Response [A-E]:", text)) == 4 and "(finance)" not in text
            assert review.role + " in round" not in text
        ranking = next(e for e in events if e.kind == "peer_review").data["ranking"]
        assert len(ranking) == 5 and all(r["votes"] == 4 for r in ranking)
        synth = next(r for r in model.requests_for("general")
                     if "action_items" in (schema_of(r.request) or {}).get("properties", {}))
        assert "Peer review of round 1" in last_user(synth.request)
        assert "## Peer review (round 1, anonymised; best first)" in result.minutes
    finally:
        await board.close()


async def test_offline_meeting_shows_stances_a_disagreement_consensus_and_dissent_with_one_notice(
    board: Board,
) -> None:
    from board.llm.offline import OFFLINE_NOTICE

    result, events = await hold(board, "Should we expand to Europe?")
    spoke = [e for e in events if e.kind == "agent_spoke"]
    assert len(spoke) == 15 and all(e.data["stance"] is not None for e in spoke)
    assert {e.data["stance"]["position"] for e in spoke if e.role == "critic"} == {"oppose"}
    assert all(OFFLINE_NOTICE not in e.text for e in events if e.kind != "ended")
    assert [e.role for e in events if e.kind == "disagreement"] == ["critic"]
    consensus = [e for e in events if e.kind == "consensus"]
    assert len(consensus) == 1 and "critic" not in consensus[0].data["participants"]
    decision = result.decision
    assert decision is not None and not decision.best_effort and not decision.notes
    assert [d.who for d in decision.dissent] == ["critic"]
    assert decision.final_objection is not None and decision.final_objection.who == "critic"
    assert result.minutes.count("offline model: no LLM was called") == 1
    started = next(e for e in events if e.kind == "started")
    assert any("offline model" in w for w in started.data["warnings"])


def test_peer_review_and_challengers_come_from_config(tmp_path: Path) -> None:
    from bot.config import LoadedConfig
    from bot.config.load import parse_config

    text = "board:\n  meetings:\n    peer_review: true\n    challengers: {board: strategy, advisors: legal}\n"
    loaded = LoadedConfig(config=parse_config(text, source="t.yaml", env={}), source=None, base_dir=tmp_path)
    meetings = loaded.board_settings().meetings
    assert meetings.peer_review is True
    assert meetings.challenger_for("board") == "strategy" and meetings.challenger_for("sabha") == "investor"
    assert meetings.challenger_for("advisors") == "legal" and meetings.challenger_for("other") == "critic"
