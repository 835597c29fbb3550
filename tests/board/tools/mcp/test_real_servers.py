"""The MCP client against servers other people wrote, through the real SDK: ``mcp-server-time`` and
``mcp-server-git`` (PyPI, stdio), ``@modelcontextprotocol/server-filesystem`` (npm, stdio) and
``@modelcontextprotocol/server-everything`` (npm, stdio and streamable HTTP)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from board.agent.outside import ConsentAsk, ConsentKind, ConsentVerdict
from board.agent.tools import Tool, ToolContext, ToolResult
from board.envelope import Envelope
from board.tools.mcp import McpServers, McpSettings, ServerSpec, ServerState
from tests.support.mcp import everything_http, git_repo, npm_server, python_server
from tests.support.telegram import eventually

RESEARCH = ToolContext(role="research", session_key="telegram:42")


@asynccontextmanager
async def servers(*specs: ServerSpec, tools: Iterable[str] | None = None, **kw: Any) -> AsyncIterator[McpServers]:
    """Every server in ``specs`` given to research (or only ``tools``), started and ready; closed after."""
    granted = tuple(tools) if tools is not None else tuple(f"mcp:{s.name}" for s in specs)
    manager = McpServers(McpSettings(servers=specs), grants=lambda role: granted if role == "research" else (),
                         **kw)
    try:
        await manager.ensure(RESEARCH)
        yield manager
    finally:
        await manager.close()


def tool(manager: McpServers, name: str, ctx: ToolContext = RESEARCH) -> Tool:
    found = {t.spec.name: t for t in manager.tools_for(ctx)}
    assert name in found, sorted(found)
    return found[name]


def quoted(result: ToolResult) -> list[str]:
    """The lines of a result's quoted data, unquoted."""
    data = result.data
    assert isinstance(data, dict), result
    return [json.loads(line) for line in data["quoted_data"].splitlines()]


async def test_git_log_of_a_real_repository_comes_back_quoted_and_citable(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", "Ship the pricing page")
    spec = ServerSpec("git", command=python_server("mcp-server-git"), args=("--repository", str(repo)))
    async with servers(spec) as manager:
        [state] = manager.states()
        assert state.state is ServerState.READY and ("git_log", True) in state.tools
        offered = {t.spec.name: t for t in manager.tools_for(RESEARCH)}
        assert offered["git__git_log"].origin is not None and offered["git__git_log"].origin.read_only
        assert not offered["git__git_commit"].origin.read_only  # type: ignore[union-attr]  # changes things
        assert "cite as [git.git_log] what you use from them" in offered["git__git_log"].spec.description
        result = await offered["git__git_log"].handler({"repo_path": str(repo), "max_count": 1}, RESEARCH)
    assert result.ok, result
    assert result.data["cite_as"] == "[git.git_log]"
    assert any("Ship the pricing page" in line for line in quoted(result))


async def test_time_server_given_one_tool_offers_only_that_tool() -> None:
    spec = ServerSpec("time", command=python_server("mcp-server-time"))
    async with servers(spec, tools=["mcp:time.get_current_time", "search_knowledge_base"]) as manager:
        assert [t.spec.name for t in manager.tools_for(RESEARCH)] == ["time__get_current_time"]
        assert manager.tools_for(ToolContext(role="finance", session_key="k")) == ()  # finance was given nothing
        result = await tool(manager, "time__get_current_time").handler({"timezone": "Asia/Kolkata"}, RESEARCH)
    assert result.ok, result
    assert any("Asia/Kolkata" in line for line in quoted(result))


async def test_a_stranger_gets_no_outside_tools() -> None:
    spec = ServerSpec("time", command=python_server("mcp-server-time"))
    async with servers(spec) as manager:
        stranger = Envelope(channel="whatsapp", text="what time is it", sender="+4915100000", is_public=True)
        assert manager.tools_for(ToolContext(role="research", session_key="s", envelope=stranger)) == ()
        assert manager.tools_for(RESEARCH)  # the owner's research has them


class _Gate:
    """A consent gate that records what it was asked and answers ``kind``."""

    def __init__(self, kind: ConsentKind) -> None:
        self.kind = kind
        self.asked: list[ConsentAsk] = []
        self.ends: list[tuple[bool, str]] = []

    async def ask(self, ask: ConsentAsk, ctx: ToolContext) -> ConsentVerdict:
        self.asked.append(ask)
        return ConsentVerdict(self.kind, note="the owner said no", ticket="t1" if self.kind.runs else None)

    async def finished(self, verdict: ConsentVerdict, *, ok: bool, summary: str) -> None:
        self.ends.append((ok, summary))


async def test_filesystem_write_file_passes_the_consent_gate_and_reads_do_not(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "plan.txt").write_text("launch friday\n", encoding="utf-8")
    spec = ServerSpec("fs", command=npm_server("mcp-server-filesystem"), args=(str(folder),))
    denied = _Gate(ConsentKind.DENIED)
    async with servers(spec, consent=denied) as manager:
        read = await tool(manager, "fs__read_text_file").handler({"path": str(folder / "plan.txt")}, RESEARCH)
        assert read.ok and any("launch friday" in line for line in quoted(read)), read
        assert denied.asked == []  # reading needs nobody's consent
        write = tool(manager, "fs__write_file")
        assert write.origin is not None and not write.origin.read_only
        refused = await write.handler({"path": str(folder / "new.txt"), "content": "x"}, RESEARCH)
    assert not refused.ok and refused.error == "the owner said no"
    assert not (folder / "new.txt").exists()
    [ask] = denied.asked
    assert ask.origin.label == "fs.write_file" and ask.role == "research" and ask.session_key == "telegram:42"
    # no message id here: the session and this answer's own id name the call (a later answer asks anew)
    assert re.fullmatch(r"telegram:42#[0-9a-f]{32}\|fs\.write_file\|[0-9a-f]{64}", ask.key), ask.key

    allowed = _Gate(ConsentKind.ALLOWED_ONCE)
    async with servers(spec, consent=allowed) as manager:
        done = await tool(manager, "fs__write_file").handler({"path": str(folder / "new.txt"), "content": "x"},
                                                              RESEARCH)
    assert done.ok, done
    assert (folder / "new.txt").read_text() == "x"
    assert allowed.ends == [(True, "answered")]


async def test_without_a_gate_a_write_is_refused_with_a_note_for_the_model(tmp_path: Path) -> None:
    spec = ServerSpec("fs", command=npm_server("mcp-server-filesystem"), args=(str(tmp_path),))
    async with servers(spec) as manager:  # the default gate: nobody can be asked
        refused = await tool(manager, "fs__write_file").handler({"path": str(tmp_path / "a"), "content": "x"},
                                                                 RESEARCH)
    assert not refused.ok and "needs the owner's consent" in (refused.error or "")
    assert not (tmp_path / "a").exists()


async def test_everything_over_stdio_describes_an_image_and_passes_only_named_variables(
        monkeypatch: Any) -> None:
    monkeypatch.setenv("SABHA_TEST_SECRET_KEY", "sk-must-not-leak")
    monkeypatch.setenv("PASSED_THROUGH", "visible-value")
    spec = ServerSpec("every", command=npm_server("mcp-server-everything"), args=("stdio",), env=("PASSED_THROUGH",))
    async with servers(spec) as manager:
        image = await tool(manager, "every__get-tiny-image").handler({}, RESEARCH)
        env = await tool(manager, "every__get-env").handler({}, RESEARCH)
    assert image.ok and any(line.startswith("[image (image/png, about") for line in quoted(image)), image
    text = "\n".join(quoted(env))
    assert "visible-value" in text and "PASSED_THROUGH" in text
    assert "sk-must-not-leak" not in text and "SABHA_TEST_SECRET_KEY" not in text


async def test_everything_over_streamable_http() -> None:
    async with everything_http() as url:
        spec = ServerSpec("every", url=url)
        async with servers(spec) as manager:
            [state] = manager.states()
            assert state.state is ServerState.READY and state.transport == "http"
            echoed = await tool(manager, "every__echo").handler({"message": "over http"}, RESEARCH)
    assert echoed.ok and any("over http" in line for line in quoted(echoed)), echoed


async def test_an_unknown_server_in_a_role_is_logged_once_and_ignored(caplog: Any) -> None:
    spec = ServerSpec("time", command=python_server("mcp-server-time"))
    async with servers(spec, tools=["mcp:time", "mcp:calendar"]) as manager:
        first, again = manager.tools_for(RESEARCH), manager.tools_for(RESEARCH)
    assert [t.spec.name for t in first] == [t.spec.name for t in again] == ["time__get_current_time",
                                                                           "time__convert_time"]
    warned = [r.getMessage() for r in caplog.records if "mcp:calendar" in r.getMessage()]
    assert len(warned) == 1 and "not a server of mcp.servers; ignored" in warned[0], warned


async def test_a_server_that_cannot_start_is_tried_again_with_a_doubling_backoff(caplog: Any) -> None:
    manager = McpServers(McpSettings(servers=(ServerSpec("gone", command="/nonexistent/mcp-server"),)),
                         grants=lambda role: ("mcp:gone",))
    try:
        manager.start()
        await eventually(lambda: manager.states()[0].restarts >= 3, "three tries", timeout=60)
        [state] = manager.states()
        assert state.state in (ServerState.FAILED, ServerState.STARTING)
        assert "No such file or directory" in (state.last_error or "")
        assert manager.tools_for(RESEARCH) == ()
    finally:
        await manager.close()
    assert manager.states()[0].state is ServerState.STOPPED
    waits = [r.getMessage().rsplit("trying again in ", 1)[1] for r in caplog.records
             if "mcp server gone could not start" in r.getMessage()]
    assert waits[:3] == ["1 s", "2 s", "4 s"], waits
