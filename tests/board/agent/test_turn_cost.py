"""What a chat turn costs, counted (issue 44: a turn's own CPU went on rebuilding the router and addressing and
re-rendering the static prompt every turn, and on SQL round trips): the router is built once and again only
when a role's name, title or emoji changes; the static block is rendered once per state of its files; the SQL
statements a turn runs do not grow back. Counts, never times."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from board.app import Board
from board.routing.cached import RouterCache
from bot.app import all_migrations
from tests.support.fakes.scripted_model import ScriptedModel
from tests.support.knowledge import board_settings, system_text
from tests.support.llm import envelope

TURNS = 40
#: SQL statements one plain chat turn of the owner runs on SQLite, measured when the limit was set (issue 44):
#: who they are (1), a meeting running here (1), the session and what is remembered about them (1), the
#: ledger row of the model call (1); since issue 43's consolidation reaches the advisors, the person's profile, read
#: in the facts' statement (cpu47: it was a statement of its own); the session, read in the facts' statement too
#: (cpu48: it was a statement of its own; 5 -> 4). A compaction adds its own ledger row about every 20 messages.
STATEMENTS_PER_TURN = 4


async def _chat(b: Board, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        await b.handle(envelope(f"What should we do about pricing, part {i}?", message_id=i + 1))


def _router(b: Board) -> RouterCache:
    router = b.parts.router
    assert isinstance(router, RouterCache)
    return router


async def test_forty_turns_build_the_router_once_and_render_the_static_block_once(workspace: Path,
        data_dir: Path) -> None:
    model = ScriptedModel()
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry(),
                                migrations=all_migrations()) as b:
        await _chat(b, 1)
        builds, renders = _router(b).builds, b.parts.prompts.static_renders
        await _chat(b, TURNS, start=1)
        assert _router(b).builds == builds == 1
        assert b.parts.prompts.static_renders == renders == 1
        turns = model.requests_for("general", purpose="turn")
        assert len(turns) == TURNS + 1
        statics = {next(b.text for b in r.request.system if b.name == "static") for r in turns}
        assert len(statics) == 1  # the same bytes every turn


async def test_an_edited_soul_is_used_by_the_next_turn(workspace: Path, data_dir: Path) -> None:
    """The caches hold only while nothing changed: a new name routes at once, a new text is sent at once."""
    model = ScriptedModel()
    soul = workspace / "board" / "finance.soul.md"
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry(),
                                migrations=all_migrations()) as b:
        await b.handle(envelope("@finance how is the runway?", message_id=1))
        builds, renders = _router(b).builds, b.parts.prompts.static_renders
        text = soul.read_text(encoding="utf-8")
        renamed = re.sub(r"(?m)^name:.*$", "name: Moneypenny", text, count=1)
        assert renamed != text
        soul.write_text(renamed.replace("You think in numbers", "You think in numbers (edited)"), encoding="utf-8")
        await asyncio.sleep(0.05)  # a new mtime even on a coarse clock
        reply = await b.handle(envelope("Moneypenny, how is the runway now?", message_id=2))
        assert reply.role == "finance"
        assert _router(b).builds == builds + 1
        assert b.parts.prompts.static_renders == renders + 1
        assert "(edited)" in system_text(model.requests_for("finance")[-1])


async def test_the_statements_a_chat_turn_runs_do_not_grow(workspace: Path, data_dir: Path) -> None:
    model = ScriptedModel()
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry(),
                                migrations=all_migrations()) as b:
        await _chat(b, 3)  # the session, the soul files and the people tables are warm
        statements: list[str] = []
        conn: Any = b.parts.db.conn  # type: ignore[attr-defined]  # SQLite's own trace: every statement run
        await conn.set_trace_callback(statements.append)
        await _chat(b, TURNS, start=3)
        await conn.set_trace_callback(None)
    compactions = sum(1 for s in statements if "INSERT INTO llm_calls" in s) - TURNS
    per_turn = (len(statements) - compactions) / TURNS
    assert per_turn <= STATEMENTS_PER_TURN, "\n".join(sorted(set(statements)))


async def test_a_role_s_profile_is_built_once_per_change_of_its_soul(workspace: Path, data_dir: Path) -> None:
    """Routing, the prompt, the tools and the models ask for the roles' profiles several times a turn, and each
    look at the files (the admission's, the turn's) asked for them again: ~12 builds a turn (issue 44). A profile
    is built again only when its soul (or the roster) changed: no build in forty turns, one after an edit, and
    the edit is in the very next turn's prompt."""
    model = ScriptedModel()
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry(),
                                migrations=all_migrations()) as b:
        await _chat(b, 1)
        souls = b.parts.souls
        before = souls.profile_builds
        await _chat(b, TURNS, start=1)
        assert souls.profile_builds == before
        soul = workspace / "board" / "general.soul.md"
        if not soul.exists():
            soul = souls.profile("general").soul_path
        soul.write_text(soul.read_text(encoding="utf-8") + "\nAlways mention the weather (edited).\n",
                        encoding="utf-8")
        await asyncio.sleep(0.05)  # a new mtime even on a coarse clock
        await _chat(b, 1, start=TURNS + 1)
        assert souls.profile_builds == before + 1
        assert "(edited)" in system_text(model.requests_for("general")[-1])


async def test_a_turn_looks_at_each_watched_file_with_one_lstat_per_look(workspace: Path, data_dir: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A watched file that is not a symlink is looked at with one ``lstat`` (its ``stat`` says the same): a turn
    made ~37 ``stat`` and ~26 ``lstat`` calls on the workspace (issue 44). A symlink's target is still
    ``stat``-ed (tests/board/workspace: a swapped link is seen)."""
    import os

    model = ScriptedModel()
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry(),
                                migrations=all_migrations()) as b:
        await _chat(b, 2)
        root = str(workspace.resolve())
        calls: list[str] = []
        real_stat, real_lstat = os.stat, os.lstat

        def counted(real: Any, name: str) -> Any:
            def call(path: Any, *args: Any, **kw: Any) -> Any:
                if str(path).startswith(root):
                    calls.append(name)
                return real(path, *args, **kw)
            return call

        monkeypatch.setattr(os, "stat", counted(real_stat, "stat"))
        monkeypatch.setattr(os, "lstat", counted(real_lstat, "lstat"))
        await _chat(b, TURNS, start=2)
        monkeypatch.undo()
        stats, lstats = calls.count("stat") / TURNS, calls.count("lstat") / TURNS
        watched = len(b.parts.souls.roles())
        assert stats <= 1, (stats, lstats)  # the roster folder, once per message
        # each watched file (souls, SOUL.md, AGENTS.md, USER.md, the two templates) once per message: the admission
        # and the turn that follows it at once share their look; a compaction's summary (4 of these 40 turns) looks
        # at the static template once more
        assert lstats <= watched + 4 + 0.25, (stats, lstats)


async def test_a_turn_that_waited_for_its_session_looks_at_the_files_again(workspace: Path, data_dir: Path) -> None:
    """A message's admission and its turn share one look at the files only when the turn starts at once: one that
    waits for another turn of its session (the files may be edited meanwhile) looks again, so an edit saved while
    it waited is in its prompt."""
    model = ScriptedModel()
    soul = workspace / "board" / "finance.soul.md"
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry(),
                                migrations=all_migrations()) as b:
        await b.handle(envelope("@finance how is the runway?", message_id=1))
        key = model.requests_for("finance")[-1].request.metadata.get("session_key") or "main"
        lock = b.parts.locks.lock_for(str(key))
        async with lock:  # another turn of the session, under way
            asked = asyncio.create_task(b.handle(envelope("@finance and now?", message_id=2)))
            while not getattr(lock, "_waiters", None):  # admitted, and waiting for the session
                assert not asked.done(), asked.result()
                await asyncio.sleep(0.001)
            soul.write_text(soul.read_text(encoding="utf-8").replace("You think in numbers",
                                                                     "You think in numbers (edited)"),
                            encoding="utf-8")
        reply = await asked
        assert reply.role == "finance"
        assert "(edited)" in system_text(model.requests_for("finance")[-1])


def test_a_history_window_reads_each_entry_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn asks its window for the messages several times (the message cap, the token budget, the prompt):
    each entry becomes a message once, not once per question."""
    from board.agent import compaction

    read: list[str] = []
    real = compaction.entry_message

    def counted(entry: Any) -> Any:
        read.append(str(entry.get("id")))
        return real(entry)

    monkeypatch.setattr(compaction, "entry_message", counted)
    entries = tuple({"type": "message", "id": f"e{i}", "role": ("user", "assistant")[i % 2], "text": f"say {i}"}
                    for i in range(10))
    window = compaction.HistoryWindow(None, entries)
    assert len(window.messages()) == len(window.messages()) == 10
    assert [m.content for m in window.messages_before("e4")] == ["say 0", "say 1", "say 2", "say 3"]
    assert sorted(read) == sorted(e["id"] for e in entries)


async def test_the_session_and_the_memory_are_read_in_one_statement_and_a_failed_read_stops_nothing(
        workspace: Path, data_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The turn's session is read in the facts' statement: the turn continues the same session with what it
    remembers; when that read fails (here: the facts' table gone), the session is read alone, the answer comes
    without memory, the conversation goes on in the same session, and the failure is logged."""
    from tests.support.fakes.scripted_model import call, say
    from tests.support.knowledge import context_of, rows

    model = ScriptedModel()
    model.script(call("remember", {"key": "currency", "value": "INR"}), say("Noted."), say("In INR."),
                 say("Still here."))
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry(),
                                migrations=all_migrations()) as b:
        await b.handle(envelope("Always use rupees with me.", message_id=1))
        await b.handle(envelope("What budget?", message_id=2))
        assert '- currency: "INR"' in context_of(model.requests[-1])
        sessions = await rows(b, "SELECT session_id FROM sessions WHERE key = 'main'")
        assert len(sessions) == 1
        await b.parts.db.execute("ALTER TABLE memory_facts RENAME TO memory_facts_away")
        try:
            reply = await b.handle(envelope("And now?", message_id=3))
        finally:
            await b.parts.db.execute("ALTER TABLE memory_facts_away RENAME TO memory_facts")
        assert reply.text == "Still here." and not reply.degraded
        last = model.requests[-1].request.messages
        assert "What budget?" in [m.content for m in last]  # the same session's history
        assert "currency" not in context_of(model.requests[-1])
        assert await rows(b, "SELECT session_id FROM sessions WHERE key = 'main'") == sessions
    assert any("recalling memory for general failed" in r.getMessage() for r in caplog.records)


async def test_the_tool_schemas_are_dumped_to_json_once_not_every_turn(workspace: Path, data_dir: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The prompt's attribution (tokens per block, recorded with every model call) dumped every offered tool's
    schema to JSON on every call to count its tokens (issue 44): each schema object is counted once."""
    import json

    from board.agent.exchange import prepare

    model = ScriptedModel()
    async with await Board.open(board_settings(workspace, data_dir, model), model.registry(),
                                migrations=all_migrations()) as b:
        await _chat(b, 2)
        dumped: list[object] = []
        real = json.dumps

        def counted(value: Any, *args: Any, **kw: Any) -> str:
            if isinstance(value, dict) and value.get("type") == "object":  # a tool's parameters (a JSON schema)
                dumped.append(value)
            return real(value, *args, **kw)

        monkeypatch.setattr(prepare.json, "dumps", counted)
        await _chat(b, 10, start=2)
        monkeypatch.undo()
        assert model.requests[-1].request.tools  # tools were offered every turn
        assert dumped == []
