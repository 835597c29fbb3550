"""Tools that change things, through a real board (scripted model, SQLite) and the MCP manager's real consent path
to our fake server's ``--hostile`` write tools (``append``, ``slow_append``) over stdio (the security review of
issue 39):

- an MCP client asking an advisor (``BoardDesk.ask``, what ``ask_advisor`` runs): the owner cannot be asked over
  the MCP channel, so the call is refused at once saying how to allow it, nothing waits in the queue; once the
  owner allows the tool (``sabha tools allow``'s store call) the same question runs it;
- the terminal (no message id): the same call in a later answer is asked for again and runs again when allowed;
- a call that gave no answer in time may have taken effect: asked again (the message answered again after a
  restart) it is "may have run", never "ran already and failed", and never repeated.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from board.agent.runner import AgentSettings
from board.app import Board, BoardSettings
from board.schedule.work import Place
from board.tools.consent import ConsentSettings
from board.tools.mcp import McpSettings
from board.workspace.paths import copy_default_workspace
from bot.cli.ask import console_envelope
from bot.mcp_server.board_tools import BoardDesk, McpBoardParts
from tests.support.consent import OWNER, answer_with_result, tool_text
from tests.support.fakes.scripted_model import ScriptedModel, call
from tests.support.llm import FAST_RETRY
from tests.support.mcp import hostile_spec


@pytest.fixture
async def board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Board]:
    monkeypatch.setenv("FAKE_MCP_OUT", str(tmp_path / "out.txt"))
    copy_default_workspace(tmp_path / "ws")
    soul = tmp_path / "ws" / "board" / "research.soul.md"
    soul.write_text(soul.read_text().replace("consults: [finance, strategy]",
                                             "consults: [finance, strategy]\ntools: [\"mcp:bad\"]"))
    model = ScriptedModel()
    settings = BoardSettings(workspace=tmp_path / "ws", data_dir=tmp_path / "data",
                             agent=AgentSettings(default_model="scripted:main", retry=FAST_RETRY),
                             consent=ConsentSettings(timeout_s=60.0, poll_s=0.2),
                             mcp=McpSettings(servers=(hostile_spec(call_timeout_s=2.0),)))
    opened = await Board.open(settings, model.registry())
    opened.model = model  # type: ignore[attr-defined]
    try:
        opened.parts.mcp.start()
        await opened.parts.mcp.settled()
        yield opened
    finally:
        await opened.close()


def model_of(board: Board) -> ScriptedModel:
    return board.model  # type: ignore[attr-defined, no-any-return]


def written(board: Board) -> str:
    out = board.parts.settings.data_dir.parent / "out.txt"
    return out.read_text() if out.exists() else ""


async def waits_for(board: Board, number: int, turn: asyncio.Task[object]) -> None:
    for _ in range(600):
        if await board.parts.consent.store.number(number) is not None or turn.done():
            break
        await asyncio.sleep(0.05)
    assert not turn.done(), turn.result()


async def test_an_mcp_client_is_refused_at_once_with_how_to_allow_and_nothing_waits(board: Board) -> None:
    desk = BoardDesk(McpBoardParts.of(board.parts))
    model_of(board).script(call("bad__append", {"text": "from mcp"}), answer_with_result, role="research")
    answer = await desk.ask("research", "append 'from mcp' please", "claude")
    seen = tool_text(model_of(board).requests_for("research")[-1].request)
    print(seen)
    assert "cannot be asked over mcp" in seen and "sabha tools allow bad.append" in seen, seen
    assert "did not answer within" not in answer["text"]
    assert await board.parts.consent.store.recent() == []  # nothing asked, nothing pending
    assert [w for w in await board.parts.schedule.store.open_rows() if w.key.startswith("consent:")] == []
    assert written(board) == ""

    await board.parts.consent.store.allow_always("bad", "append", "console:owner", board.parts.clock.now())
    model_of(board).script(call("bad__append", {"text": "from mcp"}), answer_with_result, role="research")
    answer = await desk.ask("research", "append 'from mcp' please", "claude")
    assert "appended" in answer["text"] and written(board) == "from mcp"


async def test_the_same_call_in_a_later_terminal_answer_is_asked_for_and_runs_again(board: Board) -> None:
    console = Place("console", "console", None)
    for number in (1, 2):
        model_of(board).script(call("bad__append", {"text": "line\n"}), answer_with_result, role="research")
        turn = asyncio.create_task(board.handle(console_envelope("append a line", "research")))
        await waits_for(board, number, turn)
        decided = await board.parts.consent.decide(None, "allowed_once", by="console:owner", place=console)
        assert decided.changed, decided.text
        reply = await turn
        assert "appended" in reply.text, reply.text
    assert written(board) == "line\nline\n"


async def test_a_call_that_timed_out_may_have_run_and_is_never_repeated_nor_called_failed(board: Board) -> None:
    message = replace(OWNER, text="append slowly", message_id="m1", role_hint="research")
    place = Place(OWNER.channel, OWNER.chat_id, OWNER.thread_id)
    model_of(board).script(call("bad__slow_append", {"text": "once"}), answer_with_result, role="research")
    turn = asyncio.create_task(board.handle(message))
    await waits_for(board, 1, turn)
    assert (await board.parts.consent.decide(None, "allowed_once", by="telegram:42", place=place)).changed
    first = await turn
    print(first.text)
    assert "gave no answer within 2 s" in first.text and "may have taken effect" in first.text
    row = await board.parts.consent.store.number(1)
    assert row is not None and row.started_at is not None and row.finished_at is None  # outcome unknown

    model_of(board).script(call("bad__slow_append", {"text": "once"}), answer_with_result, role="research")
    again = await board.handle(message)  # the same message answered again (a restart, a retry)
    print(again.text)
    assert "ran already and failed" not in again.text
    assert "how it ended is not known" in again.text and "It was not run again" in again.text
    assert written(board) == "once"
