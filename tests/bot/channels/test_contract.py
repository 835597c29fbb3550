"""The channel contract: what every channel owes its users, run over every channel's harness.

Each test speaks only through :class:`tests.support.channels.Harness` (native messages in,
replies read where the service shows them) and a model that records its calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from board.app import Board
from board.llm.base import LLMRequest, LLMResponse, Usage
from tests.support.channels import HARNESSES, Harness, wait_for
from tests.support.telegram import RecordingModel, last_user_text, use_model


@pytest.fixture(params=sorted(HARNESSES))
async def harness(request: pytest.FixtureRequest, board: Board) -> AsyncIterator[Harness]:
    async with HARNESSES[request.param](board) as h:
        await h.start()
        yield h


def question(text: str) -> str:
    return text.rsplit(": ", 1)[-1]  # group messages reach the model as "<sender>: <text>"


def answers_to(harness: Harness, text: str) -> int:
    return sum(1 for r in harness.all_replies() if r.endswith(f"answers: {text}"))


async def test_a_message_delivered_three_times_and_again_after_a_restart_is_answered_once(
    harness: Harness, board: Board
) -> None:
    model = use_model(board, RecordingModel(answer=lambda r: f"x answers: {question(last_user_text(r))}"))
    message = harness.send(3, "once only?")
    await wait_for(lambda: answers_to(harness, "once only?") == 1, "the answer")
    await harness.redeliver(message)
    await harness.redeliver(message)
    harness.send(3, "sentinel")  # same conversation: answered after the redeliveries were handled
    await wait_for(lambda: answers_to(harness, "sentinel") == 1, "the sentinel")
    await harness.stop()
    await harness.start()
    await harness.redeliver(message)
    harness.send(3, "sentinel 2")
    await wait_for(lambda: answers_to(harness, "sentinel 2") == 1, "the second sentinel")
    assert answers_to(harness, "once only?") == 1
    assert [question(last_user_text(c)) for c in model.calls] == ["once only?", "sentinel", "sentinel 2"]


async def test_a_turn_cut_off_mid_answer_is_answered_once_after_the_restart(harness: Harness, board: Board) -> None:
    release = asyncio.Event()
    calls: list[str] = []

    class Slow:
        name = "offline"

        async def complete(self, request: LLMRequest) -> LLMResponse:
            text = question(last_user_text(request))
            calls.append(text)
            if len(calls) == 1:
                await release.wait()  # the first call never ends: the process "dies" mid-turn
            return LLMResponse(text=f"{request.persona.name} answers: {text}", model="offline",
                               usage=Usage(input_tokens=1, output_tokens=1))

    use_model(board, Slow())
    harness.send(0, "cut off")
    harness.send(0, "queued behind it")
    await wait_for(lambda: calls == ["cut off"], "the first turn to start")
    await harness.stop(grace=0)  # nothing finished; both stay stored
    assert harness.all_replies() == []
    await harness.start()
    await wait_for(lambda: answers_to(harness, "queued behind it") == 1, "both answers after the restart")
    assert answers_to(harness, "cut off") == 1
    replies = harness.replies(0)
    assert replies.index(next(r for r in replies if r.endswith("cut off"))) < \
        replies.index(next(r for r in replies if r.endswith("queued behind it")))  # order kept across the restart


async def test_a_stranger_costs_no_model_call(harness: Harness, board: Board) -> None:
    model = use_model(board, RecordingModel(answer=lambda r: f"x answers: {question(last_user_text(r))}"))
    harness.send_as_stranger("let me in")
    harness.send_as_stranger("please")
    harness.send(3, "sentinel")
    await wait_for(lambda: answers_to(harness, "sentinel") == 1, "the sentinel")
    await asyncio.sleep(0.1)
    assert [question(last_user_text(c)) for c in model.calls] == ["sentinel"]
    assert not any("let me in" in r or r == "please" for r in harness.all_replies())


async def test_order_within_a_conversation_while_two_run_at_once(harness: Harness, board: Board) -> None:
    gate = asyncio.Event()
    log: list[tuple[str, str]] = []

    class Gated:
        name = "offline"

        async def complete(self, request: LLMRequest) -> LLMResponse:
            text = question(last_user_text(request))
            log.append(("start", text))
            if text == "a1":
                await asyncio.wait_for(gate.wait(), 10)
            log.append(("end", text))
            return LLMResponse(text=f"{request.persona.name} answers: {text}", model="offline",
                               usage=Usage(input_tokens=1, output_tokens=1))

    use_model(board, Gated())
    harness.send(0, "a1")
    harness.send(0, "a2")
    harness.send(1, "b1")
    await wait_for(lambda: answers_to(harness, "b1") == 1, "the other conversation's answer while a1 waits")
    assert ("start", "a2") not in log  # a2 waits for a1: one conversation, one turn at a time
    gate.set()
    await wait_for(lambda: answers_to(harness, "a2") == 1, "a2")
    assert log.index(("end", "a1")) < log.index(("start", "a2"))
    assert [r.rsplit(": ", 1)[-1] for r in harness.replies(0)] == ["a1", "a2"]


async def test_each_reply_lands_in_the_conversation_it_came_from(harness: Harness, board: Board) -> None:
    use_model(board, RecordingModel(answer=lambda r: f"x answers: {question(last_user_text(r))}"))
    for conversation in range(harness.conversations):
        harness.send(conversation, f"from {conversation}")
    await wait_for(lambda: len(harness.all_replies()) == harness.conversations, "every answer")
    for conversation in range(harness.conversations):
        assert [r.rsplit(": ", 1)[-1] for r in harness.replies(conversation)] == [f"from {conversation}"]


async def test_an_oversized_message_gets_the_too_long_reply_and_no_model_call(harness: Harness, board: Board) -> None:
    model = use_model(board, RecordingModel())
    harness.send(3, "x" * (board.settings.max_message_chars + 1))
    await wait_for(lambda: len(harness.replies(3)) == 1, "the reply")
    [reply] = harness.replies(3)
    assert "characters long; the limit is" in reply
    assert model.calls == []
