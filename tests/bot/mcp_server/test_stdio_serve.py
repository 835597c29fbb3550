"""``sabha mcp serve``: the board as an MCP server on stdio, driven by the official SDK's own client.

A real ``sabha mcp serve`` subprocess on a ``sabha init`` board (the offline model: no key), started by
``mcp.Client(StdioServerParameters(...))`` as Claude Desktop starts it; the client lists the tools, asks an
advisor, convenes a meeting and reads its decision back; an unknown role is a tool error that lists the roles.
Then the bare process: stdout carries only the protocol, and end of file on stdin ends it with code 0.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp_types import Implementation

from tests.support.cli import init_board, run_sabha

BOUND_S = 300.0  # a bound for a hung server, not a measure of speed (a meeting is many offline turns)


def _params(folder: Path, env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "bot.cli", "mcp", "serve", "--config", str(folder / "sabha.yaml")],
                                 env=env, cwd=str(folder))


async def test_an_mcp_client_lists_the_tools_asks_an_advisor_and_convenes_a_meeting(tmp_path: Path) -> None:
    folder, env = await init_board(tmp_path)
    progress: list[str] = []

    async def told(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with asyncio.timeout(BOUND_S), Client(_params(folder, env),
                                                client_info=Implementation(name="Test Agent", version="1")) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"list_advisors", "ask_advisor", "convene_meeting", "list_decisions",
                              "list_action_items"}
        for name in ("list_advisors", "list_decisions", "list_action_items"):
            assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is True, name
        for name in ("ask_advisor", "convene_meeting"):
            assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is False, name
            assert tools[name].description and len(tools[name].description) > 40, name
        assert tools["ask_advisor"].input_schema["required"] == ["role", "question"]
        assert tools["convene_meeting"].input_schema["required"] == ["topic"]

        listed = await client.call_tool("list_advisors", {})
        assert not listed.is_error and listed.structured_content is not None
        roles = [a["role"] for a in listed.structured_content["advisors"]]
        assert roles == ["general", "research", "content", "finance", "strategy", "critic"]
        assert all(a["about"] for a in listed.structured_content["advisors"])

        asked = await client.call_tool("ask_advisor", {"role": "CFO", "question": "what is our runway?"})
        assert not asked.is_error and asked.structured_content is not None, asked.content
        assert asked.structured_content["role"] == "finance"
        assert asked.structured_content["answer"].startswith("💰 Finance: ")
        assert "what is our runway?" in asked.structured_content["answer"]  # the offline model quotes it
        assert asked.structured_content["session"] == "board:finance:mcp-test-agent"

        wrong = await client.call_tool("ask_advisor", {"role": "treasurer", "question": "hello?"})
        assert wrong.is_error
        text = wrong.content[0].text  # type: ignore[union-attr]
        assert "no advisor 'treasurer'" in text and "general, research, content, finance, strategy, critic" in text

        met = await client.call_tool("convene_meeting", {"topic": "should we open an office in Lisbon?",
                                                         "members": ["finance", "Critic"]}, progress_callback=told)
        assert not met.is_error and met.structured_content is not None, met.content
        meeting = met.structured_content
        assert meeting["outcome"] in ("completed", "converged") and meeting["members"] == ["finance", "critic"]
        assert meeting["decision"]["recommendation"] and meeting["decision"]["action_items"]
        assert set(meeting["stances"]) == {"finance", "critic"}
        assert meeting["minutes"] and meeting["meeting_id"].startswith("m-")
        assert "Finance spoke (round 1)" in progress and "the chair recorded the decision" in progress
        assert not any("Research" in line for line in progress)  # only the members asked for sat in

        decisions = await client.call_tool("list_decisions", {"status": "proposed"})
        assert decisions.structured_content is not None
        [decision] = decisions.structured_content["decisions"]
        assert decision["meeting_id"] == meeting["meeting_id"]
        assert decision["recommendation"] == meeting["decision"]["recommendation"]
        assert decision["status"] == "proposed"
        bad = await client.call_tool("list_decisions", {"status": "maybe"})
        assert bad.is_error and "proposed, ratified, vetoed, revisit" in bad.content[0].text  # type: ignore[union-attr]

        items = await client.call_tool("list_action_items", {})
        assert items.structured_content is not None
        tasks = items.structured_content["action_items"]
        assert tasks and {t["meeting_id"] for t in tasks} == {meeting["meeting_id"]}
        assert all(t["status"] == "open" and t["owed_by"] for t in tasks)

    # the same board, the same records: the terminal sees what the client did
    out, _ = await run_sabha(folder, env, "decisions", "list", "--json")
    assert [d["meeting_id"] for d in json.loads(out)] == [meeting["meeting_id"]]
    out, _ = await run_sabha(folder, env, "sessions", "list")
    assert "board:finance:mcp-test-agent" in out


async def test_stdout_is_the_protocol_alone_and_end_of_file_ends_the_server(tmp_path: Path) -> None:
    folder, env = await init_board(tmp_path)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "mcp", "serve", "--config", str(folder / "sabha.yaml"), cwd=folder, env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(initialize) + "\n").encode())
        await proc.stdin.drain()
        assert proc.stdout is not None
        first = await asyncio.wait_for(proc.stdout.readline(), BOUND_S)
        answer = json.loads(first)
        assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "sabha"
        proc.stdin.close()  # end of file: the client is gone
        out, err = await asyncio.wait_for(proc.communicate(), BOUND_S)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    assert out.strip() == b""  # nothing but the one answer ever reached stdout
    assert "MCP server on stdio" in err.decode()


async def test_sabha_mcp_token_prints_a_fresh_token_the_config_accepts(tmp_path: Path) -> None:
    from bot.config.load import parse_config

    folder, env = await init_board(tmp_path)
    first, said = await run_sabha(folder, env, "mcp", "token")
    second, _ = await run_sabha(folder, env, "mcp", "token")
    token = first.strip()
    assert len(token) >= 40 and "\n" not in token and token != second.strip()
    assert "SABHA_MCP_TOKEN" in said  # how to use it, on stderr: stdout is the token alone
    section = parse_config("server:\n  mcp:\n    enabled: true\n    token: ${SABHA_MCP_TOKEN}\n", source="x",
                           env={"SABHA_MCP_TOKEN": token}).server.mcp
    assert section.secret() == token


async def test_an_advisor_that_cannot_answer_is_a_tool_error_not_an_answer(tmp_path: Path) -> None:
    """As ``sabha ask`` ends with code 1 for a degraded answer: here no model can be reached (a closed port)."""
    folder, env = await init_board(tmp_path)
    config = folder / "sabha.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "  model: offline", '  model: openai:gpt-4o-mini\n  retry: {retries: 0}\n  providers:\n'
                            '    openai: {base_url: "http://127.0.0.1:9/v1", api_key: test-key}'), encoding="utf-8")
    async with asyncio.timeout(BOUND_S), Client(_params(folder, env)) as client:
        result = await client.call_tool("ask_advisor", {"role": "critic", "question": "what could go wrong?"})
    assert result.is_error
    assert "critic could not answer" in result.content[0].text  # type: ignore[union-attr]


async def test_the_days_budget_holds_for_a_client_as_for_the_owner_in_a_chat(tmp_path: Path) -> None:
    folder, env = await init_board(tmp_path)
    config = folder / "sabha.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "budget:\n  daily_usd: 0\n", encoding="utf-8")
    async with asyncio.timeout(BOUND_S), Client(_params(folder, env)) as client:
        asked = await client.call_tool("ask_advisor", {"role": "critic", "question": "what could go wrong?"})
        met = await client.call_tool("convene_meeting", {"topic": "should we expand to Europe?"})
        decisions = await client.call_tool("list_decisions", {})
    for result in (asked, met):
        assert result.is_error
        assert "Today's budget is spent" in result.content[0].text  # type: ignore[union-attr]
    assert decisions.structured_content == {"decisions": []}  # no meeting was held


async def test_a_write_tool_asked_for_over_mcp_is_refused_at_once_saying_how_to_allow_it(tmp_path: Path) -> None:
    """Nobody reads a consent question over MCP: the advisor's write call is refused at once (not after
    tools.consent_timeout_s), the answer says `sabha tools allow`; once allowed, the same question runs it."""
    from tests.support.fakes.openai_api import FakeOpenAI
    from tests.support.mcp import REPO

    folder, env = await init_board(tmp_path)
    out = tmp_path / "out.txt"
    env["FAKE_MCP_OUT"] = str(out)
    async with FakeOpenAI() as model:
        (folder / "sabha.yaml").write_text("\n".join([
            "workspace: ./workspace", "data_dir: ./sessions",
            "llm:", "  model: openai:gpt-test", "  retry: {retries: 0}", "  providers:", "    openai:",
            "      api_key: test-key", f"      base_url: {model.base_url}", "      stream: false",
            "tools:", "  consent_timeout_s: 600",
            "board:", "  agents:", "    research:", '      tools: ["mcp:bad"]',
            "mcp:", "  servers:", "    bad:", f"      command: {sys.executable}",
            '      args: ["-m", "tests.support.fakes.mcp_server", "--hostile"]', f"      cwd: {REPO}",
            "      env: [FAKE_MCP_OUT]", ""]), encoding="utf-8")
        model.script_tool_call("bad__append", {"text": "from mcp"})
        model.script_text("I could not append it.")
        async with asyncio.timeout(BOUND_S), Client(_params(folder, env)) as client:
            asked = await client.call_tool("ask_advisor", {"role": "research", "question": "append 'from mcp'"})
            assert not asked.is_error, asked.content
            tool = next(m for m in model.requests[1].json["messages"] if m["role"] == "tool")
            print(tool["content"])
            assert "cannot be asked over mcp" in tool["content"]
            assert "sabha tools allow bad.append" in tool["content"]
            assert not out.exists()
            await run_sabha(folder, env, "tools", "allow", "bad.append")
            model.script_tool_call("bad__append", {"text": "from mcp"})
            model.script_text("Appended.")
            again = await client.call_tool("ask_advisor", {"role": "research", "question": "append 'from mcp'"})
            assert not again.is_error, again.content
        assert out.read_text() == "from mcp"
        listed, _ = await run_sabha(folder, env, "tools", "approvals")
        print(listed)
        assert "bad.append" in listed


async def test_a_meeting_above_confirm_over_usd_is_not_convened_by_a_client(tmp_path: Path) -> None:
    """Security review finding 2 (issue 40): an MCP client's convene held any meeting, whatever it was expected
    to cost; above board.meetings.confirm_over_usd only the owner's Start may begin one, so the client is told
    the estimate and how the owner starts it, and no model is asked (here none could answer: a closed port)."""
    folder, env = await init_board(tmp_path)
    config = folder / "sabha.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "  model: offline", '  model: openai:gpt-4o-mini\n  retry: {retries: 0}\n  providers:\n'
                            '    openai: {base_url: "http://127.0.0.1:9/v1", api_key: test-key}')
                      + "board:\n  meetings:\n    confirm_over_usd: 0.0001\n", encoding="utf-8")
    async with asyncio.timeout(BOUND_S), Client(_params(folder, env)) as client:
        met = await client.call_tool("convene_meeting", {"topic": "should we expand to Europe?"})
        decisions = await client.call_tool("list_decisions", {})
    assert met.is_error
    text = met.content[0].text  # type: ignore[union-attr]
    assert "board.meetings.confirm_over_usd" in text and "Expected: about $" in text and "Nothing was spent" in text
    assert decisions.structured_content == {"decisions": []}
