"""The real openai / anthropic SDKs, wired from config, against local HTTP fakes of both APIs.

Each test builds the board the way the daemon does (config -> build_providers -> Board)
with ``base_url`` pointing at an aiohttp server on 127.0.0.1, then asserts what the
server received (system prompt, soul, tool schemas, cache markers) and what the agent
did (reply, transcript, ledger).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.llm import (
    FAST_RETRY_YAML,
    LookupTool,
    anthropic_board,
    configured_board,
    envelope,
    openai_board,
    session_entries,
)


def soul_phrase(workspace: Path, role: str) -> str:
    path = workspace / ("SOUL.md" if role == "general" else f"board/{role}.soul.md")
    body = path.read_text(encoding="utf-8").split("---")[-1]
    return next(line for line in body.splitlines() if line.strip() and not line.startswith("#")).strip()[:60]


# -- OpenAI ---------------------------------------------------------------------------


async def test_openai_tool_call_round_trip(tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.script_tool_call("lookup", {"q": "laptops"}, call_id="call_gst")
    fake_openai.script_text("GST on laptops is 18%, per the lookup.")
    board = await openai_board(tmp_path, workspace, fake_openai)
    lookup = LookupTool()
    board.parts.tools.register(lookup.tool())
    try:
        reply = await board.handle(envelope("@finance what GST do we pay on laptops?"))
        assert reply.text == "GST on laptops is 18%, per the lookup."
        assert not reply.degraded

        first, second = fake_openai.requests
        system = first.body["messages"][0]
        assert system["role"] == "system"
        assert soul_phrase(workspace, "finance") in system["content"]
        last = first.body["messages"][-1]
        assert last["role"] == "user" and last["content"].startswith("what GST do we pay on laptops?\n\n<turn_context>")
        assert "Channel: console" in last["content"] and "Channel" not in system["content"]
        tool = next(t["function"] for t in first.body["tools"] if t["function"]["name"] == "lookup")
        assert tool["name"] == "lookup" and tool["parameters"]["required"] == ["q"]
        assert first.headers["authorization"] == "Bearer sk-test"
        # the tool result went back to the model, tied to the call id
        tool_msg = second.body["messages"][-1]
        assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_gst"
        assert json.loads(tool_msg["content"]) == {"ok": True, "result": {"answer": "GST on laptops is 18%"}}
        assert lookup.seen[0][0] == {"q": "laptops"} and lookup.seen[0][1].role == "finance"

        entries = await session_entries(board, "board:finance")
        assert [e["type"] for e in entries] == ["message", "tool_call", "tool_result", "message"]
        call, result, answer = entries[1], entries[2], entries[3]
        assert call["name"] == "lookup" and call["arguments"] == {"q": "laptops"}
        assert call["model"] == "openai:gpt-4o-mini" and call["usage"]["input_tokens"] > 0
        assert result["ok"] is True and result["id"] == call["id"] == "call_gst"
        assert answer["model"] == "openai:gpt-4o-mini" and answer["llm_calls"] == 2
        assert answer["usage"]["output_tokens"] > 0 and answer["cost_usd"] > 0
    finally:
        await board.close()


async def test_openai_429_then_success_is_retried(tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.script_error(429, "rate_limit_exceeded", headers={"retry-after-ms": "20"})
    fake_openai.script_text("Runway is 14 months.")
    board = await openai_board(tmp_path, workspace, fake_openai)
    try:
        reply = await board.handle(envelope("what is our runway?"))
        assert reply.text == "Runway is 14 months." and not reply.degraded
        assert len(fake_openai.requests) == 2
        assert fake_openai.requests[0].body == fake_openai.requests[1].body  # the same request, retried
        rows = await board.parts.db.fetchall("SELECT outcome, attempt, model FROM llm_calls ORDER BY id")
        assert [(r["outcome"], r["attempt"]) for r in rows] == [("rate_limit", 1), ("ok", 2)]
    finally:
        await board.close()


async def test_openai_streaming_records_time_to_first_token(
    tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script_tool_call("lookup", {"q": "phones"})
    fake_openai.script_text("Phones: 18%.")
    board = await openai_board(tmp_path, workspace, fake_openai, stream=True)
    board.parts.tools.register(LookupTool().tool())
    try:
        reply = await board.handle(envelope("GST on phones?"))
        assert reply.text == "Phones: 18%."
        assert all(r.body["stream"] is True for r in fake_openai.requests)
        rows = await board.parts.db.fetchall("SELECT ttft_ms, output_tokens FROM llm_calls ORDER BY id")
        assert len(rows) == 2 and all(r["ttft_ms"] is not None and r["output_tokens"] > 0 for r in rows)
    finally:
        await board.close()


async def test_openai_compatible_server_needs_no_key(tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    yaml_text = f"""
llm:
  model: openai:llama3.1
  providers:
    openai: {{base_url: "{fake_openai.base_url}"}}
"""
    fake_openai.script_text("Hello from a local model.")
    board = await configured_board(tmp_path, workspace, yaml_text, env={})
    try:
        reply = await board.handle(envelope("hi"))
        assert reply.text == "Hello from a local model."
        body = fake_openai.last_request.body
        assert body["model"] == "llama3.1" and "max_tokens" in body  # compatible servers know max_tokens
    finally:
        await board.close()


# -- Anthropic -----------------------------------------------------------------------


async def test_anthropic_static_block_carries_cache_marker_and_hits_cache(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.script_text("First answer.")
    fake_anthropic.script_text("Second answer.")
    board = await anthropic_board(tmp_path, workspace, fake_anthropic)
    try:
        await board.handle(envelope("@strategy where should we expand?"))
        reply = await board.handle(envelope("@strategy and after that?"))
        assert reply.text == "Second answer."
        first, second = (r.body for r in fake_anthropic.requests)
        [static] = first["system"]
        assert static["cache_control"] == {"type": "ephemeral"}
        assert soul_phrase(workspace, "strategy") in static["text"]
        dynamic = first["messages"][-1]["content"][-1]  # the per-turn block comes last, uncached
        assert dynamic["text"].startswith("<turn_context>") and "cache_control" not in dynamic
        assert second["system"][0] == static  # byte-identical static block on the next turn
        assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]

        entries = await session_entries(board, "board:strategy")
        usage = [e["usage"] for e in entries if e.get("role") == "assistant"]
        assert usage[0]["cache_write_tokens"] > 0 and usage[0]["cache_read_tokens"] == 0
        assert usage[1]["cache_read_tokens"] == usage[0]["cache_write_tokens"]
        rows = await board.parts.db.fetchall(
            "SELECT cache_read_tokens, cache_write_tokens, cost_usd FROM llm_calls ORDER BY id"
        )
        assert rows[1]["cache_read_tokens"] > 0 and rows[0]["cache_write_tokens"] > 0
        assert all(r["cost_usd"] > 0 for r in rows)
    finally:
        await board.close()


async def test_anthropic_tool_use_round_trip(tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script_tool_call("lookup", {"q": "tea"}, call_id="toolu_tea", text="Let me check.")
    fake_anthropic.script_text("Tea is taxed at 18% here.")
    board = await anthropic_board(tmp_path, workspace, fake_anthropic)
    board.parts.tools.register(LookupTool().tool())
    try:
        reply = await board.handle(envelope("GST on tea?"))
        assert reply.text == "Tea is taxed at 18% here."
        first, second = (r.body for r in fake_anthropic.requests)
        lookup = next(t for t in first["tools"] if t["name"] == "lookup")
        assert lookup == {
            "name": "lookup", "description": "Look up a tax rate.", "input_schema": lookup["input_schema"]
        }
        assert lookup["input_schema"]["required"] == ["q"]
        assistant, results = second["messages"][-2:]
        assert assistant["role"] == "assistant"
        assert assistant["content"][-1] == {
            "type": "tool_use", "id": "toolu_tea", "name": "lookup", "input": {"q": "tea"}
        }
        assert results["role"] == "user" and results["content"][0]["type"] == "tool_result"
        assert results["content"][0]["tool_use_id"] == "toolu_tea"
        assert "18%" in results["content"][0]["content"]
    finally:
        await board.close()


async def test_anthropic_bad_key_is_not_retried(
    tmp_path: Path, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with FakeAnthropic(api_key="the-right-key") as fake:
        board = await anthropic_board(tmp_path, workspace, fake, key="a-wrong-key")
        try:
            with caplog.at_level(logging.ERROR):
                reply = await board.handle(envelope("hello"))
            assert reply.degraded and "setup problem" in reply.text  # a bad key is not "try again in a minute"
            assert len(fake.requests) == 1  # 401: never retried
            assert "ANTHROPIC_API_KEY" in caplog.text and "401" in caplog.text and "not retrying" in caplog.text
            entries = await session_entries(board, "main")
            assert entries[-1]["degraded"] is True and "401" in entries[-1]["error"]
        finally:
            await board.close()


async def test_missing_key_names_the_variable_and_does_not_crash(
    tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        board = await configured_board(tmp_path, workspace, f"""
llm:
  model: anthropic:claude-sonnet-4-6
  providers:
    anthropic: {{base_url: "{fake_anthropic.url}"}}
""", env={})
        try:
            reply = await board.handle(envelope("hello"))
        finally:
            await board.close()
    assert reply.degraded
    assert not fake_anthropic.requests
    assert "export ANTHROPIC_API_KEY" in caplog.text


async def test_fallback_from_openai_to_anthropic(
    tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI, fake_anthropic: FakeAnthropic
) -> None:
    fake_openai.script_error(500, "server_error")
    fake_openai.script_error(503, "server_error")
    fake_anthropic.script_text("Anthropic here, covering for GPT.")  # naming the model would be scrubbed
    board = await configured_board(tmp_path, workspace, f"""
llm:
  model: openai:gpt-4o-mini
  fallbacks: [anthropic:claude-haiku-4-5]
{FAST_RETRY_YAML}
  providers:
    openai: {{base_url: "{fake_openai.base_url}", api_key: "sk"}}
    anthropic: {{base_url: "{fake_anthropic.url}", api_key: "ak"}}
""")
    try:
        reply = await board.handle(envelope("@critic poke holes in this"))
        assert reply.text == "Anthropic here, covering for GPT." and not reply.degraded
        assert len(fake_openai.requests) == 2 and len(fake_anthropic.requests) == 1
        assert fake_anthropic.requests[0].body["model"] == "claude-haiku-4-5"
        entries = await session_entries(board, "board:critic")
        assert entries[-1]["model"] == "anthropic:claude-haiku-4-5"
        rows = await board.parts.db.fetchall("SELECT model, outcome FROM llm_calls ORDER BY id")
        assert [(r["model"], r["outcome"]) for r in rows] == [
            ("openai:gpt-4o-mini", "server"), ("openai:gpt-4o-mini", "server"), ("anthropic:claude-haiku-4-5", "ok"),
        ]
    finally:
        await board.close()


async def test_slow_model_hits_the_deadline_then_degrades(
    tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI
) -> None:
    # the deadline leaves a loaded machine room to get each request to the fake (at 0.3 s, beside the full suite
    # and two CPU burners, the retry timed out before it reached the fake); the fake answers well after it
    fake_openai.script_delay(8, then="too late")
    fake_openai.script_delay(8, then="too late again")
    board = await configured_board(tmp_path, workspace, f"""
llm:
  model: openai:gpt-4o-mini
  timeout_s: 2
  retry: {{retries: 1, backoff_s: 0.01}}
  providers:
    openai: {{base_url: "{fake_openai.base_url}", api_key: "sk"}}
""")
    try:
        reply = await board.handle(envelope("hello?"))
        assert reply.degraded
        assert len(fake_openai.requests) == 2  # the call and its one retry
        rows = await board.parts.db.fetchall("SELECT outcome FROM llm_calls")
        assert [r["outcome"] for r in rows] == ["timeout", "timeout"]
    finally:
        await board.close()


async def test_anthropic_streaming_tool_use(tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script_tool_call("lookup", {"q": "books"}, text="One moment.")
    fake_anthropic.script_text("Books are exempt.")
    board = await anthropic_board(tmp_path, workspace, fake_anthropic, key="ak", stream=True)
    lookup = LookupTool()
    board.parts.tools.register(lookup.tool())
    try:
        reply = await board.handle(envelope("GST on books?"))
        assert reply.text == "Books are exempt."
        assert lookup.seen[0][0] == {"q": "books"}
        assert all(r.body.get("stream") is True for r in fake_anthropic.requests)
        rows = await board.parts.db.fetchall(
            "SELECT ttft_ms, cache_write_tokens, cache_read_tokens FROM llm_calls ORDER BY id"
        )
        assert all(r["ttft_ms"] is not None for r in rows)
        assert rows[0]["cache_write_tokens"] > 0 and rows[1]["cache_read_tokens"] > 0
    finally:
        await board.close()
