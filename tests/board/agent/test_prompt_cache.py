"""Prompt caching across turns: the rolling cache boundary, stable history between compactions, the per-turn
block after every breakpoint, and what caching saved in the ledger.

Through the real board and providers against the fake Anthropic and OpenAI servers (tests/support/fakes), the
scripted model and the offline model; no mocks of Sabha's own code.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import anthropic
import pytest

from board.agent.compaction import ContextSettings
from board.llm.base import LLMRequest
from board.llm.tokens import counter_for
from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.scripted_model import ScriptedModel, Step, fail, say
from tests.support.llm import LookupTool, anthropic_board, envelope, openai_board, scripted_board, session_entries

SUMMARISER = "You keep the running memory"
LONG = "We went through the Pune warehouse lease, the hiring plan and the GST filing calendar in detail. " * 3
SMALL_CONTEXT = """
  context: {history_tokens: 500, keep_recent_messages: 2}
"""


def flat_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's blocks in the API's cache order: tools, system, then each message's content."""
    blocks: list[dict[str, Any]] = list(body.get("tools") or [])
    blocks += body.get("system") or []
    for message in body["messages"]:
        content = message["content"]
        blocks += [{"type": "text", "text": content}] if isinstance(content, str) else content
    return blocks


def breakpoints(body: dict[str, Any]) -> list[int]:
    return [i for i, b in enumerate(flat_blocks(body)) if "cache_control" in b]


def canonical(block: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)


def turn_bodies(fake: FakeAnthropic) -> list[dict[str, Any]]:
    """The bodies of the chat turns (summariser calls left out)."""
    return [r.body for r in fake.requests if not is_summariser(r.body)]


def is_summariser(body: dict[str, Any]) -> bool:
    """A summariser's request: asked on its own (its system prompt) or on the turn's prefix (its last message)."""
    last = body["messages"][-1]["content"]
    last_text = last if isinstance(last, str) else text_of(last[0])
    return text_of((body.get("system") or [{}])[0]).startswith(SUMMARISER) or last_text.startswith(SUMMARISER)


def text_of(block: dict[str, Any]) -> str:
    return str(block.get("text", ""))


# -- the Anthropic request -------------------------------------------------------------------


async def test_anthropic_breakpoints_on_the_static_block_and_the_history_end(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    for n in range(3):
        fake_anthropic.script_text(f"Answer {n}.")
    board = await anthropic_board(tmp_path, workspace, fake_anthropic)
    try:
        for question in ("where should we expand?", "and after that?", "what would change your mind?"):
            await board.handle(envelope(f"@strategy {question}"))
        first, second, third = (r.body for r in fake_anthropic.requests)

        [static] = first["system"]
        assert static["cache_control"] == {"type": "ephemeral"} and "# This conversation" not in static["text"]
        assert second["system"] == third["system"] == [static]  # byte-identical static block

        # the new message ends in a breakpoint; the per-turn block follows it, last in the request
        [message] = first["messages"]
        assert [b.get("cache_control") for b in message["content"]] == [{"type": "ephemeral"}, None]
        assert message["content"][0]["text"] == "where should we expand?"
        assert message["content"][1]["text"].startswith("<turn_context>\n# This conversation")

        # turn 2 keeps turn 1's breakpoint (it reads what turn 1 wrote) and adds one at its own end
        assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
        assert second["messages"][0] == {"role": "user", "content": [message["content"][0]]}  # no per-turn block now
        blocks = flat_blocks(second)
        assert [text_of(blocks[i]) for i in breakpoints(second)] == [
            static["text"], "where should we expand?", "and after that?"]
        assert len(breakpoints(third)) == 3 <= 4

        rows = await board.parts.db.fetchall(
            "SELECT cache_read_tokens, cache_write_tokens, input_tokens FROM llm_calls ORDER BY id")
        # each turn reads from the cache everything the turn before wrote and writes only the new exchange
        assert rows[0]["cache_read_tokens"] == 0 and rows[0]["cache_write_tokens"] > 0
        assert rows[1]["cache_read_tokens"] == rows[0]["cache_write_tokens"]
        assert rows[2]["cache_read_tokens"] == rows[1]["cache_read_tokens"] + rows[1]["cache_write_tokens"]
        # only the per-turn block (and the reply priming) is sent uncached, however long the history grows
        # (the block names the language to answer in since issue 25: about ten tokens more than the 60 it was)
        assert rows[0]["input_tokens"] == rows[1]["input_tokens"] == rows[2]["input_tokens"] < 75

        entries = await session_entries(board, "board:strategy")
        users = [e["text"] for e in entries if e.get("role") == "user"]
        assert users == ["where should we expand?", "and after that?", "what would change your mind?"]
        assert "turn_context" not in json.dumps(entries)  # the transcript holds the user's own words only
    finally:
        await board.close()


async def test_tool_rounds_get_breakpoints_within_four_and_the_per_turn_block_stays_last(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script_text("Earlier answer.")
    fake_anthropic.script_tool_call("lookup", {"q": "tea"}, call_id="toolu_1")
    fake_anthropic.script_tool_call("lookup", {"q": "rice"}, call_id="toolu_2")
    fake_anthropic.script_text("Tea and rice: 18%.")
    board = await anthropic_board(tmp_path, workspace, fake_anthropic)
    board.parts.tools.register(LookupTool().tool())
    try:
        await board.handle(envelope("@finance hello"))
        reply = await board.handle(envelope("@finance GST on tea and rice?"))
        assert reply.text == "Tea and rice: 18%."
        steps = [r.body for r in fake_anthropic.requests[1:]]
        for step in steps:
            blocks = flat_blocks(step)
            assert 1 <= len(breakpoints(step)) <= 4
            assert blocks[-1]["text"].startswith("<turn_context>") and "cache_control" not in blocks[-1]
        # step 2 reads step 1's prompt (through the question) and marks the end of the tool round it adds
        third = flat_blocks(steps[2])
        marked = [third[i] for i in breakpoints(steps[2])]
        assert marked[0] is third[len(steps[2]["tools"])]  # the static block keeps its breakpoint
        assert [b.get("type") for b in marked[-2:]] == ["tool_result", "tool_result"]
        rows = await board.parts.db.fetchall("SELECT cache_read_tokens, cache_write_tokens FROM llm_calls ORDER BY id")
        assert rows[2]["cache_read_tokens"] == rows[1]["cache_read_tokens"] + rows[1]["cache_write_tokens"]
        assert rows[3]["cache_read_tokens"] == rows[2]["cache_read_tokens"] + rows[2]["cache_write_tokens"]
    finally:
        await board.close()


async def test_compaction_keeps_the_next_turns_prefix_equal_to_the_one_after_it(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    board = await anthropic_board(tmp_path, workspace, fake_anthropic, extra=SMALL_CONTEXT)
    try:
        turn = 0
        while turn == 0 or not any(e["type"] == "compaction" for e in await session_entries(board, "main")):
            await board.handle(envelope(f"Point {turn}: {LONG}"))
            turn += 1
            assert turn < 20, "the history never went over its budget"
        compacted_at = len(turn_bodies(fake_anthropic)) - 1  # the turn that compacted first
        for n in range(3):
            await board.handle(envelope(f"Follow-up {n}"))
        bodies = turn_bodies(fake_anthropic)
        after, next_one, last = bodies[compacted_at + 1], bodies[compacted_at + 2], bodies[compacted_at + 3]
        assert [b["text"].split("\n")[0] for b in after["system"]] == \
            [after["system"][0]["text"].split("\n")[0], "# Earlier in this conversation (summary)"]

        for earlier, later in ((after, next_one), (next_one, last)):
            cut = breakpoints(earlier)[-1]  # the end of the earlier turn's message
            prefix = [canonical(b) for b in flat_blocks(earlier)[: cut + 1]]
            assert [canonical(b) for b in flat_blocks(later)[: cut + 1]] == prefix
        rows = await board.parts.db.fetchall(
            "SELECT purpose, cache_read_tokens, cache_write_tokens FROM llm_calls WHERE purpose = 'turn' ORDER BY id")
        for earlier, later in itertools.pairwise(rows[compacted_at + 1 :]):
            assert later["cache_read_tokens"] == earlier["cache_read_tokens"] + earlier["cache_write_tokens"]
    finally:
        await board.close()


async def test_per_turn_block_never_precedes_a_breakpoint(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    board = await anthropic_board(tmp_path, workspace, fake_anthropic, extra=SMALL_CONTEXT)
    board.parts.tools.register(LookupTool().tool())
    try:
        for n in range(9):
            if n == 3:
                fake_anthropic.script_tool_call("lookup", {"q": "tea"})
            await board.handle(envelope(f"@finance Point {n}: {LONG}"))
        await board.handle(envelope("/compact finance"))
        await board.handle(envelope("@finance and now?"))
        compactions = [e for e in await session_entries(board, "board:finance") if e["type"] == "compaction"]
        assert len(compactions) >= 2  # by budget and by /compact
        checked = 0
        for body in turn_bodies(fake_anthropic):
            blocks = flat_blocks(body)
            dynamic = [i for i, b in enumerate(blocks) if text_of(b).startswith("<turn_context>")]
            assert len(dynamic) == 1, "one per-turn block per request"
            assert all(i < dynamic[0] for i in breakpoints(body)), "a breakpoint after the per-turn block"
            assert dynamic[0] == len(blocks) - 1
            assert not any("# This conversation" in text_of(b) for b in body["system"])
            checked += 1
        assert checked == 11  # ten turns, one of them with a tool round
    finally:
        await board.close()


# -- OpenAI and compatible servers -----------------------------------------------------------


async def test_openai_prompt_is_the_previous_one_plus_the_new_exchange_and_cached_tokens_are_recorded(
    tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_text("First.")
    fake_openai.script_text("Second.")
    board = await openai_board(tmp_path, workspace, fake_openai)
    try:
        await board.handle(envelope("@research what do we know about the market?"))
        await board.handle(envelope("@research and the competitors?"))
        first, second = (r.body["messages"] for r in fake_openai.requests)
        assert "# This conversation" not in first[0]["content"]  # the system message is the static block only
        assert first[-1]["content"].startswith("what do we know about the market?\n\n<turn_context>\n")
        # identical up to the earlier question's text: only its per-turn block is not repeated
        assert second[:-3] == first[:-1]
        assert second[-3] == {"role": "user", "content": "what do we know about the market?"}
        assert second[-1]["content"].startswith("and the competitors?\n\n<turn_context>")

        rows = await board.parts.db.fetchall(
            "SELECT input_tokens, cache_read_tokens, cache_write_tokens, saved_usd FROM llm_calls ORDER BY id")
        # usage.prompt_tokens_details.cached_tokens: the fake caches 1024+ token prompts in 128-token steps
        cached = rows[1]["cache_read_tokens"]
        assert rows[0]["cache_read_tokens"] == 0 and cached >= 1024 and cached % 128 == 0
        assert rows[1]["cache_write_tokens"] == 0 and rows[1]["saved_usd"] > 0 and rows[0]["saved_usd"] == 0
        entries = await session_entries(board, "board:research")
        assert entries[-1]["usage"]["cache_read_tokens"] == cached
    finally:
        await board.close()


# -- history is cut in blocks -------------------------------------------------------------------


async def test_a_failed_summariser_cuts_the_history_in_blocks(workspace: Path, data_dir: Path) -> None:
    def no_summaries(request: LLMRequest) -> Step:
        if request.metadata.get("purpose") == "compaction":
            return fail("server")
        return say("Noted. " + LONG[:160])

    model = ScriptedModel(default=no_summaries)
    context = ContextSettings(history_tokens=600, keep_recent_messages=4)
    board = await scripted_board(workspace, data_dir, model, context=context)
    try:
        for n in range(16):
            reply = await board.handle(envelope(f"Point {n}: {LONG[:150]}"))
            assert not reply.degraded
        turns = [[m.content for m in r.request.messages] for r in model.requests_for("general", purpose="turn")]
        counter = counter_for("scripted:main")
        cuts = 0
        for earlier, later in itertools.pairwise(turns):
            if later[: len(earlier)] != earlier:  # the history's start moved
                cuts += 1
                dropped = next(i for i, text in enumerate(earlier) if text == later[0])
                assert dropped >= 4, "dropped a whole block, not one message"
        assert 1 <= cuts <= len(turns) // 2  # sliding would move it on every turn once over the budget
        for request in model.requests_for("general", purpose="turn"):
            assert counter.count_messages(request.request.messages[:-1]) <= 600
    finally:
        await board.close()


# -- meetings and one-off questions ------------------------------------------------------------


async def test_meetings_and_consultations_send_the_per_turn_block_after_the_question(
    workspace: Path, data_dir: Path
) -> None:
    model = ScriptedModel(default=lambda request: say(f"{request.persona.role}: a short view."))
    board = await scripted_board(workspace, data_dir, model)
    try:
        await board.handle(envelope("convene the board about raising prices"))
        await board.parts.room.drain(10)
        purposes = {r.purpose for r in model.requests}
        assert "meeting" in purposes
        for received in model.requests:
            request = received.request
            assert all(b.name != "dynamic" for b in request.system)  # moved out of the system prompt
            if received.purpose == "compaction":
                continue
            carriers = [m for m in request.messages if m.context]
            assert len(carriers) == 1 and carriers[0].role == "user"
            assert carriers[0].context.startswith("<turn_context>") and "Channel: console" in carriers[0].context
            # a chat turn marks its message for the next turn to read; a one-off question writes nothing
            assert carriers[0].cache_point == (received.purpose == "turn")
    finally:
        await board.close()


# -- what caching saved ------------------------------------------------------------------------


async def test_cost_shows_cached_input_and_what_caching_saved(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    board = await anthropic_board(tmp_path, workspace, fake_anthropic)
    try:
        for n in range(3):
            await board.handle(envelope(f"@critic point {n}"))
        rows = await board.parts.db.fetchall("SELECT saved_usd, cache_read_tokens FROM llm_calls ORDER BY id")
        assert rows[0]["saved_usd"] < 0 < rows[1]["saved_usd"] < rows[2]["saved_usd"]  # a write costs 1.25x
        report = (await board.handle(envelope("/cost"))).text
        head = report.splitlines()[1].split()
        assert head[3:7] == ["fresh", "in", "cached", "in"] and "saved" in head
        total = next(line for line in report.splitlines() if line.startswith("total")).split()
        assert int(total[4]) == sum(r["cache_read_tokens"] for r in rows)
        assert float(total[8]) == pytest.approx(sum(r["saved_usd"] for r in rows), abs=1e-4)
        assert "Prompt cache:" in report and "so it saved" in report
    finally:
        await board.close()


# -- the fake's cache model (the benchmark relies on it) ------------------------------------------------


async def test_fake_anthropic_cache_expires_after_five_minutes_and_looks_back_twenty_blocks(
    fake_anthropic: FakeAnthropic
) -> None:
    client = anthropic.AsyncAnthropic(base_url=fake_anthropic.url, api_key="test", max_retries=0)
    system = [{"type": "text", "text": "You are the chair. " * 40, "cache_control": {"type": "ephemeral"}}]

    def turns(n: int, mark_last: bool = True) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        for i in range(n):
            messages.append({"role": "user", "content": [{"type": "text", "text": f"question {i} " * 10}]})
            messages.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {i} " * 10}]})
        messages.append({"role": "user", "content": [{"type": "text", "text": "now? " * 10}]})
        if mark_last:
            messages[-1]["content"][0]["cache_control"] = {"type": "ephemeral"}
        return messages

    try:
        create = client.messages.create
        first = await create(model="claude-sonnet-4-6", max_tokens=64, system=system, messages=turns(1))
        written = first.usage.cache_creation_input_tokens
        fake_anthropic.advance_clock(200)
        # the same conversation two exchanges on: the only breakpoints are the system block and the new end,
        # but the end of turn 1's message lies within 20 blocks of it: read from the cache
        messages = turns(2)
        messages[2] = {"role": "user", "content": [{"type": "text", "text": "now? " * 10}]}
        later = await create(model="claude-sonnet-4-6", max_tokens=64, system=system, messages=messages)
        assert later.usage.cache_read_input_tokens == written
        fake_anthropic.advance_clock(299)  # the read refreshed the entry: still alive 499 s after it was written
        again = await create(model="claude-sonnet-4-6", max_tokens=64, system=system, messages=turns(1))
        assert again.usage.cache_read_input_tokens == written
        fake_anthropic.advance_clock(301)  # nothing read for over 5 minutes: expired
        cold = await create(model="claude-sonnet-4-6", max_tokens=64, system=system, messages=turns(1))
        assert cold.usage.cache_read_input_tokens == 0 and cold.usage.cache_creation_input_tokens == written
    finally:
        await client.close()
