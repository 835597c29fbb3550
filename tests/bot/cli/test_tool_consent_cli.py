"""``sabha tools approvals|allow|deny`` through the real CLI: always allowing a tool and taking it back, a
waiting call allowed or refused by its number, and the clear errors for what cannot be read or does not exist."""

from __future__ import annotations

import asyncio
from pathlib import Path

from board.agent.outside import ConsentAsk, ConsentKind
from board.agent.tools import ToolContext
from board.app import BOARD_MIGRATIONS
from board.clock import SystemClock
from board.schedule import Schedule
from board.storage import open_database, parse_state_url
from board.tools.consent import ApprovalStore, ConsentSettings, OwnerConsent
from bot.app import all_migrations
from tests.bot.cli.test_cli import run
from tests.support.consent import ORIGIN, OWNER
from tests.support.mcp import npm_server, python_server

REPO = Path(__file__).resolve().parents[3]
MINE = {"PYTHONPATH": str(REPO)}


def sabha(home: Path, *args: str, code: int = 0) -> str:
    result = run(["tools", *args], cwd=home, env=MINE)
    assert result.returncode == code, (result.stdout, result.stderr)
    return result.stdout + result.stderr


def with_servers(home: Path, files: Path) -> None:
    """The board's servers: the filesystem server on ``files``, mcp-server-time, one that cannot start."""
    files.mkdir(parents=True, exist_ok=True)
    with (home / "sabha.yaml").open("a", encoding="utf-8") as f:
        f.write("\n".join(["", "mcp:", "  servers:",
                           "    filesystem:", f"      command: {npm_server('mcp-server-filesystem')}",
                           f"      args: [{files}]",
                           "    time:", f"      command: {python_server('mcp-server-time')}",
                           "    broken:", "      command: /nonexistent/mcp-server", "      start_timeout_s: 5", ""]))


def test_always_allow_a_tool_list_it_and_take_it_back(tmp_path: Path) -> None:
    assert run(["init", str(tmp_path / "proj")], cwd=tmp_path, env=MINE).returncode == 0
    home = tmp_path / "proj"
    with_servers(home, tmp_path / "files")
    assert "no tool call has asked for consent yet" in sabha(home, "approvals")
    assert "filesystem.write_file is always allowed" in sabha(home, "allow", "filesystem.write_file")
    assert "is always allowed already" in sabha(home, "allow", "filesystem.write_file")
    listed = sabha(home, "approvals")
    assert "always allowed: filesystem.write_file" in listed and "no call has been answered yet" in listed
    assert "is no longer always allowed" in sabha(home, "deny", "filesystem.write_file")
    assert "was not always allowed; nothing changed" in sabha(home, "deny", "filesystem.write_file")
    assert "always allowed: none" in sabha(home, "approvals")
    bad = sabha(home, "allow", "write_file", code=2)
    assert "name a tool as SERVER.TOOL (e.g. filesystem.write_file)" in bad
    assert "There is no tool call #7 waiting for consent" in sabha(home, "deny", "7", code=2)


async def test_a_waiting_call_is_refused_by_its_number_from_another_process(tmp_path: Path) -> None:
    """A turn waiting for the owner (here: the gate on the board's state db) gets ``sabha tools deny 1``."""
    assert run(["init", str(tmp_path / "proj")], cwd=tmp_path, env=MINE).returncode == 0
    home = tmp_path / "proj"
    url = parse_state_url("", data_dir=home / "sessions", env={})
    async with await open_database(url, [*BOARD_MIGRATIONS, *all_migrations()]) as db:
        clock = SystemClock()
        gate = OwnerConsent(ApprovalStore(db), Schedule(db, clock), clock, ConsentSettings(timeout_s=60, poll_s=0.2))
        ask = ConsentAsk(ORIGIN, {"path": "x"}, key="cli-1", role="finance", session_key="main")
        waiting = asyncio.create_task(gate.ask(ask, ToolContext(role="finance", session_key="main", envelope=OWNER)))
        for _ in range(1200):  # the question is recorded before the wait starts
            if await gate.store.get("cli-1") is not None:
                break
            await asyncio.sleep(0.05)
        listed = await asyncio.to_thread(sabha, home, "approvals")
        assert "waiting for your answer (1;" in listed and "#1" in listed and "files.write_file for finance" in listed
        said = await asyncio.to_thread(sabha, home, "deny", "1")
        assert "Denied: files.write_file (#1) will not run" in said
        verdict = await waiting
        assert verdict.kind is ConsentKind.DENIED and not verdict.runs
        assert "was denied already; nothing changed" in await asyncio.to_thread(sabha, home, "allow", "1", code=2)


def test_allow_names_a_declared_server_and_a_tool_it_has(tmp_path: Path) -> None:
    """A typo is not recorded as consent, nor a name that would pre-authorise a server added later: the server
    must be in mcp.servers and, started, have the tool; one that cannot start is refused unless --force."""
    assert run(["init", str(tmp_path / "proj")], cwd=tmp_path, env=MINE).returncode == 0
    home = tmp_path / "proj"
    with_servers(home, tmp_path / "files")
    said = sabha(home, "allow", "nosrv.x", code=2)
    assert "no MCP server 'nosrv' in mcp.servers (declared: filesystem, time, broken)" in said
    assert "did you mean" not in said
    said = sabha(home, "allow", "filesytem.write_file", code=2)
    assert "no MCP server 'filesytem' in mcp.servers: did you mean filesystem.write_file?" in said
    said = sabha(home, "allow", "filesystem.writefile", code=2)
    assert "filesystem has no tool 'writefile': did you mean filesystem.write_file?" in said
    assert "its tools: " in said and "read_text_file" in said
    said = sabha(home, "allow", "broken.anything", code=2)
    assert "broken did not start" in said and "No such file" in said and "--force" in said
    assert "always allowed: none" in sabha(home, "approvals")
    said = sabha(home, "allow", "filesystem.write_file")
    assert "filesystem.write_file is always allowed" in said
    said = sabha(home, "allow", "--force", "broken.anything")
    assert "broken did not start" in said and "broken.anything is always allowed" in said
    assert "always allowed: broken.anything, filesystem.write_file" in sabha(home, "approvals")
