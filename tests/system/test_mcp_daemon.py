"""A real ``sabha run`` with MCP servers: on the fake Telegram API with a scripted model (the fake OpenAI API), the
research advisor given ``mcp-server-git`` (PyPI, stdio) on a throwaway repository reads its last commit and cites
it; ``/readyz`` says degraded (HTTP 200) for a server that cannot start; SIGHUP adds and removes servers; when
the daemon stops no server process is left."""

from __future__ import annotations

import json
import signal
import sqlite3
import sys
from pathlib import Path

from aiohttp import ClientSession

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.mcp import REPO, git_repo, python_server, server_pids
from tests.support.telegram import OWNER, eventually

COMMIT = "Ship the pricing page to 40 pilot customers"


def _mcp_lines(repo: Path, servers: dict[str, list[str]]) -> list[str]:
    lines = ["board:", "  agents:", "    research:", '      tools: ["mcp:git"]', "mcp:", "  servers:"]
    for name, body in servers.items():
        lines += [f"    {name}:", *(f"      {line}" for line in body)]
    return lines


def _git(repo: Path) -> list[str]:
    return [f"command: {python_server('mcp-server-git')}", f"args: [--repository, {repo}]"]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def test_research_cites_the_last_commit_read_through_mcp_server_git(
        tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI) -> None:
    repo = git_repo(tmp_path / "repo", COMMIT)
    servers = {"git": _git(repo), "broken": ["command: /nonexistent/mcp-server", "start_timeout_s: 5"],
               "stubborn": [f"command: {sys.executable}", "args: [-m, tests.support.fakes.mcp_server, --stubborn]",
                            f"cwd: {REPO}"]}
    config = write_config(tmp_path, fake, fake_openai, stream=False,  # type: ignore[arg-type]
                          extra=_mcp_lines(repo, servers))
    fake_openai.script_tool_call("git__git_log", {"repo_path": str(repo), "max_count": 1})
    fake_openai.script_text(f"The repository's last commit says \u201c{COMMIT}\u201d [git.git_log].")
    sabha = SabhaProcess(config)
    git_pids: list[int] = []
    try:
        await sabha.start()
        await sabha.wait_for_log(r"mcp server git ready: 12 tool")
        assert sabha.proc is not None
        await sabha.wait_for_log(r"mcp server stubborn ready")
        git_pids = [p for p in server_pids(sabha.proc.pid)
                    if "mcp-server-git" in _cmdline(p) or "--stubborn" in _cmdline(p)]
        assert len(git_pids) == 2, "the git server and the stubborn one run as the daemon's children"

        async with ClientSession() as http, http.get(f"http://127.0.0.1:{sabha.port}/readyz") as resp:
            body = await resp.json()
        assert resp.status == 200 and body["status"] == "degraded", body
        assert body["checks"]["mcp"]["git"]["ok"] and body["checks"]["mcp"]["git"]["state"] == "ready"
        assert not body["checks"]["mcp"]["broken"]["ok"] and body["checks"]["mcp"]["stubborn"]["ok"]
        assert any("mcp server broken" in line for line in body["degraded"]), body

        fake.push_text(OWNER, OWNER, "@research what does the last commit of our repository say?")
        await eventually(lambda: any("[git.git_log]" in m.text for m in fake.sent_to(OWNER)), "the cited answer",
                         timeout=120)

        asked, answered = fake_openai.requests[0].json, fake_openai.requests[1].json
        offered = {t["function"]["name"]: t["function"]["description"] for t in asked["tools"]}
        assert "cite what you use from them as [git.git_log]" in offered["git__git_log"]
        result = next(m for m in answered["messages"] if m["role"] == "tool")["content"]
        print("the model received the tool result:\n" + result)
        body = json.loads(result)["result"]
        assert body["cite_as"] == "[git.git_log]"
        assert COMMIT in "\n".join(json.loads(line) for line in body["quoted_data"].splitlines())

        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()
    answer = next(m.text for m in fake.sent_to(OWNER) if "[git.git_log]" in m.text)
    assert COMMIT in answer
    with sqlite3.connect(tmp_path / "sessions" / "sabha.db") as db:
        rows = db.execute("SELECT server, name, role, ok, latency_ms FROM tool_calls").fetchall()
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [("git", "git__git_log", "research", 1)], rows
    assert rows[0][4] > 0
    left = [p for p in git_pids if _alive(p)]
    assert not left, f"a server outlived the daemon: {[_cmdline(p) for p in left]}"


async def test_sighup_adds_and_removes_servers_without_a_restart(
        tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI) -> None:
    repo = git_repo(tmp_path / "repo", COMMIT)
    config = write_config(tmp_path, fake, fake_openai, extra=_mcp_lines(repo, {"git": _git(repo)}))  # type: ignore[arg-type]
    sabha = SabhaProcess(config)
    try:
        await sabha.start()
        await sabha.wait_for_log(r"mcp server git ready")
        assert sabha.proc is not None
        [git_pid] = [p for p in server_pids(sabha.proc.pid) if "mcp-server-git" in _cmdline(p)]
        config.write_text(config.read_text().replace(
            "  servers:\n    git:", f"  servers:\n    time:\n      command: {python_server('mcp-server-time')}\n"
                                    "    old:"), encoding="utf-8")  # time added; git renamed old: git removed
        config.write_text(config.read_text().replace('tools: ["mcp:git"]', 'tools: ["mcp:time"]'), encoding="utf-8")
        sabha.proc.send_signal(signal.SIGHUP)
        await sabha.wait_for_log(r"reload: mcp server git removed")
        await sabha.wait_for_log(r"mcp server time ready: 2 tool")
        await sabha.wait_for_log(r"mcp server old ready")
        await eventually(lambda: not _alive(git_pid), "the removed server's process ended", timeout=60)
        async with ClientSession() as http, http.get(f"http://127.0.0.1:{sabha.port}/readyz") as resp:
            body = await resp.json()
        assert resp.status == 200 and body["status"] == "ready", body
        assert set(body["checks"]["mcp"]) == {"time", "old"}
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()
