"""Board meetings through the real runner and the scripted model."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from board.agent.tools import ToolContext
from board.app import Board
from board.envelope import Envelope
from board.llm.base import LLMRequest, Usage
from board.llm.pricing import ModelPrice, PriceTable
from board.room.meeting import MeetingEvent, MeetingSettings, StopReason
from board.room.roundtable import parse_input, run_roundtable
from bot.cli import meetings as meeting_cli
from tests.support.board import (
    board_with,
    framing,
    last_user,
    schema_of,
    valid_decision,
)
from tests.support.fakes.scripted_model import ScriptedModel, Step, call, fail, say

pytestmark = [pytest.mark.backends, pytest.mark.usefixtures("boards_on_backend")]

SPECIALISTS = ["research", "content", "finance", "strategy", "critic"]
OWNERS = ["general", *SPECIALISTS]
#: a member's default stance: conditional, so meetings neither converge nor carry dissent unless a test says so
STANCE = json.dumps({"position": "conditional", "confidence": 0.6, "assumption": "the numbers hold up"})


def brain(*, decision: str | None = None, rounds: dict[tuple[str, int], list[Step]] | None = None):  # type: ignore[no-untyped-def]
    """A scripted model for meetings: the chair frames and decides, specialists speak per round.

    ``rounds[(role, n)]`` lists the steps of that role in round n (tool calls, then text)."""
    pending = {key: list(steps) for key, steps in (rounds or {}).items()}

    def answer(request: LLMRequest) -> Step:
        role = request.persona.role
        schema = schema_of(request)
        if schema is not None:
            if "questions" in schema.get("properties", {}):
                return say(framing(SPECIALISTS))
            if "position" in schema.get("properties", {}):
                return say(STANCE)
            return say(decision or valid_decision(OWNERS))
        text = last_user(request)
        if "draft decision" in text:  # the challenger's review
            return say("NO OBJECTION")
        round_no = int(text.split("Round ", 1)[1].split(" ", 1)[0]) if "Round " in text else 0
        queue = pending.get((role, round_no))
        if queue:
            return queue.pop(0)
        return say(f"{role} in round {round_no}: my view on the topic.\nSTANCE: {STANCE}")

    return answer


#: ``scripted:main`` at $10,000 per million input tokens: the 100 of :func:`dollar_a_call` cost $1.
DOLLAR_A_CALL = PriceTable({"scripted:main": ModelPrice(input=10_000, output=0)})


def dollar_a_call(answer: Callable[[LLMRequest], Step]) -> Callable[[LLMRequest], Step]:
    """``answer``, reporting 100 input tokens a call ($1 with :data:`DOLLAR_A_CALL`)."""

    def one_dollar(request: LLMRequest) -> Step:
        return replace(answer(request), usage=Usage(input_tokens=100))

    return one_dollar


@asynccontextmanager
async def meeting_board(workspace: Path, data_dir: Path, model: ScriptedModel, **settings: Any) -> AsyncIterator[Board]:
    """:func:`board_with`, closed afterwards."""
    board = await board_with(workspace, data_dir, model, **settings)
    try:
        yield board
    finally:
        await board.close()


async def hold(board: Board, topic: str = "Expand to Europe?") -> tuple:  # type: ignore[type-arg]
    events: list[MeetingEvent] = []

    async def collect(event: MeetingEvent) -> None:
        events.append(event)

    result = await board.parts.room.hold(topic, extra_subscribers=[collect])
    return result, events


async def stored_events(board: Board, meeting_id: str, kind: str) -> list[dict]:
    rows = await board.parts.db.fetchall("SELECT data FROM meeting_events WHERE meeting_id = ? AND kind = ?",
                                   (meeting_id, kind))
    return [json.loads(r["data"]) for r in rows]


class RoundOneTogether(ScriptedModel):
    """A scripted model at which each round-one statement waits until every specialist's has arrived, counting
    the most there at once: "all five started before the first one finished" holds however slow the machine is.
    Run one after the other, the first would wait alone: after ``bound`` s it goes on and the count says so."""

    def __init__(self, *, bound: float = 60.0, **options: Any) -> None:
        super().__init__(**options)
        self.bound = bound
        self.arrived: set[str] = set()
        self.waiting = 0
        self.most_at_once = 0
        self.all_in = asyncio.Event()

    async def complete(self, request: LLMRequest) -> Any:
        if "Round 1 of" in last_user(request) and request.persona.role not in self.arrived:
            self.arrived.add(request.persona.role)
            self.waiting += 1
            self.most_at_once = max(self.most_at_once, self.waiting)
            if self.arrived >= set(SPECIALISTS):
                self.all_in.set()
            try:
                await asyncio.wait_for(self.all_in.wait(), self.bound)
            except TimeoutError:
                pass
            finally:
                self.waiting -= 1
        return await super().complete(request)


async def test_round_one_runs_in_parallel_and_rebuttals_see_the_others(workspace: Path, data_dir: Path) -> None:
    model = RoundOneTogether(default=brain(), latency=0.2)
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=2)) as board:
        result, events = await hold(board)
        assert result.stop_reason is StopReason.COMPLETED and result.rounds == 2
        round_one = [r for r in model.requests if "Round 1 of" in last_user(r.request)]
        assert sorted(r.role for r in round_one) == sorted(SPECIALISTS)
        assert model.most_at_once == len(SPECIALISTS)  # all five started before the first one finished
        critic_round_two = next(r for r in model.requests_for("critic") if "Round 2 of" in last_user(r.request))
        prompt = last_user(critic_round_two.request)
        assert "Finance (finance), round 1: finance in round 1: my view on the topic." in prompt
        assert "Critic (critic)" not in prompt  # its own statement is shown as its own, not as a colleague's
        assert "Question for critic?" in last_user(next(r for r in round_one if r.role == "critic").request)
        kinds = [e.kind for e in events]
        assert kinds[0] == "started" and kinds[1] == "framed" and kinds[-2:] == ["decision", "ended"]
        assert kinds.count("agent_spoke") == 10 and kinds.count("round_done") == 2
        # specialists speak in their own soul
        finance = next(r for r in round_one if r.role == "finance")
        assert "You think in numbers" in finance.request.system[0].text


async def test_disagreement_and_consensus_are_stored_and_the_critic_is_not_overruled(
    workspace: Path, data_dir: Path
) -> None:
    rounds = {
        ("critic", 2): [call("log_disagreement", {"target_participant_name": "Finance",
                                                  "topic": "VAT costs are ignored here",
                                                  "reasoning": "No model of EU VAT", "severity": 4}),
                        say("I object: VAT is unmodelled.")],
        ("finance", 2): [call("log_consensus", {"participants": ["Finance", "Strategy"],
                                                "topic": "Start with one country", "strength": 3}),
                         say("Agreed on one country.")],
    }
    # The chair first forgets the critic's dissent, is told so, then records it.
    decisions = [valid_decision(OWNERS),
                 valid_decision(OWNERS, dissent=[{"who": "critic", "why": "VAT is unmodelled"}])]
    base = brain(rounds=rounds)

    def answer(request: LLMRequest) -> Step:
        schema = schema_of(request)
        if schema is not None and "action_items" in schema.get("properties", {}):
            return say(decisions.pop(0))
        return base(request)

    model = ScriptedModel(default=answer)
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=2)) as board:
        result, _ = await hold(board)
        disagreements = await stored_events(board, result.meeting_id, "disagreement")
        assert [(d["role"], d["target"], d["topic"], d["severity"]) for d in disagreements] == [
            ("critic", "finance", "VAT costs are ignored here", 4)]
        consensus = await stored_events(board, result.meeting_id, "consensus")
        assert consensus[0]["participants"] == ["finance", "strategy"] and consensus[0]["strength"] == 3
        synth = [r for r in model.requests_for("general")
                 if schema_of(r.request) and "action_items" in schema_of(r.request)["properties"]]
        assert len(synth) == 2  # invalid decision retried once, with the validation error
        assert "critic dissented" in last_user(synth[1].request)
        assert result.decision is not None and not result.decision.best_effort
        assert [d.who for d in result.decision.dissent] == ["critic"]
        assert "critic: VAT is unmodelled" in result.minutes
        assert "critic vs finance" in result.minutes


async def test_converged_positions_end_the_meeting_early(workspace: Path, data_dir: Path) -> None:
    support = json.dumps({"position": "support", "confidence": 0.8, "assumption": "Germany is representative"})
    rounds = {(role, 2): [say(f"{role}: I now back the German pilot.\nSTANCE: {support}")] for role in SPECIALISTS}
    rounds[("strategy", 2)].insert(0, call("log_consensus", {"participants": ["strategy", "finance", "critic"],
                                                             "topic": "Pilot Germany", "strength": 5}))
    model = ScriptedModel(default=brain(rounds=rounds))
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=3)) as board:
        result, _ = await hold(board)
        assert result.stop_reason is StopReason.CONVERGED and result.rounds == 2
        assert not any("Round 3 of" in last_user(r.request) for r in model.requests)
        row = await board.parts.room.store.get(result.meeting_id)
        assert row is not None and row.stop_reason == "converged" and row.status == "ended"


async def test_budget_stops_the_meeting_before_the_next_call(workspace: Path, data_dir: Path) -> None:
    # $1 per call, $0.50 budget: the chair's framing spends it all, so no specialist is ever called.
    model = ScriptedModel(default=dollar_a_call(brain()))
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(budget_usd=0.5),
                             prices=DOLLAR_A_CALL) as board:
        result, _ = await hold(board)
        assert result.stop_reason is StopReason.BUDGET and result.rounds == 0
        assert [r.role for r in model.requests] == ["general"]
        assert result.decision is None
        assert "Ended because: budget" in result.minutes and "$1.0000" in result.minutes
        row = await board.parts.room.store.get(result.meeting_id)
        assert row is not None and row.stop_reason == "budget" and row.cost_usd == 1.0


async def test_a_failing_specialist_is_absent_and_the_meeting_goes_on(workspace: Path, data_dir: Path) -> None:
    def answer(request: LLMRequest) -> Step:
        if request.persona.role == "finance":
            return fail("auth", retryable=False, status=401, message="bad key")
        return brain()(request)

    model = ScriptedModel(default=answer)
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=2)) as board:
        result, events = await hold(board)
        assert result.stop_reason is StopReason.COMPLETED
        assert "finance" in result.absent
        assert any(e.kind == "absent" and e.role == "finance" for e in events)
        assert not any("Round 2 of" in last_user(r.request) for r in model.requests_for("finance"))
        details = await board.parts.room.store.details(result.meeting_id)
        assert {"role": "finance", "status": "absent", "reason": "the model was unavailable"} in details["participants"]
        assert "Absent: 💰 Finance" in result.minutes


async def test_no_quorum_ends_with_error(workspace: Path, data_dir: Path) -> None:
    def answer(request: LLMRequest) -> Step:
        if request.persona.role in ("finance", "critic", "research"):
            return fail("auth", retryable=False, status=401)
        return brain()(request)

    model = ScriptedModel(default=answer)
    async with meeting_board(workspace, data_dir, model) as board:
        result, _ = await hold(board)
        assert result.stop_reason is StopReason.ERROR and "no quorum" in (result.error or "")


async def test_invalid_synthesis_twice_gives_a_best_effort_decision(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=brain(decision="I think we should go, broadly."))
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1)) as board:
        result, _ = await hold(board)
        assert result.stop_reason is StopReason.COMPLETED
        assert result.decision is not None and result.decision.best_effort
        assert 3 <= len(result.decision.action_items) <= 5
        assert "best effort" in result.minutes


async def test_deadline_and_cancel_always_set_a_stop_reason(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=brain(), latency=0.3)
    async with meeting_board(workspace, data_dir, model,
                             meetings=MeetingSettings(max_duration_s=0.5, agent_timeout_s=5)) as board:
        result, _ = await hold(board)
        assert result.stop_reason is StopReason.DEADLINE
        owner = Envelope(channel="console", text="", sender="owner", is_owner=True)
        run = board.parts.room.start("Another topic", envelope=owner)
        await asyncio.sleep(0.1)
        assert await board.parts.room.cancel(run.id)
        row = await board.parts.room.store.get(run.id)
        assert row is not None and row.stop_reason == "cancelled" and row.ended_at


async def test_meeting_command_and_convene_tool_start_background_meetings(workspace: Path, data_dir: Path) -> None:
    meeting_brain = brain()

    def answer(request: LLMRequest) -> Step:
        # The chat turn's answer after its convene call: keyed on the tool result, not queued for the role, since
        # the meeting it convened runs at once and its chair (general too) may ask the model first.
        last = request.messages[-1] if request.messages else None
        if last is not None and last.role == "tool" and '"convened"' in str(last.content):
            return say("The board is meeting now.")
        return meeting_brain(request)  # type: ignore[no-any-return]

    model = ScriptedModel(default=answer)
    model.script(call("convene_meeting", {"topic": "expanding to Europe"}), role="general")
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1)) as board:
        seen: list[MeetingEvent] = []

        async def collect(event: MeetingEvent) -> None:
            seen.append(event)

        board.parts.room.subscribe(collect)
        place = dict(channel="telegram", sender="1", chat_id="-100", thread_id=5, is_group=True, is_owner=True)
        reply = await board.handle(Envelope(text="I want the whole board to weigh in on expanding to Europe", **place))
        assert reply.text == "The board is meeting now."
        convened = next(json.loads(str(r.request.messages[-1].content)) for r in model.requests_for("general")
                        if r.request.messages and r.request.messages[-1].role == "tool")
        assert convened["ok"] and convened["result"]["status"] == "convened"
        await board.parts.room.drain(5)
        command = await board.handle(Envelope(text="/meeting pricing for 2027", **place))
        assert command.kind == "command" and "Convening the board" in command.text and command.thread_id == 5
        busy = await board.handle(Envelope(text="/meeting something else", **place))
        assert "still running here" in busy.text
        await board.parts.room.drain(5)
        ended = [e for e in seen if e.kind == "ended"]
        assert len(ended) == 2
        assert all(e.origin is not None and e.origin.chat_id == "-100" and e.origin.thread_id == 5 for e in ended)
        assert [row.topic for row in await board.parts.room.store.list()] == ["pricing for 2027", "expanding to Europe"]
        # Specialists never see the convene tool, and no meeting can be convened from inside one.
        for role in SPECIALISTS:
            assert all("convene_meeting" not in [t.name for t in r.request.tools] for r in model.requests_for(role))


async def test_other_rosters_meet_with_their_own_souls(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=brain())
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1)) as board:
        result = await board.parts.room.hold("Build or buy our CRM?", roster="sabha")
        roles = {r.role for r in model.requests}
        assert {"investor", "cto", "analyst"} <= roles and "finance" not in roles
        cto = model.requests_for("cto")[0].request.system[0].text
        assert "The CTO" in cto and "The Investor" in cto  # its colleagues are the sabha roster
        assert result.decision is not None


async def test_consultations_during_a_meeting_count_against_its_budget(workspace: Path, data_dir: Path) -> None:
    """A specialist's consultations cost the meeting too (their cost is not in the caller's
    exchange), a duplicate question in one statement is answered once, and a spent budget
    refuses further consultations."""

    def answer(request: LLMRequest) -> Step:
        role = request.persona.role
        if role == "research" and schema_of(request) is None and "Round 1 of" in last_user(request):
            asked = sum(1 for m in request.messages if m.role == "tool")
            if asked < 2:
                return call("consult", {"role": "finance", "question": "What does it cost?"})
            return say("research: statement after asking finance twice")
        if "consults you" in last_user(request):
            return say(f"{role}: it costs a lot.\nConfidence: 0.6")
        return brain()(request)

    model = ScriptedModel(default=answer)
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1)) as board:
        prices = board.parts.runner.settings.prices.prices  # type: ignore[attr-defined]
        prices["scripted:main"] = prices.get("anthropic:claude-sonnet-4-6")
        result = await board.parts.room.hold("Expand to Europe?")
        ledger = await board.parts.db.fetchone("SELECT SUM(cost_usd) AS usd FROM llm_calls WHERE meeting_id = ?",
                                         (result.meeting_id,))
        assert ledger is not None and ledger["usd"] > 0
        assert abs(result.cost_usd - ledger["usd"]) < 1e-9  # the consultation's calls are counted
        consulted = [r for r in model.requests_for("finance") if "consults you" in last_user(r.request)]
        assert len(consulted) == 1  # the second, identical question got the first answer
        run = board.parts.room.prepare("Another topic")
        run.spent_usd = run.settings.budget_usd
        refused = await board.parts.room.consult.handle(
            {"role": "finance", "question": "Still affordable?"},
            ToolContext(role="research", session_key="meeting", depth=1, chain=("general", "research"),
                        budget=run),
        )
        assert refused.data and refused.data["code"] == "budget" and "meeting budget" in (refused.error or "")


async def test_a_round_cut_short_by_the_deadline_keeps_what_was_said(workspace: Path, data_dir: Path) -> None:
    rounds = {("finance", 2): [say("finance, too slow for round 2", latency=5.0)]}
    model = ScriptedModel(default=brain(rounds=rounds))
    meetings = MeetingSettings(max_turns_per_agent=3, max_duration_s=1.0, agent_timeout_s=10)
    async with meeting_board(workspace, data_dir, model, meetings=meetings) as board:
        result = await board.parts.room.hold("Expand to Europe?")
        assert result.stop_reason is StopReason.DEADLINE and result.rounds == 2
        # the four who spoke in round 2 are in the minutes, as they are in the db
        assert "## Round 2" in result.minutes and "critic in round 2: my view on the topic." in result.minutes
        assert "finance, too slow" not in result.minutes
        details = await board.parts.room.store.details(result.meeting_id)
        assert sum(1 for s in details["statements"] if s["round"] == 2) == 4


async def test_sabha_meeting_with_an_unknown_roster_or_a_blank_topic_is_a_clear_error(
    workspace: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with meeting_board(workspace, data_dir, ScriptedModel(default=brain())) as board:
        code = await meeting_cli.cmd_meeting(board.parts,
                                             argparse.Namespace(topic=["pricing"], roster="nope", quiet=True))
        assert code == 2 and "unknown roster 'nope'" in capsys.readouterr().err
        code = await meeting_cli.cmd_meeting(board.parts, argparse.Namespace(topic=["  "], roster=None, quiet=True))
        assert code == 2 and "needs a topic" in capsys.readouterr().err
        assert await board.parts.room.store.list() == []


async def test_a_meeting_cancelled_while_it_is_being_recorded_still_gets_a_stop_reason(
    workspace: Path, data_dir: Path
) -> None:
    async with meeting_board(workspace, data_dir, ScriptedModel(default=brain())) as board:
        owner = Envelope(channel="console", text="", sender="owner", is_owner=True)
        run = board.parts.room.start("Cancel me at once", envelope=owner)
        await asyncio.sleep(0)  # the meeting is now inside its first database write
        assert await board.parts.room.cancel(run.id)
        row = await board.parts.room.store.get(run.id)
        assert row is not None and row.status == "ended" and row.stop_reason == "cancelled"


async def test_a_roundtable_where_nobody_could_speak_invents_no_tasks(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=lambda request: fail("auth", retryable=False, status=401, message="bad key"))
    async with meeting_board(workspace, data_dir, model) as board:
        output = await run_roundtable(board.parts.room, parse_input('{"prompt": "Launch a podcast?", "max_rounds": 2}'))
        assert output["stop_reason"] == "error" and "no quorum" in output["error"]
        assert output["summary"] == []  # not three "follow up on ..." tasks made of the chair's questions
        assert not model.requests_for("summarizer")  # no synthesis of an empty debate


async def test_a_meeting_of_another_roster_consults_within_that_roster(workspace: Path, data_dir: Path) -> None:
    members = ["investor", "cto", "analyst"]

    def answer(request: LLMRequest) -> Step:
        role = request.persona.role
        schema = schema_of(request)
        if schema is not None:
            return say(framing(members) if "questions" in schema.get("properties", {})
                       else valid_decision(["general", *members]))
        if request.messages[-1].role == "tool":
            return say(f"{role}: statement after consulting")
        if role == "investor" and "Round 1 of" in last_user(request):
            return call("consult", {"role": "cto", "question": "Can we build it in a quarter?"})
        return say(f"{role}: statement")

    model = ScriptedModel(default=answer)
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1)) as board:
        await board.parts.room.hold("Build or buy our CRM?", roster="sabha")
        rows = await board.parts.db.fetchall("SELECT from_role, to_role, outcome FROM consultations")
        assert [tuple(r) for r in rows] == [("investor", "cto", "ok")]
        consulted = next(r for r in model.requests_for("cto") if "consults you" in last_user(r.request))
        assert "The CTO" in consulted.request.system[0].text and "The Investor" in consulted.request.system[0].text


async def test_an_unreachable_chair_gives_a_best_effort_decision_without_its_apology(
    workspace: Path, data_dir: Path
) -> None:
    base = brain()

    def answer(request: LLMRequest) -> Step:
        schema = schema_of(request)
        if schema is not None and "action_items" in schema.get("properties", {}):
            return fail("server", retryable=False, status=500, message="overloaded")
        return base(request)

    model = ScriptedModel(default=answer)
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1)) as board:
        result = await board.parts.room.hold("Expand to Europe?")
        synthesis = [r for r in model.requests_for("general")
                     if (schema_of(r.request) or {}).get("properties", {}).get("action_items")]
        assert len(synthesis) == 1  # no retry of an unavailable model
        assert result.decision is not None and result.decision.best_effort
        assert result.decision.recommendation == "No validated recommendation on Expand to Europe?."


async def test_meetings_and_cancel_stay_within_the_chat_for_non_owners(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=brain(), latency=0.2)
    async with meeting_board(workspace, data_dir, model) as board:
        forum = dict(channel="telegram", sender="1", chat_id="-100", is_group=True, is_owner=True)
        friend = dict(channel="telegram", sender="2", chat_id="2", is_owner=False)
        started = await board.handle(Envelope(text="/meeting secret acquisition of Acme", **forum))
        meeting_id = started.text.split("(meeting ")[1].split(")")[0]
        listed = await board.handle(Envelope(text="/meetings", **friend))
        assert "Acme" not in listed.text
        refused = await board.handle(Envelope(text="/cancel m", **friend))
        assert "No running meeting" in refused.text and meeting_id in board.parts.room.running()
        assert "Acme" in (await board.handle(Envelope(text="/meetings", **forum))).text
        cancelled = await board.handle(Envelope(text="/cancel", **forum))
        assert meeting_id in cancelled.text and not board.parts.room.running()


async def test_budget_is_checked_before_every_model_call_of_a_tool_loop(workspace: Path, data_dir: Path) -> None:
    # Every model call costs exactly $1; the budget is $1.50. The framing call spends $1, round 1 may
    # start, and the critic, which keeps calling tools, must not get a second model call.
    rounds = {("critic", 1): [call("log_disagreement", {"target_participant_name": "finance", "topic": "cost",
                                                        "reasoning": "r", "severity": 2})] * 4}
    model = ScriptedModel(default=dollar_a_call(brain(rounds=rounds)))
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(budget_usd=1.5),
                             prices=DOLLAR_A_CALL) as board:
        result, _ = await hold(board)
        assert result.stop_reason is StopReason.BUDGET
        assert len(model.requests_for("critic")) == 1  # no second step once the budget was spent
        assert "Warning" not in result.minutes  # the model is priced, so the budget is enforced


async def test_unpriced_models_are_named_in_the_minutes(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=brain())
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1)) as board:
        result, _ = await hold(board)
        assert "Warning: the $1 budget is not enforced for scripted:main" in result.minutes


async def test_a_roster_member_without_a_soul_is_named_not_silently_dropped(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=brain())
    async with meeting_board(workspace, data_dir, model, meetings=MeetingSettings(max_turns_per_agent=1),
                             custom_rosters={"advisors": ["legal", "finance", "critic"]}) as board:
        result = await board.parts.room.hold("Sign the lease?", roster="advisors")
        assert {r.role for r in model.requests} == {"general", "finance", "critic"}  # the board's souls, reused
        assert "Warning: legal is not in this meeting: no usable soul file" in result.minutes
