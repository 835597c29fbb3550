"""The offline model looks something up (issue 39): a question that plainly asks for what an offered
read-only tool gives makes it call that tool once, with arguments from the question or the schema,
and answer with the result cited ``[server.tool]``.

The tools are the real ones of ``mcp-server-time`` and ``mcp-server-git`` (PyPI, stdio), listed and
called through the official SDK: their own names, descriptions, schemas and read-only hints decide what
the offline model calls. On CI a missing server fails the test.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from board.llm.base import ChatMessage, LLMRequest, LLMResponse, Persona, ToolSpec
from board.llm.offline import OfflineProvider
from board.llm.offline_tools import INTENT_PREFIX
from tests.support.mcp import git_repo, python_server

SOUL = "You are the Chair: you keep the board honest.\n"


class Live:
    """One real MCP server over stdio, through the SDK: its tools as the offline model is offered them."""

    def __init__(self, label: str, client: Any, tools: list[Any]) -> None:
        self.label = label
        self.client = client
        self.tools = tools

    def specs(self) -> tuple[ToolSpec, ...]:
        out = []
        for tool in self.tools:
            hints = tool.annotations
            read_only = bool(hints and hints.read_only_hint and not hints.destructive_hint)
            out.append(ToolSpec(f"{self.label}__{tool.name}", tool.description or "", dict(tool.input_schema),
                                read_only=read_only, cite=f"{self.label}.{tool.name}"))
        return tuple(out)

    async def call(self, name: str, args: dict[str, Any]) -> str:
        result = await self.client.call_tool(name.removeprefix(f"{self.label}__"), args)
        text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
        return json.dumps({"ok": not result.is_error, "result": text} if not result.is_error
                          else {"ok": False, "error": text}, ensure_ascii=False)


@contextlib.asynccontextmanager
async def live(label: str, command: str, *args: str) -> AsyncIterator[Live]:
    """The server started, its tools listed; stopped (its process ended) on the way out. Entered and left in
    the test's own task: the SDK's task group must not span a fixture's setup and teardown."""
    from mcp import Client, StdioServerParameters

    async with Client(StdioServerParameters(command=command, args=list(args))) as client:
        listed = await client.list_tools()
        yield Live(label, client, list(listed.tools))


def time_server() -> contextlib.AbstractAsyncContextManager[Live]:
    return live("time", python_server("mcp-server-time"), "--local-timezone", "UTC")


def git_server(repo: Path) -> contextlib.AbstractAsyncContextManager[Live]:
    return live("git", python_server("mcp-server-git"), "--repository", str(repo))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "repo", "Raise the Pro plan to 20 EUR")


def request(question: str, tools: tuple[ToolSpec, ...], *more: ChatMessage) -> LLMRequest:
    return LLMRequest(model="offline", system=(), messages=(ChatMessage(role="user", content=question), *more),
                      persona=Persona(role="general", name="Chair", emoji="🧭", soul=SOUL), tools=tools,
                      metadata={"session_key": "main", "purpose": "turn"})


async def ask(model: OfflineProvider, s: Live, question: str) -> tuple[LLMResponse, LLMResponse | None]:
    """One offline turn with the server's tools: the first answer, and the one after the call (if any)."""
    tools = s.specs()
    first = await model.complete(request(question, tools))
    if not first.tool_calls:
        return first, None
    assert len(first.tool_calls) == 1
    call = first.tool_calls[0]
    asked = ChatMessage(role="assistant", content="", tool_calls=first.tool_calls)
    result = ChatMessage(role="tool", content=await s.call(call.name, call.arguments), tool_call_id=call.id,
                         name=call.name)
    return first, await model.complete(request(question, tools, asked, result))


async def test_what_time_is_it_calls_the_time_servers_read_only_tool_and_cites_it() -> None:
    async with time_server() as s:
        first, answer = await ask(OfflineProvider(), s, "what time is it in UTC?")
    [call] = first.tool_calls
    assert call.name == "time__get_current_time" and call.arguments == {"timezone": "UTC"}
    assert call.id.startswith(INTENT_PREFIX)
    assert answer is not None and not answer.tool_calls
    assert "[time.get_current_time]" in answer.text
    assert "datetime" in answer.text and "UTC" in answer.text  # the server's own result, quoted into the answer
    assert "offline model" in answer.text


async def test_a_city_in_the_question_becomes_its_iana_zone() -> None:
    async with time_server() as s:
        first, answer = await ask(OfflineProvider(), s, "What time is it in Tokyo right now?")
    assert first.tool_calls[0].arguments == {"timezone": "Asia/Tokyo"}
    assert answer is not None and "Asia/Tokyo" in answer.text and "[time.get_current_time]" in answer.text


async def test_the_last_commit_is_read_with_the_git_servers_log(repo: Path) -> None:
    async with git_server(repo) as s:
        first, answer = await ask(OfflineProvider(), s, f"what was the last commit in {repo}?")
    [call] = first.tool_calls
    assert call.name == "git__git_log" and call.arguments == {"repo_path": str(repo)}
    assert answer is not None and "[git.git_log]" in answer.text and "Raise the Pro plan to 20 EUR" in answer.text


async def test_nothing_is_called_when_nothing_fits_plainly(repo: Path) -> None:
    model = OfflineProvider()
    async with time_server() as t, git_server(repo) as g:
        tools = (*t.specs(), *g.specs())
    for question in ("should we raise prices?", "is it time to hire?", "tell me about our commitments",
                     "what was the last commit?"):  # the last: git's log needs a repository the question names
        answer = await model.complete(request(question, tools))
        assert not answer.tool_calls, question


async def test_a_tool_that_is_not_read_only_is_never_called(repo: Path) -> None:
    async with git_server(repo) as g:
        specs = g.specs()
    assert any(not s.read_only for s in specs)  # the git server's writers (commit, add, reset ...)
    writers_only = tuple(s for s in specs if not s.read_only)
    model = OfflineProvider()
    for question in (f"what was the last commit in {repo}?", f"list the files in {repo}",
                     f"read the file {repo}/pricing.md"):
        answer = await model.complete(request(question, writers_only))
        assert not answer.tool_calls, question
    # the same log tool, marked as a writer: still not called
    log = next(s for s in specs if s.name == "git__git_log")
    answer = await model.complete(request(f"what was the last commit in {repo}?",
                                          (ToolSpec(log.name, log.description, log.parameters, read_only=False),)))
    assert not answer.tool_calls


async def test_a_city_no_zone_is_named_after_is_asked_in_its_zone_and_an_unknown_place_in_utc_said_so() -> None:
    async with time_server() as s:
        model = OfflineProvider()
        first, answer = await ask(model, s, "what time is it in bengaluru?")
        assert first.tool_calls[0].arguments == {"timezone": "Asia/Kolkata"}
        assert answer is not None and "Asia/Kolkata" in answer.text and "UTC" not in answer.text
        first, answer = await ask(model, s, "What time is it in Atlantis?")
    assert first.tool_calls[0].arguments == {"timezone": "UTC"}
    assert answer is not None and "I do not know which timezone Atlantis is in, so I used UTC" in answer.text
    assert "[time.get_current_time]" in answer.text
