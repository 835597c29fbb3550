"""Budgets: ``budget.daily_usd`` and ``budget.per_sender_daily_usd`` stop model calls.

A board on the scripted model where every model call costs exactly $1 (1000 input
tokens at $1000 per million): the tests count the model's requests before and after a
message the budget stops, read the fixed replies, the once-a-day log line and the owner's
note, and the ``sender`` the ledger records for each call.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.envelope import Envelope
from board.llm.base import Usage
from board.llm.pricing import ModelPrice, PriceTable
from board.roles import RosterSpec
from board.spending.budget import DAILY_REACHED, SENDER_REACHED, BudgetSettings
from board.storage.url import StateURL
from bot.app import all_migrations
from tests.support.fakes.scripted_model import ScriptedModel, Step
from tests.support.llm import FAST_RETRY

pytestmark = pytest.mark.backends

OWNER, FRIEND, OTHER = "42", "43", "44"


def dollar(request: object) -> Step:
    """Every call costs $1 at the test's price."""
    return Step(text="an answer", usage=Usage(input_tokens=1000, output_tokens=0))


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel(default=dollar)


async def open_board(workspace: Path, data_dir: Path, model: ScriptedModel, budget: BudgetSettings,
                     state: StateURL | None = None, history_messages: int = 20) -> Board:
    prices = PriceTable.with_overrides({"scripted:main": ModelPrice(input=1000, output=0)})
    settings = BoardSettings(
        workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
        agent=AgentSettings(default_model="scripted:main", retry=FAST_RETRY, prices=prices, max_tool_iterations=0,
                            history_messages=history_messages),
        budget=budget, state=state,
    )
    return await Board.open(settings, model.registry(), migrations=all_migrations())


@pytest.fixture
async def make_board(workspace: Path, data_dir: Path, model: ScriptedModel,
                     state_url: StateURL | None) -> AsyncIterator[object]:
    boards: list[Board] = []

    async def make(**budget: float) -> Board:
        board = await open_board(workspace, data_dir, model, BudgetSettings(**budget), state_url)
        boards.append(board)
        return board

    yield make
    for board in boards:
        await board.close()


_ids = iter(range(1, 10_000))


def msg(sender: str, text: str = "what do you think?") -> Envelope:
    return Envelope(channel="telegram", text=text, sender=sender, chat_id=sender, message_id=str(next(_ids)),
                    is_owner=sender == OWNER)


async def test_daily_budget_stops_model_calls_with_a_fixed_reply(make_board, model, caplog) -> None:  # type: ignore[no-untyped-def]
    board = await make_board(daily_usd=1.5)
    caplog.set_level(logging.WARNING, logger="sabha.budget")
    assert (await board.handle(msg(FRIEND))).text == "an answer"  # $1 spent
    assert (await board.handle(msg(OTHER))).text == "an answer"  # $1 < $1.5 before: answered; $2 now
    calls = len(model.requests)

    stopped = [await board.handle(msg(sender)) for sender in (FRIEND, OTHER, FRIEND)]
    meeting = await board.handle(msg(FRIEND, "/meeting should we expand to Germany?"))

    assert [r.text for r in stopped] == [DAILY_REACHED] * 3
    assert meeting.text == DAILY_REACHED
    assert len(model.requests) == calls, "a stopped message must not reach the model"
    reached = [r for r in caplog.records if "budget.daily_usd" in r.getMessage()]
    assert len(reached) == 1, "logged once a day, not once per message"
    assert "$2.0000" in reached[0].getMessage()

    owner = await board.handle(msg(OWNER))  # the owner is held to the daily budget too, and told why
    assert "Today's budget is spent" in owner.text and "budget.daily_usd $1.50" in owner.text
    assert "kill -HUP" in owner.text
    assert len(model.requests) == calls
    again = await board.handle(msg(OWNER))
    assert again.text.count("budget.daily_usd") == 1, "the owner's fixed reply, no second note"

    cheap = await board.handle(msg(FRIEND, "/roles"))  # commands that call no model still work
    assert "The board" in cheap.text


async def test_per_sender_budget_stops_only_that_sender_and_the_owner_is_told_once(make_board, model) -> None:  # type: ignore[no-untyped-def]
    board = await make_board(per_sender_daily_usd=0.5)
    assert (await board.handle(msg(FRIEND))).text == "an answer"
    calls = len(model.requests)

    assert (await board.handle(msg(FRIEND))).text == SENDER_REACHED
    assert (await board.handle(msg(FRIEND, "/compact"))).text == SENDER_REACHED
    assert len(model.requests) == calls
    assert (await board.handle(msg(OTHER))).text == "an answer", "another sender has their own budget"

    first = await board.handle(msg(OWNER))
    second = await board.handle(msg(OWNER))
    third = await board.handle(msg(OWNER))
    assert first.text.startswith("an answer"), "the owner is not held to the per-sender budget"
    assert "1 sender(s) reached budget.per_sender_daily_usd ($0.50) today (telegram:43)" in first.text
    assert second.text == third.text == "an answer", "the owner is told once"


async def test_budget_resets_at_midnight_utc(make_board, model) -> None:  # type: ignore[no-untyped-def]
    board = await make_board(daily_usd=0.5)
    await board.handle(msg(FRIEND))
    assert (await board.handle(msg(FRIEND))).text == DAILY_REACHED
    tomorrow = datetime.now(UTC) + timedelta(days=1)
    board.parts.budget.clock = lambda: tomorrow
    assert (await board.handle(msg(FRIEND))).text == "an answer"


async def test_a_reload_can_raise_the_budget(make_board, model, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The config file's budget raised and re-read by the reload path SIGHUP takes (``reload_config``): the
    next message is answered again."""
    from bot.config.load import load_config
    from bot.intake.config import InboxSection
    from bot.intake.intake import IntakeHub
    from bot.ops.reload import reload_config

    board = await make_board(daily_usd=0.5)
    config = tmp_path / "sabha.yaml"  # the board's own workspace and data dir (tmp_path/workspace, /sessions)
    config.write_text("workspace: ./workspace\ndata_dir: ./sessions\nbudget:\n  daily_usd: 0.5\n", encoding="utf-8")
    running = load_config(config, env={})
    await board.handle(msg(FRIEND))
    assert (await board.handle(msg(FRIEND))).text == DAILY_REACHED
    config.write_text(config.read_text(encoding="utf-8").replace("daily_usd: 0.5", "daily_usd: 10"), encoding="utf-8")
    result = reload_config(config, running, board=board, runner=board.parts.runner, budget=board.parts.budget,
                           hub=IntakeHub(InboxSection()), channels=[])
    assert result.error is None and result.applied == ["budget.daily_usd: 0.5 -> 10.0"], result
    assert (await board.handle(msg(FRIEND))).text == "an answer"


async def test_the_ledger_records_who_each_call_was_for(make_board, model) -> None:  # type: ignore[no-untyped-def]
    board = await make_board()
    await board.handle(msg(FRIEND))
    await board.handle(msg(OWNER))
    await board.handle(Envelope(channel="whatsapp", text="hi", sender="15550001111", chat_id="15550001111",
                                message_id="wamid.1"))
    since = datetime.now(UTC) - timedelta(hours=1)
    assert await board.parts.ledger.spent(since=since, sender="telegram:43") == pytest.approx(1.0)
    assert await board.parts.ledger.spent(since=since) == pytest.approx(3.0)
    by_sender = dict(await board.parts.ledger.spent_by_sender(since=since))
    assert by_sender == {"telegram:42": 1.0, "telegram:43": 1.0, "whatsapp:15550001111": 1.0}


async def test_no_summary_is_paid_for_after_an_answer_once_the_daily_budget_is_spent(
        workspace: Path, data_dir: Path, model: ScriptedModel, state_url: StateURL | None) -> None:
    """A history due for compaction is summarised after the answer that made it due (:meth:`Board.after`), unless
    the day's budget is spent by then: the next message is told about the budget, and no summary is paid for."""
    board = await open_board(workspace, data_dir, model, BudgetSettings(daily_usd=2.5), state_url, history_messages=4)
    try:
        for _ in range(3):  # $1 a call: $3 once the third is answered (it was asked at $2, under $2.50)
            asked = msg(FRIEND)
            reply = await board.handle(asked)
            assert reply.text == "an answer"
            calls = len(model.requests)
            await board.after(asked, reply)
        assert len(model.requests) == calls, "a summary was asked past the day's budget"
        asked = msg(FRIEND)
        assert (await board.handle(asked)).text == DAILY_REACHED
    finally:
        await board.close()
