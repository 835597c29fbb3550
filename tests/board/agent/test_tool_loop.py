"""The tool loop, tool permissions, the text tool protocol and failure handling, with a scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.agent.runner import CAP_REPLY, DEGRADED_REPLY
from board.agent.tools import Tool, ToolContext, ToolResult
from board.llm import text_tools
from board.llm.base import LLMError, LLMRequest, Persona, ToolSpec
from board.llm.resilience import ResilientCaller, RetryPolicy
from tests.support.fakes.scripted_model import ScriptedModel, call, calls, fail, say
from tests.support.llm import LookupTool, envelope, scripted_board, session_entries


def tool_messages(model: ScriptedModel, index: int) -> list[dict]:
    """The tool results the model saw in request ``index``, parsed."""
    return [json.loads(m.content) for m in model.requests[index].request.messages if m.role == "tool"]


# -- the loop ---------------------------------------------------------------------------


async def test_tool_loop_is_capped_then_the_agent_answers(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(call("lookup", {"q": "a"}), call("lookup", {"q": "b"}), say("Here is what I found: 18%."))
    board = await scripted_board(workspace, data_dir, model, max_tool_iterations=2)
    lookup = LookupTool()
    board.parts.tools.register(lookup.tool())
    try:
        reply = await board.handle(envelope("rates?"))
        assert reply.text == "Here is what I found: 18%."
        assert [args["q"] for args, _ in lookup.seen] == ["a", "b"]
        assert len(model.requests) == 3
        assert [r.request.tool_choice for r in model.requests] == ["auto", "auto", "none"]
        last = model.requests[2].request.messages[-1]
        assert last.role == "user" and "used all 2 tool calls" in last.content
        entries = await session_entries(board, "main")
        assert entries[-1]["tool_cap"] is True and entries[-1]["tool_calls"] == 2
    finally:
        await board.close()


async def test_a_model_that_keeps_calling_tools_still_gets_an_answer_out(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel(default=call("lookup", {"q": "again"}))
    board = await scripted_board(workspace, data_dir, model, max_tool_iterations=3)
    lookup = LookupTool()
    board.parts.tools.register(lookup.tool())
    try:
        reply = await board.handle(envelope("loop forever"))
        assert reply.text == CAP_REPLY and not reply.degraded
        assert len(lookup.seen) == 3 and len(model.requests) == 4  # 3 rounds, then the forced answer
    finally:
        await board.close()


async def test_forbidden_and_unknown_tools_return_structured_errors(workspace: Path, data_dir: Path) -> None:
    secret = LookupTool(name="secret")
    model = ScriptedModel()
    model.script(calls(("secret", {"q": "x"}), ("teleport", {"to": "mars"})), say("Understood, I can't."))
    board = await scripted_board(workspace, data_dir, model, default_tools=("lookup",))
    board.parts.tools.register(LookupTool().tool())
    board.parts.tools.register(secret.tool())
    try:
        reply = await board.handle(envelope("use the secret tool"))
        assert reply.text == "Understood, I can't."
        assert [t.name for t in model.requests[0].request.tools] == ["lookup"]  # only what the role may use
        forbidden, unknown = tool_messages(model, 1)
        assert forbidden["ok"] is False and "not allowed" in forbidden["error"] and forbidden["retryable"] is False
        assert unknown["ok"] is False and "unknown tool 'teleport'" in unknown["error"]
        assert secret.seen == []  # never ran
    finally:
        await board.close()


async def test_soul_front_matter_limits_tools(workspace: Path, data_dir: Path) -> None:
    soul = workspace / "board" / "critic.soul.md"
    text = soul.read_text(encoding="utf-8")
    soul.write_text(text.replace("---\n", "---\ntools: []\n", 1), encoding="utf-8")
    model = ScriptedModel()
    board = await scripted_board(workspace, data_dir, model)
    board.parts.tools.register(LookupTool().tool())
    try:
        await board.handle(envelope("@critic hi"))
        await board.handle(envelope("@finance hi"))
        assert model.requests_for("critic")[0].request.tools == ()
        assert "lookup" in [t.name for t in model.requests_for("finance")[0].request.tools]  # None: every tool
    finally:
        await board.close()


async def test_invalid_arguments_and_bad_json_come_back_as_errors(workspace: Path, data_dir: Path) -> None:
    lookup = LookupTool()
    model = ScriptedModel()
    model.script(calls(("lookup", {"q": 7}), ("lookup", '{"q": "tea"')), say("Let me rephrase."))
    board = await scripted_board(workspace, data_dir, model)
    board.parts.tools.register(lookup.tool())
    try:
        reply = await board.handle(envelope("tea?"))
        assert reply.text == "Let me rephrase."
        wrong_type, bad_json = tool_messages(model, 1)
        assert wrong_type["ok"] is False and "invalid arguments" in wrong_type["error"] and "q" in wrong_type["error"]
        assert bad_json["ok"] is False and "not valid JSON" in bad_json["error"]
        assert lookup.seen == []
        entries = await session_entries(board, "main")
        bad_call = [e for e in entries if e["type"] == "tool_call"][1]
        assert bad_call["raw_arguments"] == '{"q": "tea"' and "JSON" in bad_call["parse_error"]
    finally:
        await board.close()


async def test_a_failing_tool_reports_ok_false_and_the_turn_goes_on(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(call("lookup", {"q": "x"}), say("The lookup is down; from memory it is 18%."))
    board = await scripted_board(workspace, data_dir, model)
    board.parts.tools.register(LookupTool(fail_with=RuntimeError("database offline")).tool())
    try:
        reply = await board.handle(envelope("x?"))
        assert reply.text.startswith("The lookup is down")
        [result] = tool_messages(model, 1)
        assert result == {"ok": False, "error": "'lookup' failed: database offline", "retryable": False}
        rows = await board.parts.db.fetchall("SELECT name, ok, error FROM tool_calls")
        assert [(r["name"], r["ok"]) for r in rows] == [("lookup", 0)] and "offline" in rows[0]["error"]
    finally:
        await board.close()


# -- text protocol ----------------------------------------------------------------------


def test_text_protocol_parsing() -> None:
    parsed = text_tools.parse('Let me check.\n[TOOL: lookup ARG: {"q": "tea [green]"}]\nand [TOOL: now]')
    assert parsed.text.split() == ["Let", "me", "check.", "and"]
    first, second = parsed.calls
    assert (first.name, first.arguments, first.parse_error) == ("lookup", {"q": "tea [green]"}, None)
    assert (second.name, second.arguments) == ("now", {})


def test_text_protocol_malformed_json_is_a_parse_error_not_an_exception() -> None:
    parsed = text_tools.parse('[TOOL: lookup ARG: {"q": tea}]\nThen [TOOL: lookup ARG: ["a"]] done')
    bad, not_object = parsed.calls
    assert bad.parse_error and "not valid JSON" in bad.parse_error and bad.raw_arguments == '{"q": tea}'
    assert not_object.parse_error and "JSON object" in not_object.parse_error
    assert parsed.text == "Then  done"
    assert text_tools.parse("no tools here").calls == ()


async def test_text_protocol_model_runs_tools_from_its_answer(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(say('Checking. [TOOL: lookup ARG: {"q": "rice"}]'), say('[TOOL: lookup ARG: {"q": }]'),
                 say("Rice: 18%."))
    board = await scripted_board(workspace, data_dir, model, text_tool_models=("scripted:*",))
    lookup = LookupTool()
    board.parts.tools.register(lookup.tool())
    try:
        reply = await board.handle(envelope("rice?"))
        assert reply.text == "Rice: 18%."
        first = model.requests[0].request
        assert first.tools == ()  # no native tools for this model...
        tools_block = next(b for b in first.system if b.name == "tools")
        assert "[TOOL: <name> ARG:" in tools_block.text and "lookup" in tools_block.text  # ...it is taught the protocol
        results = model.requests[1].request.messages[-1]
        assert results.role == "user" and results.content.startswith("Tool results:")
        assert "GST on rice is 18%" in results.content
        malformed = model.requests[2].request.messages[-1].content
        assert '"ok": false' in malformed and "not valid JSON" in malformed
        assert [a["q"] for a, _ in lookup.seen] == ["rice"]
    finally:
        await board.close()


# -- failures ---------------------------------------------------------------------------


async def test_retry_then_fallback_then_graceful_reply(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(fail("server"), fail("rate_limit", status=429), fail("timeout", status=None), fail("server"))
    board = await scripted_board(workspace, data_dir, model, fallbacks=("scripted:backup",))
    try:
        reply = await board.handle(envelope("@finance runway?"))
        assert reply.degraded and reply.text == DEGRADED_REPLY and reply.role == "finance"
        assert [r.request.model for r in model.requests] == [
            "scripted:main", "scripted:main", "scripted:backup", "scripted:backup",
        ]
        entries = await session_entries(board, "board:finance")
        assert entries[-1]["degraded"] is True and entries[-1]["text"] == DEGRADED_REPLY
        assert entries[0]["text"] == "runway?"  # the user's message is kept
        rows = await board.parts.db.fetchall("SELECT model, outcome, attempt FROM llm_calls ORDER BY id")
        assert [(r["model"], r["outcome"], r["attempt"]) for r in rows] == [
            ("scripted:main", "server", 1), ("scripted:main", "rate_limit", 2),
            ("scripted:backup", "timeout", 1), ("scripted:backup", "server", 2),
        ]
        # the board keeps working after a degraded turn
        model.script(say("Back again."))
        assert (await board.handle(envelope("@finance still there?"))).text == "Back again."
    finally:
        await board.close()


async def test_fallback_answers_after_the_primary_fails(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(fail("server"), fail("server"), say("Backup model speaking."))
    board = await scripted_board(workspace, data_dir, model, fallbacks=("scripted:backup",))
    try:
        reply = await board.handle(envelope("hi"))
        assert reply.text == "Backup model speaking." and not reply.degraded
        entries = await session_entries(board, "main")
        assert entries[-1]["model"] == "scripted:backup"
    finally:
        await board.close()


async def test_non_retryable_error_skips_the_retry(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(fail("auth", status=401, message="bad key; export OPENAI_API_KEY"), say("fallback ok"))
    board = await scripted_board(workspace, data_dir, model, fallbacks=("scripted:backup",))
    try:
        reply = await board.handle(envelope("hi"))
        assert reply.text == "fallback ok"
        assert [r.request.model for r in model.requests] == ["scripted:main", "scripted:backup"]
    finally:
        await board.close()


async def test_retry_after_is_honoured_and_capped() -> None:
    model = ScriptedModel()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    caller = ResilientCaller(model.registry(), RetryPolicy(timeout_s=5, backoff_s=0.01, retry_after_max_s=2.0),
                             sleep=sleep, rand=lambda: 0.0)
    request = LLMRequest(model="scripted:a", system=(), messages=(), persona=Persona("general", "Chair", "🧭"))
    model.script(fail("rate_limit", status=429, retry_after=1.5), say("ok"))
    result = await caller.call(request, ["scripted:a"])
    assert result.response is not None and slept == [1.5]

    model.script(fail("rate_limit", status=429, retry_after=60), say("from the fallback"))
    result = await caller.call(request, ["scripted:a", "scripted:b"])
    assert result.model == "scripted:b" and slept == [1.5]  # 60 s > cap: no wait, straight to the fallback
    assert [a.outcome for a in result.attempts] == ["rate_limit", "ok"]


async def test_unknown_provider_in_the_chain_is_skipped(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    model.script(say("scripted rescue"))
    board = await scripted_board(workspace, data_dir, model, default_model="nosuch:model",
                                 fallbacks=("scripted:main",))
    try:
        reply = await board.handle(envelope("hi"))
        assert reply.text == "scripted rescue"
    finally:
        await board.close()


# -- exchange without a transcript ----------------------------------------------------------


async def test_exchange_runs_without_a_transcript_with_extra_tools_and_context(
    workspace: Path, data_dir: Path
) -> None:
    seen: list[ToolContext] = []

    async def note(args: dict, ctx: ToolContext) -> ToolResult:
        seen.append(ctx)
        return ToolResult.success({"noted": args["text"], "meeting": ctx.meeting_id, "roster": ctx.roster})

    extra = Tool(ToolSpec("note", "Note a point.", {"type": "object", "properties": {"text": {"type": "string"}},
                                                     "required": ["text"]}), note)
    model = ScriptedModel()
    model.script(call("note", {"text": "cash is tight"}), say("Noted: cash is tight."), role="finance")
    board = await scripted_board(workspace, data_dir, model)
    try:
        profile = board.parts.souls.profile("finance")
        ctx = ToolContext(role="finance", session_key="meeting:m1", depth=1, chain=("general", "finance"),
                          meeting_id="m1", roster="sabha")
        outcome = await board.parts.runner.exchange(profile, "What worries you?", ctx, extra_tools=[extra],
                                              tools_allowed=(), ledger_tags={"purpose": "meeting"})
        assert outcome.text == "Noted: cash is tight." and not outcome.degraded
        assert [t.name for t in model.requests[0].request.tools] == ["note"]
        assert seen[0].depth == 1 and seen[0].chain == ("general", "finance")
        assert outcome.tool_events[0].result.data == {"noted": "cash is tight", "meeting": "m1", "roster": "sabha"}
        assert outcome.usage.output_tokens > 0 and outcome.llm_calls == 2
        system = model.requests[0].request.system
        assert system[0].name == "static" and system[0].cacheable and "Finance" in system[0].text
        assert await board.parts.sessions.list() == []  # no transcript was created
        rows = await board.parts.db.fetchall("SELECT purpose, meeting_id, session_key FROM llm_calls")
        assert {(r["purpose"], r["meeting_id"], r["session_key"]) for r in rows} == {("meeting", "m1", "meeting:m1")}
        assert "note" not in board.parts.tools.names()  # extra tools do not leak into the registry
    finally:
        await board.close()


@pytest.mark.parametrize("max_iterations", [0])
async def test_zero_tool_iterations_offers_no_tools(workspace: Path, data_dir: Path, max_iterations: int) -> None:
    model = ScriptedModel()
    board = await scripted_board(workspace, data_dir, model, max_tool_iterations=max_iterations)
    board.parts.tools.register(LookupTool().tool())
    try:
        await board.handle(envelope("hi"))
        assert model.requests[0].request.tool_choice == "none"
        assert model.requests[0].request.tools == ()  # no schemas to pay for when no tool may be called
    finally:
        await board.close()


async def test_offline_model_can_call_a_tool(workspace: Path, data_dir: Path) -> None:
    from board.agent.runner import AgentSettings
    from board.app import Board, BoardSettings
    from board.roles import RosterSpec

    board = await Board.open(BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
                                           agent=AgentSettings()))
    lookup = LookupTool()
    board.parts.tools.register(lookup.tool())
    try:
        reply = await board.handle(envelope('check [TOOL: lookup ARG: {"q": "salt"}]'))
        assert "GST on salt is 18%" in reply.text and "offline model" in reply.text
        assert [a for a, _ in lookup.seen] == [{"q": "salt"}]
    finally:
        await board.close()


def test_llm_error_carries_retry_hints() -> None:
    err = LLMError("x", retryable=True, status=429, kind="rate_limit", retry_after=3)
    assert err.retryable and err.retry_after == 3 and err.kind == "rate_limit"
