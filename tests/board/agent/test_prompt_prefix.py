"""The cache-read share over a long chat (issue 44: it fell to 0.78-0.84 over 40 turns): what varies per turn
stays small and last. Over a chat on the fake Anthropic API, every turn's request repeats the previous turn's
cached prefix byte for byte (tools, system, history, up to its last breakpoint), the per-turn block comes after
every breakpoint, and the uncached input of a turn stays the per-turn block's size however long the chat."""

from __future__ import annotations

import itertools
from pathlib import Path

from tests.board.agent.test_prompt_cache import breakpoints, canonical, flat_blocks, text_of, turn_bodies
from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.llm import anthropic_board, envelope

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
