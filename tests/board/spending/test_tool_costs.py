"""What the tools cost (issue 39): ``sabha cost --by tool`` reads the ledger's ``tool_calls`` rows written by
real exchanges: an outside tool as ``server.tool`` (its row's server; the ``<server>__`` of its API name left
off), Sabha's own tools by name under ``sabha``; calls, failures, median and p95 latency, result bytes and the
roles that called, since a moment and for one role. On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from board.agent.tools import Tool, ToolContext, ToolOrigin, ToolResult
from board.llm.base import ToolSpec
from board.spending.tool_costs import format_tool_report, percentile, tool_costs
from board.storage.url import StateURL
from tests.support.fakes.scripted_model import ScriptedModel, call, calls, say
from tests.support.llm import LookupTool, envelope, scripted_board

LOG = "Commit: abc123\nMessage: Raise the Pro plan to 20 EUR"


def git_log() -> Tool:
    """A tool that comes from the git server (as the MCP manager makes them): it fails for a missing repo."""

    async def handler(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if args["repo_path"] != "/srv/repo":
            return ToolResult.failure(f"{args['repo_path']} is not a git repository")
        return ToolResult.success(LOG)

    spec = ToolSpec("git__git_log", "Shows the commit logs",
                    {"type": "object", "properties": {"repo_path": {"type": "string"}}, "required": ["repo_path"]})
    return Tool(spec, handler, timeout_s=5, origin=ToolOrigin("git", "git_log", read_only=True))


def test_percentile_is_the_nearest_rank() -> None:
    assert percentile([], 0.5) is None
    assert percentile([30.0, 10.0, 20.0], 0.5) == 20.0
    assert percentile([float(n) for n in range(1, 101)], 0.95) == 95.0
    assert percentile([5.0], 0.95) == 5.0


@pytest.mark.backends
async def test_tool_costs_group_outside_tools_by_server_and_own_tools_under_sabha(
        workspace: Path, data_dir: Path, state_url: StateURL | None) -> None:
    model = ScriptedModel()
    model.script(calls(("git__git_log", {"repo_path": "/srv/repo"}), ("git__git_log", {"repo_path": "/nowhere"})),
                 call("lookup", {"q": "tea"}), say("It shipped; tea is 18%."), role="finance")
    model.script(call("git__git_log", {"repo_path": "/srv/repo"}), say("It shipped."), role="research")
    board = await scripted_board(workspace, data_dir, model, state=state_url)
    board.parts.tools.register(LookupTool().tool())
    board.parts.tools.register(git_log())
    try:
        await board.handle(envelope("@finance did the price change ship? and tea?"))
        await board.handle(envelope("@research did the price change ship?"))
        rows = await tool_costs(board.parts.db)
        by_label = {r.label: r for r in rows}
        assert [r.label for r in rows] == ["git.git_log", "lookup"]  # most calls first
        git = by_label["git.git_log"]
        assert (git.server, git.calls, git.failed, git.roles) == ("git", 3, 1, ("finance", "research"))
        assert git.median_ms is not None and git.p95_ms is not None and git.p95_ms >= git.median_ms
        assert git.bytes > 2 * len(LOG)  # the two results and the error went back to the model
        own = by_label["lookup"]
        assert (own.server, own.calls, own.failed, own.roles) == ("sabha", 1, 0, ("finance",))
        research = await tool_costs(board.parts.db, role="research")
        assert [(r.label, r.calls) for r in research] == [("git.git_log", 1)]
        later = await tool_costs(board.parts.db, since=datetime.now(UTC) + timedelta(hours=1))
        assert later == []
        report = format_tool_report(rows, since_label="since the beginning")
        lines = report.splitlines()
        assert lines[1].split()[:4] == ["tool", "server", "calls", "failed"]
        assert lines[2].split()[:4] == ["git.git_log", "git", "3", "1"]
        assert lines[3].split()[:4] == ["lookup", "sabha", "1", "0"]
        assert lines[-1].split()[:3] == ["total", "4", "1"]
        assert format_tool_report([], since_label="since 2026-11-29") == "No tool calls recorded since 2026-11-29."
    finally:
        await board.close()
