"""The consent tests' own tool that changes the world: it appends to a file after asking the board's consent gate
exactly as the MCP manager does (the same :class:`board.agent.outside.ConsentAsk`, ``finished`` after the call),
and the owner's and a member's envelopes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from board.agent.outside import ConsentAsk, ConsentVerdict
from board.agent.tools import Tool, ToolContext, ToolOrigin, ToolResult
from board.app import Board
from board.envelope import Envelope
from board.llm.base import LLMRequest, ToolSpec
from tests.support.fakes.scripted_model import Step, say

__all__ = ["MEMBER", "ORIGIN", "OWNER", "WriteTool", "answer_with_result", "tool_text"]

ORIGIN = ToolOrigin("files", "write_file", read_only=False)
OWNER = Envelope(channel="telegram", text="", sender="42", chat_id="-100", thread_id=7, is_owner=True,
                 is_group=True, sender_name="Owner")
MEMBER = replace(OWNER, sender="43", is_owner=False, sender_name="Friend")


class WriteTool:
    """A tool that changes the world: appends ``content`` to ``path`` under ``root``, asking the gate first."""

    def __init__(self, board: Board, root: Path) -> None:
        self.board = board
        self.root = root
        self.verdicts: list[ConsentVerdict] = []

    async def handle(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        assert ctx.envelope is not None
        key = f"{ctx.envelope.channel}:{ctx.envelope.message_id}:{ORIGIN.label}:{json.dumps(args, sort_keys=True)}"
        ask = ConsentAsk(ORIGIN, args, key=key, role=ctx.role, session_key=ctx.session_key)
        verdict = await self.board.parts.consent.ask(ask, ctx)
        self.verdicts.append(verdict)
        if not verdict.runs:
            return ToolResult.failure(verdict.note)
        with (self.root / str(args["path"])).open("a", encoding="utf-8") as out:
            out.write(str(args["content"]))
        await self.board.parts.consent.finished(verdict, ok=True, summary=f"wrote {args['path']}")
        return ToolResult.success(f"wrote {args['path']}")

    def tool(self) -> Tool:
        spec = ToolSpec("files__write_file", "Write a file", {
            "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"]})
        return Tool(spec, self.handle, timeout_s=None, origin=ORIGIN)


def tool_text(request: LLMRequest) -> str:
    """The last tool result the model was given."""
    return next((m.content for m in reversed(request.messages) if m.role == "tool"), "")


def answer_with_result(request: LLMRequest) -> Step:
    """An answer that repeats the tool result (a scripted model step)."""
    return say(f"RESULT {tool_text(request)}")
