"""The exchange's stages on their own (issue 23): a request built without the runner's keyword form,
single stages driven with a hand-built state (no model, no ledger), and the keyword adapter."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from board.agent.exchange import ExchangeRequest, ExchangeState, ModelChoice, ToolPolicy, run_exchange
from board.agent.exchange.finish import fallback_text
from board.agent.exchange.loop import call_model
from board.agent.exchange.outcome import CAP_REPLY, DEGRADED_SETUP_REPLY, EMPTY_REPLY
from board.agent.exchange.state import DONE, Failure
from board.agent.exchange.wrappers import AROUND_MODEL
from board.agent.runner import request_of
from board.agent.tools import ToolContext, ToolRegistry
from board.llm.base import LLMError
from board.llm.tokens import counter_for
from board.spending.ledger import LLMCallRecord, ToolCallRecord
from tests.support.fakes.scripted_model import ScriptedModel, call, say
from tests.support.llm import LookupTool, scripted_board


class Recorder:
    """A ledger that keeps what it is told."""

    def __init__(self) -> None:
        self.llm: list[LLMCallRecord] = []
        self.tools: list[ToolCallRecord] = []

    async def record_llm_call(self, rec: LLMCallRecord) -> None:
        self.llm.append(rec)

    async def record_tool_call(self, rec: ToolCallRecord) -> None:
        self.tools.append(rec)


class SpentBudget:
    def over_budget(self, pending_usd: float = 0.0) -> str | None:
        return "the meeting's budget is spent"

    def spend(self, usd: float) -> None:
        return None


def hand_built_state(**fields: object) -> ExchangeState:
    return ExchangeState(started=0.0, model="offline", chain=("offline",), counter=counter_for("offline"),
                         deadline=None, registry=ToolRegistry(), **fields)  # type: ignore[arg-type]


async def test_a_request_built_directly_runs_its_tool_loop_and_is_recorded(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(call("lookup", {"q": "rates"}), say("Rates are 18%."), role="finance")
    board = await scripted_board(workspace, data_dir, model)
    lookup = LookupTool()
    board.parts.tools.register(lookup.tool())
    try:
        recorder = Recorder()
        deps = replace(board.parts.runner.exchange_deps(), ledger=recorder)
        req = ExchangeRequest(profile=board.parts.souls.profile("finance"), prompt="What are the rates?",
                              ctx=ToolContext(role="finance", session_key="internal"), purpose="consult",
                              tools=ToolPolicy(allowed=("lookup",), max_rounds=2), ledger_tags={"asked_by": "general"})
        outcome = await run_exchange(req, deps)
        assert outcome.text == "Rates are 18%." and outcome.llm_calls == 2 and not outcome.degraded
        assert [args["q"] for args, _ in lookup.seen] == ["rates"]
        assert [(r.purpose, r.blocks["step"], r.tags) for r in recorder.llm] == [
            ("consult", 0, {"asked_by": "general"}), ("consult", 1, {"asked_by": "general"})]
        assert [r.name for r in recorder.tools] == ["lookup"]
        assert model.requests[0].request.metadata["purpose"] == "consult"
    finally:
        await board.close()


async def test_fallback_text_on_a_hand_built_state() -> None:
    setup = hand_built_state(failure=Failure.of(LLMError("no key", kind="auth")))
    capped = hand_built_state(text="  ", hit_cap=True)
    empty = hand_built_state(text="")
    asked = SimpleNamespace(profile=SimpleNamespace(role="finance"), ctx=SimpleNamespace(session_key="s"))
    for st in (setup, capped, empty):
        await fallback_text(asked, st, None)  # type: ignore[arg-type]  # no model, no ledger: the state only
    assert (capped.text, empty.text) == (CAP_REPLY, EMPTY_REPLY)
    assert setup.text == DEGRADED_SETUP_REPLY


async def test_a_spent_meeting_budget_stops_before_the_next_model_call(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    board = await scripted_board(workspace, data_dir, model)
    try:
        ctx = ToolContext(role="finance", session_key="meeting:m1", meeting_id="m1", budget=SpentBudget())
        req = ExchangeRequest(profile=board.parts.souls.profile("finance"), prompt="More?", ctx=ctx)
        st = hand_built_state(step=1)
        assert await call_model(req, st, board.parts.runner.exchange_deps()) is DONE
        assert st.text == "(I stopped before finishing: the meeting's budget is spent.)"
        assert model.requests == [] and st.calls == 0  # the call was never made
    finally:
        await board.close()


def test_the_model_call_wrappers_run_in_one_declared_order() -> None:
    assert [w.__name__ for w in AROUND_MODEL] == ["budget_gate", "reserve_allowance", "trace_call", "record_to_ledger",
                                                 "apply_deadline", "show_images", "stream_text"]


@pytest.mark.parametrize("prompt", ["one question", [], ()])
async def test_the_keyword_form_builds_the_request_it_always_meant(workspace: Path, data_dir: Path,
                                                                   prompt: object) -> None:
    board = await scripted_board(workspace, data_dir, ScriptedModel())
    try:
        profile = board.parts.souls.profile("finance")
        ctx = ToolContext(role="finance", session_key="s")
        req = request_of(profile, prompt, ctx, {  # type: ignore[arg-type]
            "tools_allowed": ["a"], "max_tool_iterations": 0, "model": "m:x", "fallbacks": ["m:y"],
            "ledger_tags": {"purpose": "meeting", "seat": 2}, "metadata": {"response_schema": {"type": "object"}},
        })
        assert req.purpose == "meeting" and dict(req.ledger_tags) == {"seat": 2}
        assert req.response_schema == {"type": "object"} and dict(req.metadata) == {}
        assert req.tools == ToolPolicy(allowed=("a",), max_rounds=0)
        assert req.model == ModelChoice(model="m:x", fallbacks=("m:y",))
        assert req.prompt == (prompt if isinstance(prompt, str) else ())
        with pytest.raises(AttributeError):
            req.purpose = "turn"  # type: ignore[misc]  # frozen: built once by whoever asks
    finally:
        await board.close()
