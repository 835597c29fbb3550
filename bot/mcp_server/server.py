"""The board as an MCP server: :func:`board_server` builds the SDK's ``MCPServer`` with the board's tools.

Five tools, each with a description a model can act on, a typed input schema and annotations
(``readOnlyHint`` on the three that only read; ``ask_advisor`` and ``convene_meeting`` write a transcript,
the ledger and a recorded decision, so they are not read-only, but they change nothing outside Sabha:
``openWorldHint`` false, ``destructiveHint`` false). The work is :class:`bot.mcp_server.board_tools.BoardDesk`'s;
a :class:`~bot.mcp_server.board_tools.DeskProblem` comes back as an MCP tool error (``isError``) whose text
says what to do. Both transports serve the same server: stdio (``sabha mcp serve``,
:mod:`bot.cli.mcp`) and streamable HTTP on ``sabha run`` (:mod:`bot.mcp_server.endpoint`).
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from board import __version__
from bot.mcp_server.board_tools import BoardDesk, DeskProblem

__all__ = ["SERVER_NAME", "TOOL_NAMES", "board_server", "client_name"]

log = logging.getLogger("sabha.mcp")

SERVER_NAME = "sabha"
TOOL_NAMES = ("list_advisors", "ask_advisor", "convene_meeting", "list_decisions", "list_action_items")
INSTRUCTIONS = (
    "Sabha is a board of AI advisors (a chair and specialists such as research, marketing, finance, strategy and a "
    "critic). list_advisors says who sits on it; ask_advisor puts one question to one advisor; convene_meeting "
    "holds a board meeting that debates a topic in rounds and ends in a recorded decision (this takes minutes); "
    "list_decisions and list_action_items read what earlier meetings decided and who owes what. You act as the "
    "board's owner: what you ask is answered, recorded and priced as the owner's own questions are.")

READS = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
RECORDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


def client_name(ctx: Context[Any, Any] | None) -> str:
    """The client's name from its MCP handshake (``clientInfo.name``), "" when it gave none."""
    try:
        params = ctx.session.client_params if ctx is not None else None
    except (ValueError, AttributeError):  # outside a request; a session without handshake data
        return ""
    info = getattr(params, "client_info", None)
    return str(getattr(info, "name", "") or "")


def board_server(desk: BoardDesk) -> MCPServer[Any]:
    """The board's MCP server over ``desk`` (see the module docstring)."""
    server: MCPServer[Any] = MCPServer(SERVER_NAME, title="Sabha board of advisors", version=__version__,
                                       instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(annotations=READS, title="List the advisors")
    def list_advisors() -> dict[str, Any]:
        """Who sits on the board: each advisor's role (what ask_advisor and convene_meeting take), name, title and
        what they are for. The advisor with chair true chairs meetings."""
        return desk.advisors()

    @server.tool(annotations=RECORDS, title="Ask an advisor")
    async def ask_advisor(
        role: Annotated[str, Field(description="the advisor's role or name, any case, e.g. finance or CFO "
                                               "(list_advisors lists them)", min_length=1, max_length=60)],
        question: Annotated[str, Field(description="what to ask, in plain words; the advisor remembers earlier "
                                                   "questions from this client", min_length=1)],
        ctx: Context[Any, Any],
    ) -> dict[str, Any]:
        """Put one question to one advisor and get their answer (as `sabha ask --role ROLE` gives it). Each client
        has its own conversation with each advisor (session board:<role>:mcp-<client>). Costs one model turn."""
        try:
            return await desk.ask(role, question, client_name(ctx))
        except DeskProblem as problem:
            raise ToolError(str(problem)) from None

    @server.tool(annotations=RECORDS, title="Convene a board meeting")
    async def convene_meeting(
        topic: Annotated[str, Field(description="what the board should decide, e.g. 'should we expand to Europe "
                                                "next quarter?'", min_length=3, max_length=2000)],
        ctx: Context[Any, Any],
        members: Annotated[list[str] | None, Field(description="the specialists who sit in, by role or name; "
                                                               "leave out for all of them")] = None,
    ) -> dict[str, Any]:
        """Hold a board meeting on a topic to its end: the chair frames it, the members debate in rounds, the chair
        records a decision (recommendation, rationale, consensus, dissent, action items). Returns the meeting id,
        the decision, each member's stance and the minutes. Takes minutes and several model calls; progress is
        reported as members speak."""

        async def progress(done: float, total: float | None, what: str) -> None:
            await ctx.report_progress(done, total, what)

        try:
            return await desk.convene(topic, members, client_name(ctx), progress)
        except DeskProblem as problem:
            raise ToolError(str(problem)) from None

    @server.tool(annotations=READS, title="List board decisions")
    async def list_decisions(
        status: Annotated[str | None, Field(description="only decisions in this state: proposed, ratified, vetoed "
                                                        "or revisit; leave out for all")] = None,
        limit: Annotated[int, Field(description="at most this many, newest first", ge=1, le=200)] = 20,
    ) -> dict[str, Any]:
        """Recorded board decisions, newest first: the meeting id, topic, recommendation, where each stands
        (proposed until the owner ratifies or vetoes it) and its action items."""
        try:
            return await desk.decisions(status, limit)
        except DeskProblem as problem:
            raise ToolError(str(problem)) from None

    @server.tool(annotations=READS, title="List action items")
    async def list_action_items(
        open_only: Annotated[bool, Field(description="only the items not yet done (default); false lists the "
                                                     "done ones too")] = True,
        limit: Annotated[int, Field(description="at most this many", ge=1, le=200)] = 100,
    ) -> dict[str, Any]:
        """Action items of recorded decisions: the task, who owes it, when it is due, its meeting."""
        return await desk.action_items(open_only, limit)

    return server
