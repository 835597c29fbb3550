"""The consolidated profile reaches the advisors through a real ``sabha run`` (issue 43): facts the owner states in
a Telegram DM (extracted by the cheap model on a fake OpenAI-compatible server, which also plays the advisors) are
consolidated at the scheduled hour (the daemon's clock is a file the test writes); the owner's next DM turn sends
the advisor the new profile, JSON-quoted, in the per-turn block; a forum turn of the same person gets none; after
``sabha memory undo`` (run beside the daemon) the next turn has no profile again (there was none before)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.board.memory.test_consolidation_daemon import DUE, SAID, USER
from tests.support.fakes.local_server import RecordedRequest
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.standing import StandingBoard, sabha_cli
from tests.support.telegram import FORUM, OWNER

PROFILE = "Based in Pune, Maharashtra; works at Acme Corp."


@pytest.fixture
async def model() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:  # the advisors and the cheap model; extractions answered by memory_text
        yield server


@pytest.fixture
async def board(tmp_path: Path, fake: FakeTelegramAPI, model: FakeOpenAI) -> AsyncIterator[StandingBoard]:
    extra = ["llm:", "  model: openai:main", "  cheap_model: openai:cheap", "  retry: {retries: 0}", "  providers:",
             "    openai:", "      api_key: test-key", f"      base_url: {model.base_url}", "      stream: false",
             "memory:", "  consolidation:", "    hour: 3"]
    running = StandingBoard(tmp_path, fake, extra=extra)
    try:
        yield running
    finally:
        await running.sabha.close()


def _texts(body: dict[str, Any]) -> list[str]:
    """Every text of a chat-completions request's messages, in order."""
    out: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"text": content}]
        out += [str(p.get("text") or "") for p in parts if isinstance(p, dict)]
    return out


def _turn(model: FakeOpenAI, marker: str) -> str:
    """The advisor's request for the message carrying ``marker`` (its whole prompt as text)."""
    found = [r for r in model.requests if any(marker in t for t in _texts(r.body)[-2:])]
    assert len(found) == 1, f"{len(found)} requests carry {marker}"
    return "\n".join(_texts(found[0].body))


async def _ask(board: StandingBoard, model: FakeOpenAI, marker: str, *, forum: bool = False) -> str:
    seen = len(model.requests)
    board.telegram.push_text(FORUM if forum else OWNER, OWNER, f"{marker} what should I plan for next week?")
    await model.wait_for_requests(seen + 1, timeout=120)
    await board.telegram.wait_until(lambda: any(_has(r, marker) for r in model.requests), marker, 120)
    return _turn(model, marker)


def _has(request: RecordedRequest, marker: str) -> bool:
    return any(marker in t for t in _texts(request.body)[-2:])


async def test_after_a_consolidation_the_next_turn_holds_the_profile_and_after_undo_it_does_not(
        board: StandingBoard, fake: FakeTelegramAPI, model: FakeOpenAI) -> None:
    await board.start()
    for n, (text, key, value) in enumerate(SAID, start=1):
        model.memory_text = json.dumps({"facts": [{"key": key, "value": value, "kind": "profile"}]})
        fake.push_text(OWNER, OWNER, text)
        await board.wait_db('SELECT COUNT(*) FROM memory_facts WHERE "user" = ?', n, (USER,))
    await fake.wait_until(lambda: len(fake.sent_to(OWNER)) >= len(SAID), "the four answers", 120)
    before = await _ask(board, model, "Q900")
    assert "- profile:" not in before and '- location: "Pune"' in before  # the facts are there, no profile yet

    ids = {r["key"]: int(r["id"]) for r in board.query('SELECT id, key FROM memory_facts WHERE "user" = ?', (USER,))}
    model.memory_text = json.dumps({"facts": []})
    model.script_text(json.dumps({
        "merge": [{"ids": [ids["location"], ids["city"]], "key": "city", "value": "Pune, Maharashtra"}],
        "expire": [{"id": ids["employer"], "reason": "contradicted", "by": ids["company"]}], "profile": PROFILE}))
    board.at(DUE)  # the scheduled pass
    await board.wait_db("SELECT COUNT(*) FROM memory_changes", 1, timeout=120)
    await board.wait_db("SELECT status FROM scheduled_work WHERE kind = 'consolidation'", "done")

    after = await _ask(board, model, "Q901")
    assert f'- profile: "{PROFILE}" (the board\'s summary of what they told you)' in after
    assert "- location:" not in after and '- city: "Pune, Maharashtra"' in after  # the tidied facts with it
    system = "\n".join(str(m.get("content")) for m in model.requests[-1].body["messages"] if m["role"] == "system")
    assert PROFILE not in system  # in the per-turn block, never the cached system prompt
    forum = await _ask(board, model, "Q902", forum=True)
    assert PROFILE not in forum and "- profile:" not in forum  # a group turn: no direct-chat memory

    [change] = board.query("SELECT id FROM memory_changes")
    code, out = await sabha_cli(board, "memory", "undo", str(change["id"]))
    assert code == 0, out
    assert re.search(rf"undid memory change {change['id']}\b", out), out
    undone = await _ask(board, model, "Q903")
    assert "- profile:" not in undone and PROFILE not in undone
    assert '- location: "Pune"' in undone and '- employer: "Acme Labs"' in undone  # the old facts are back
