"""``sabha tools list|test``, ``sabha doctor`` and ``sabha ask`` with MCP servers, run as the real CLI (subprocesses)
against real servers (``mcp-server-time``, ``mcp-server-git``)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.support.cli import init_board
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.mcp import git_repo, python_server


async def sabha(folder: Path, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", *args, cwd=folder, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 180)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return proc.returncode or 0, out.decode(), err.decode()


async def board_with_servers(tmp_path: Path, llm: list[str] | None = None) -> tuple[Path, dict[str, str], Path]:
    folder, env = await init_board(tmp_path)
    repo = git_repo(tmp_path / "repo", "Ship the pricing page")
    (folder / "sabha.yaml").write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", *(llm or ["llm:", "  model: offline"]),
        "board:", "  agents:", "    research:", '      tools: ["mcp:git", "mcp:time.get_current_time"]',
        "mcp:", "  servers:",
        "    time:", f"      command: {python_server('mcp-server-time')}",
        "    git:", f"      command: {python_server('mcp-server-git')}", f"      args: [--repository, {repo}]",
        "    broken:", "      command: /nonexistent/mcp-server", "      start_timeout_s: 5", ""]), encoding="utf-8")
    return folder, env, repo


async def test_tools_list_shows_states_tools_and_roles(tmp_path: Path) -> None:
    folder, env, _repo = await board_with_servers(tmp_path)
    code, out, err = await sabha(folder, env, "tools", "list")
    print(out)
    assert code == 0, err
    assert "git: ready (stdio:" in out and "given to research" in out
    assert "  reads       git.git_log" in out and "  asks first  git.git_commit" in out
    assert "broken: failed (stdio: /nonexistent/mcp-server)" in out and "No such file" in out
    code, out, _err = await sabha(folder, env, "tools", "list", "--json")
    rows = {r["server"]: r for r in json.loads(out)}
    assert rows["time"]["roles"] == ["research"] and rows["time"]["state"] == "ready"
    assert {"name": "convert_time", "reads_only": True} in rows["time"]["tools"]


async def test_tools_test_exits_0_for_a_working_server_and_1_for_a_broken_one(tmp_path: Path) -> None:
    folder, env, _repo = await board_with_servers(tmp_path)
    code, out, err = await sabha(folder, env, "tools", "test", "time")
    print(out)
    assert code == 0, out + err
    assert "OK   time: ready, 2 tool(s)" in out and "get_current_time" in out
    code, out, err = await sabha(folder, env, "tools", "test", "broken")
    assert code == 1 and "FAIL broken: failed" in out, out + err
    assert "check the command or URL under mcp.servers.broken" in err
    code, out, err = await sabha(folder, env, "tools", "test", "nope")
    assert code != 0 and "no MCP server 'nope' in mcp.servers (configured: time, git, broken)" in err


async def test_doctor_lists_each_server(tmp_path: Path) -> None:
    folder, env, _repo = await board_with_servers(tmp_path)
    code, out, _err = await sabha(folder, env, "doctor", "--offline")
    print(out)
    assert code == 1  # the broken server
    assert "OK    mcp git: ready: 12 tool(s), 7 only reading; given to research" in out
    assert "FAIL  mcp broken: failed" in out and "sabha tools test broken" in out


async def test_sabha_ask_starts_the_roles_servers_on_first_use(tmp_path: Path) -> None:
    async with FakeOpenAI() as model:
        llm = ["llm:", "  model: openai:gpt-test", "  retry: {retries: 0}", "  providers:", "    openai:",
               "      api_key: test-key", f"      base_url: {model.base_url}", "      stream: false"]
        folder, env, repo = await board_with_servers(tmp_path, llm)
        model.script_tool_call("git__git_log", {"repo_path": str(repo), "max_count": 1})
        model.script_text("The last commit: Ship the pricing page [git.git_log].")
        code, out, err = await sabha(folder, env, "ask", "--role", "research", "what is the last commit?")
        assert code == 0, out + err
        assert "Ship the pricing page [git.git_log]" in out
        asked = model.requests[0].json
        assert {"git__git_log", "time__get_current_time"} <= {t["function"]["name"] for t in asked["tools"]}
        assert "time__convert_time" not in {t["function"]["name"] for t in asked["tools"]}  # one tool given
        tool = next(m for m in model.requests[1].json["messages"] if m["role"] == "tool")
        assert "Ship the pricing page" in tool["content"]
    left = [p for p in Path("/proc").glob("[0-9]*/cmdline")  # the git server of this repository, anywhere
            if str(repo).encode() in _read(p)]
    assert not left, f"sabha ask left its servers running: {left}"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


async def test_tools_test_calls_a_harmless_tool_with_its_arguments_filled(tmp_path: Path) -> None:
    """mcp-server-time's tools all need a timezone, mcp-server-git's a repository: ``tools test`` fills them (UTC;
    the repository the server was started on) and calls one, printing what it answered."""
    folder, env, repo = await board_with_servers(tmp_path)
    code, out, err = await sabha(folder, env, "tools", "test", "time")
    print(out)
    assert code == 0, out + err
    assert 'calling time.get_current_time {"timezone": "UTC"} ...' in out
    assert "OK   time.get_current_time: answered" in out and '"timezone": "UTC"' in out and "datetime" in out
    code, out, err = await sabha(folder, env, "tools", "test", "git")
    print(out)
    assert code == 0, out + err
    assert f'calling git.git_status {{"repo_path": "{repo}"}} ...' in out
    assert "OK   git.git_status: answered" in out and "nothing to commit" in out


async def test_the_offline_model_asks_the_time_of_a_city_in_its_own_zone(tmp_path: Path) -> None:
    """``sabha ask`` offline with mcp-server-time: Pune and San Francisco (no IANA zone is named after either) are
    asked in their zones; a place it does not know is asked in UTC, and the answer says so."""
    folder, env, _repo = await board_with_servers(tmp_path)
    for question, zone in (("what time is it in Pune?", "Asia/Kolkata"),
                           ("What time is it in San Francisco right now?", "America/Los_Angeles"),
                           ("what time is it in new york?", "America/New_York")):
        code, out, err = await sabha(folder, env, "ask", "--role", "research", question)
        print(out)
        assert code == 0, out + err
        assert "[time.get_current_time]" in out and f'"timezone": "{zone}"' in out, question
        assert "I used UTC" not in out
    code, out, err = await sabha(folder, env, "ask", "--role", "research", "what time is it in Xanadu?")
    print(out)
    assert code == 0, out + err
    assert "I do not know which timezone Xanadu is in, so I used UTC" in out and '"timezone": "UTC"' in out
