"""What a meeting is expected to cost, against what the ledger says it cost: ten scripted meetings of different
rosters, rounds and modes, each estimated when it is called (``BoardRoom.call``, what ``/meeting``, the chair's
tool and the web form use) from the history of the meetings held before it in the same db, then held; the
estimate is within 25 % of the ledger's sum for that meeting. The scripted model reports fixed token counts per
kind of call (a statement's input grows by round, the challenger says more); the estimate knows only the prices
and the ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.app import Board
from board.envelope import Envelope
from board.llm.base import LLMRequest, Usage
from board.llm.pricing import ModelPrice, PriceTable
from board.room.estimate import DEFAULT_TOKENS, Phase, Plan, Seat, TokenHistory, estimate
from board.room.meeting import MeetingSettings
from board.room.pending import StartRequest
from tests.support.board import board_with, framing, last_user, schema_of, valid_decision
from tests.support.fakes.scripted_model import ScriptedModel, Step

pytestmark = [pytest.mark.backends, pytest.mark.usefixtures("boards_on_backend")]

STANCE = json.dumps({"position": "conditional", "confidence": 0.6, "assumption": "the numbers hold up"})
#: what each kind of call reports (input, output tokens): fixed, so the ledger's cost is known per call
USAGE = {
    Phase.FRAMING: Usage(input_tokens=1200, output_tokens=220),
    Phase.STATEMENT: Usage(input_tokens=2100, output_tokens=310),
    Phase.SYNTHESIS: Usage(input_tokens=4300, output_tokens=650),
    Phase.CHALLENGE: Usage(input_tokens=2600, output_tokens=90),
}
PRICES = PriceTable({"scripted:main": ModelPrice(input=3.0, output=15.0)})
#: (roster, rounds, parallel) of the ten measured meetings
MEETINGS = [("board", 1, True), ("sabha", 2, True), ("duo", 3, False), ("board", 3, True), ("sabha", 1, False),
            ("duo", 2, True), ("board", 2, False), ("sabha", 3, True), ("duo", 1, True), ("board", 1, False)]


def brain(request: LLMRequest) -> Step:
    """Frames, speaks, decides and reviews, each with its fixed token counts."""
    schema = schema_of(request)
    if schema is not None and "questions" in schema.get("properties", {}):
        roles = list(schema["properties"]["questions"]["required"])
        return Step(text=framing(roles), usage=USAGE[Phase.FRAMING])
    if schema is not None:
        return Step(text=valid_decision(["general"]), usage=USAGE[Phase.SYNTHESIS])
    if "draft decision" in last_user(request):
        return Step(text="NO OBJECTION", usage=USAGE[Phase.CHALLENGE])
    text = last_user(request)
    round_no = int(text.split("Round ", 1)[1].split(" ", 1)[0]) if "Round " in text else 1
    usage = USAGE[Phase.STATEMENT]
    # a later round's prompt holds the earlier statements: more input; the challenger says more
    more_out = 140 if request.persona.role in ("critic", "investor") else 0
    usage = Usage(input_tokens=usage.input_tokens + 400 * (round_no - 1), output_tokens=usage.output_tokens + more_out)
    return Step(text=f"{request.persona.role}: my view.\nSTANCE: {STANCE}", usage=usage)


def owner(topic: str) -> Envelope:
    return Envelope(channel="console", text=f"/meeting {topic}", sender="owner", is_owner=True)


async def held(board: Board, topic: str, roster: str, rounds: int, parallel: bool) -> tuple[float, float, int]:
    """(the estimate said when it was called, the ledger's cost, meetings it learned from) of one meeting."""
    room = board.parts.room
    called = await room.call(StartRequest(topic, envelope=owner(topic), roster=roster,
                                          overrides={"max_turns_per_agent": rounds, "parallel": parallel}))
    assert called.run is not None and called.waiting is None  # confirm_over_usd is 0: it never waits
    await room.drain()
    row = await room.store.db.fetchone("SELECT SUM(cost_usd) AS usd, COUNT(*) AS n FROM llm_calls "
                                       "WHERE meeting_id = ?", (called.run.id,))
    assert row is not None and row["n"] > 0
    return called.estimate.usd, float(row["usd"]), called.estimate.learned_from


async def test_ten_meetings_estimated_from_the_ledgers_history_within_25_percent(workspace: Path,
                                                                                  data_dir: Path) -> None:
    model = ScriptedModel(default=brain)
    board = await board_with(workspace, data_dir, model, prices=PRICES,
                             meetings=MeetingSettings(budget_usd=100.0),
                             custom_rosters={"duo": ["general", "finance", "critic"]})
    try:
        # the first meeting has no history: it is estimated from the defaults, and says so
        first, cost, learned_from = await held(board, "Warm-up: should we open a Pune office?", "board", 2, True)
        assert learned_from == 0
        print(f"warm-up (defaults): estimate ${first:.4f}, ledger ${cost:.4f}")
        worst = 0.0
        for number, (roster, rounds, parallel) in enumerate(MEETINGS, start=1):
            said, spent, learned_from = await held(board, f"Question {number}: should we hire in {roster}?",
                                                   roster, rounds, parallel)
            error = abs(said - spent) / spent
            worst = max(worst, error)
            print(f"meeting {number:2d} {roster:5s} {rounds} round(s) {'parallel' if parallel else 'in turn':8s}: "
                  f"estimate ${said:.4f}, ledger ${spent:.4f}, off by {error:.1%} (from {learned_from} meetings)")
            assert learned_from == min(number, 10)  # the history is the earlier meetings in this db
            assert error <= 0.25, f"meeting {number}: estimate ${said:.4f} vs ledger ${spent:.4f}"
        print(f"worst: {worst:.1%}")
        assert model.requests  # the meetings really ran on the scripted model
    finally:
        await board.close()


def test_without_history_the_defaults_and_prices_make_the_estimate_and_an_unpriced_model_is_said() -> None:
    priced = ModelPrice(input=3.0, output=15.0)
    chair = Seat("general", "The Chair", "anthropic:x", priced)
    members = (Seat("finance", "Finance", "anthropic:x", priced), Seat("critic", "Critic", "local:y", None))
    plan = Plan(roster="board", chair=chair, members=members, rounds=2, challenger="critic", budget_usd=0.01)
    said = estimate(plan, TokenHistory())
    tokens = DEFAULT_TOKENS
    expected = (priced.cost(tokens[Phase.FRAMING].usage()) + priced.cost(tokens[Phase.SYNTHESIS].usage())
                + priced.cost(tokens[Phase.STATEMENT].usage(2)))
    assert said.usd == pytest.approx(expected)
    assert said.unpriced == ("local:y",) and said.needs_start(5.0) and not said.needs_start(0)
    assert said.calls == 1 + 2 + 2 + 1 + 1
    text = said.text()
    assert "defaults (no earlier meeting to learn from)" in text and "local:y: no price" in text
    assert "above the $0.01 budget" in text and "anthropic:x: $3 in / $15 out per million tokens" in text
