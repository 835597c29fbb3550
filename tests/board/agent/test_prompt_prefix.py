"""The cache-read share over a long chat (issue 44: it fell to 0.78-0.84 over 40 turns): what varies per turn
stays small and last. Over a chat on the fake Anthropic API, every turn's request repeats the previous turn's
cached prefix byte for byte (tools, system, history, up to its last breakpoint), the per-turn block comes after
every breakpoint, and the uncached input of a turn stays the per-turn block's size however long the chat."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from board.app import Board
from tests.board.agent.test_prompt_cache import (
    LONG,
    SMALL_CONTEXT,
    SUMMARISER,
    breakpoints,
    canonical,
    flat_blocks,
    is_summariser,
    text_of,
    turn_bodies,
)
from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.llm import LookupTool, anthropic_board, envelope, openai_board, session_entries

TURNS = 9  # 18 messages: under the 20 that start a compaction (which rewrites the prefix, as it should)


async def test_each_turn_repeats_the_previous_cached_prefix_byte_for_byte(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    board = await anthropic_board(tmp_path, workspace, fake_anthropic)
    try:
        for n in range(TURNS):
            fake_anthropic.script_text(f"Answer {n}: the margins hold if the price moves by {n} percent.")
            # a language line and a quoted name in every per-turn block
            await board.handle(envelope(f"Quelle est la marge du plan {n} pour Asha «la directrice» ?"))
        bodies = turn_bodies(fake_anthropic)
        assert len(bodies) == TURNS
        for previous, current in itertools.pairwise(bodies):
            cut = breakpoints(previous)[-1] + 1
            before = [canonical(b) for b in flat_blocks(previous)[:cut]]
            now = [canonical(b) for b in flat_blocks(current)[:cut]]
            assert now == before, "the cached prefix changed between turns"
        for body in bodies:
            blocks = flat_blocks(body)
            assert text_of(blocks[-1]).startswith("<turn_context>") and "Language:" in text_of(blocks[-1])
            assert breakpoints(body)[-1] == len(blocks) - 2  # only the per-turn block after the last breakpoint
        rows = await board.parts.db.fetchall("SELECT input_tokens FROM llm_calls WHERE purpose = 'turn' ORDER BY id")
        assert len({r["input_tokens"] for r in rows}) <= 2 and max(r["input_tokens"] for r in rows) < 90
    finally:
        await board.close()


# -- the summariser reads the turns' cached prefix --------------------------------------------


#: Questions: they state nothing about their writer, so no memory extraction is asked after a turn.
ASK = "What should we decide about the Pune warehouse lease, the hiring plan and the GST filing calendar? " * 3


async def _chat_until_compacted(board: Board, fake: FakeAnthropic | FakeOpenAI, key: str = "main") -> None:
    """Talk until the history went over its budget twice (two compactions), then once more."""
    for turn in range(30):
        if isinstance(fake, FakeAnthropic):
            fake.script_text(f"Answer {turn}: the lease, the hires and the GST calendar hold; {LONG[:120]}")
        await board.handle(envelope(f"Point {turn}: {ASK}"))
        if sum(1 for e in await session_entries(board, key) if e["type"] == "compaction") >= 2:
            break
    else:
        raise AssertionError("the history never went over its budget twice")
    await board.handle(envelope("And where does that leave the lease?"))


async def test_the_summariser_is_asked_on_the_previous_turns_cached_prefix_byte_for_byte(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    board = await anthropic_board(tmp_path, workspace, fake_anthropic, extra=SMALL_CONTEXT)
    board.parts.tools.register(LookupTool().tool())
    try:
        await _chat_until_compacted(board, fake_anthropic)
        bodies = [r.body for r in fake_anthropic.requests]
        asked = [i for i, b in enumerate(bodies) if is_summariser(b)]
        assert len(asked) == 2
        for i in asked:
            summariser, previous = bodies[i], bodies[i - 1]  # the turn before the one that compacted
            assert not is_summariser(previous)
            assert summariser["tools"] == previous["tools"] and "lookup" in [t["name"] for t in summariser["tools"]]
            assert summariser["tool_choice"] == previous["tool_choice"] == {"type": "auto"}  # keys the message cache
            assert summariser.get("thinking") == previous.get("thinking")
            cut = breakpoints(previous)[-1] + 1  # the previous turn's whole cached prefix
            assert [canonical(b) for b in flat_blocks(summariser)[:cut]] == \
                [canonical(b) for b in flat_blocks(previous)[:cut]], "the summariser's prefix is not the turn's"
            assert cut - 1 in breakpoints(summariser)  # and it reads it there
            assert text_of(flat_blocks(summariser)[-1]).startswith(SUMMARISER)  # the instruction last
            assert "<turn_context>" not in json.dumps(summariser["messages"])
        rows = await board.parts.db.fetchall(
            "SELECT purpose, input_tokens, cache_read_tokens, cache_write_tokens FROM llm_calls ORDER BY id")
        assert [r["purpose"] for r in rows].count("compaction") == 2
        for i, row in enumerate(rows):
            if row["purpose"] == "compaction":  # reads all the previous turn read and wrote
                before = next(r for r in reversed(rows[:i]) if r["purpose"] == "turn")
                assert row["cache_read_tokens"] == before["cache_read_tokens"] + before["cache_write_tokens"]
                assert row["cache_write_tokens"] == 0
        records = [e for e in await session_entries(board, "main") if e["type"] == "compaction"]
        assert all(r["summary"] and r["summarized_messages"] > 0 for r in records)
    finally:
        await board.close()


def _read_share(rows: list[Any]) -> float:
    whole = sum(r["input_tokens"] + r["cache_read_tokens"] + r["cache_write_tokens"] for r in rows)
    return sum(r["cache_read_tokens"] for r in rows) / whole


async def test_cache_read_share_of_a_chat_with_compactions_is_at_least_0_9_on_anthropic(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    board = await anthropic_board(tmp_path, workspace, fake_anthropic, extra=SMALL_CONTEXT)
    board.parts.tools.register(LookupTool().tool())
    try:
        await _chat_until_compacted(board, fake_anthropic)
        rows = await board.parts.db.fetchall(
            "SELECT purpose, input_tokens, cache_read_tokens, cache_write_tokens FROM llm_calls ORDER BY id")
        summaries = [r for r in rows if r["purpose"] == "compaction"]
        assert len(summaries) == 2
        assert _read_share(summaries) >= 0.9, "the summariser's input is not read from the cache"
        # the first turn writes the prefix every later call reads (over 40 turns it is 2 % of the input:
        # benchmarks/prompt_tokens.py); after it, the turns and the summaries read >= 0.9 of their input
        assert _read_share(rows[1:]) >= 0.9
    finally:
        await board.close()


async def test_cache_read_share_of_a_chat_with_compactions_is_at_least_0_9_on_openai(
    tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI
) -> None:
    board = await openai_board(tmp_path, workspace, fake_openai, extra=SMALL_CONTEXT)
    board.parts.tools.register(LookupTool().tool())
    try:
        await _chat_until_compacted(board, fake_openai)
        summariser = [r.body for r in fake_openai.requests if r.body["messages"][-1]["content"].startswith(SUMMARISER)]
        assert len(summariser) == 2 and all(b["tool_choice"] == "auto" and b["tools"] for b in summariser)
        rows = await board.parts.db.fetchall(
            "SELECT purpose, input_tokens, cache_read_tokens, cache_write_tokens FROM llm_calls ORDER BY id")
        summaries = [r for r in rows if r["purpose"] == "compaction"]
        assert len(summaries) == 2
        assert _read_share(summaries) >= 0.9, "the summariser's input is not read from the cache"
        # the first turn writes the prefix every later call reads (over 40 turns it is 2 % of the input:
        # benchmarks/prompt_tokens.py); after it, the turns and the summaries read >= 0.9 of their input
        assert _read_share(rows[1:]) >= 0.9
    finally:
        await board.close()


async def test_a_summariser_that_calls_a_tool_runs_none_and_is_asked_again_on_its_own(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    board = await anthropic_board(tmp_path, workspace, fake_anthropic, extra=SMALL_CONTEXT)
    lookup = LookupTool()
    board.parts.tools.register(lookup.tool())
    try:
        for turn in range(4):  # under the budget: no compaction yet
            fake_anthropic.script_text(f"Answer {turn}: the lease, the hires and the GST calendar hold; {LONG[:120]}")
            await board.handle(envelope(f"Point {turn}: {ASK}"))
        assert not [e for e in await session_entries(board, "main") if e["type"] == "compaction"]
        first = len(fake_anthropic.requests)
        fake_anthropic.script_tool_call("lookup", {"q": "tea"})  # the summariser, on the turn's prefix
        fake_anthropic.script_text("SUMMARY: the lease, the hires and the GST calendar.")  # asked on its own
        fake_anthropic.script_text("The lease first.")  # the turn
        reply = await board.handle(envelope(f"Point 4: {ASK}"))
        assert reply.text == "The lease first." and not reply.degraded
        assert not lookup.seen, "the summariser's tool call was run"
        on_prefix, on_its_own, turn_body = (r.body for r in fake_anthropic.requests[first:])
        assert text_of(flat_blocks(on_prefix)[-1]).startswith(SUMMARISER) and on_prefix["tools"]
        assert text_of(on_its_own["system"][0]).startswith(SUMMARISER) and "tools" not in on_its_own
        assert not is_summariser(turn_body)
        records = [e for e in await session_entries(board, "main") if e["type"] == "compaction"]
        assert [r["summary"] for r in records] == ["SUMMARY: the lease, the hires and the GST calendar."]
        rows = await board.parts.db.fetchall("SELECT purpose FROM llm_calls ORDER BY id")
        assert [r["purpose"] for r in rows][-3:] == ["compaction", "compaction", "turn"]
    finally:
        await board.close()
