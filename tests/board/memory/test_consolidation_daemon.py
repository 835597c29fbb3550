"""Memory that tidies itself in a real ``sabha run`` (issue 43): facts a person states in a Telegram DM (the cheap
model on a fake OpenAI-compatible server extracts them: its ``memory_text``) schedule their consolidation; at its
hour (the daemon's clock is a file the test writes) the daemon claims the row and asks the cheap model;
``kill -9`` while the model thinks leaves the old facts, the restarted daemon does the run again and applies it
once, and a further restart does nothing more."""

from __future__ import annotations

import json
import signal
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.support.fakes.local_server import DelayReply
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.standing import StandingBoard
from tests.support.telegram import OWNER

USER = f"telegram:{OWNER}"
DUE = datetime(2026, 11, 26, 3, 0, tzinfo=UTC)  # the next memory.consolidation.hour after tests.support.schedule.START
SAID = (("I'm based in Pune.", "location", "Pune"), ("My city is Pune, Maharashtra.", "city", "Pune, Maharashtra"),
        ("I work at Acme Labs.", "employer", "Acme Labs"), ("My company is Acme Corp.", "company", "Acme Corp"))


def _is_consolidation(body: dict[str, object]) -> bool:
    return "long-term memory of one person tidy" in json.dumps(body.get("messages"))


@pytest.fixture
async def cheap() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:  # extractions are answered by its memory_text, apart from the script
        yield server


@pytest.fixture
async def board(tmp_path: Path, fake: FakeTelegramAPI, cheap: FakeOpenAI) -> AsyncIterator[StandingBoard]:
    extra = ["llm:", "  cheap_model: openai:cheap", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {cheap.base_url}", "      stream: false",
             "memory:", "  consolidation:", "    hour: 3"]
    running = StandingBoard(tmp_path, fake, extra=extra)
    try:
        yield running
    finally:
        await running.sabha.close()


def consolidation_asks(cheap: FakeOpenAI) -> int:
    return sum(_is_consolidation(r.body) for r in cheap.requests)


async def test_a_scheduled_run_killed_while_the_model_thinks_is_done_once_after_the_restart(
        board: StandingBoard, fake: FakeTelegramAPI, cheap: FakeOpenAI) -> None:
    await board.start()
    for n, (text, key, value) in enumerate(SAID, start=1):
        cheap.memory_text = json.dumps({"facts": [{"key": key, "value": value, "kind": "profile"}]})
        fake.push_text(OWNER, OWNER, text)
        await board.wait_db('SELECT COUNT(*) FROM memory_facts WHERE "user" = ?', n, (USER,))
    due = board.query("SELECT key, due_at, status FROM scheduled_work WHERE kind = 'consolidation'")
    assert [(r["key"], r["due_at"], r["status"]) for r in due] == [
        (f"consolidation:{USER}:2026-11-26", "2026-11-26T03:00:00.000000Z", "pending")]
    ids = {r["key"]: int(r["id"]) for r in board.query('SELECT id, key FROM memory_facts WHERE "user" = ?', (USER,))}
    plan = json.dumps({"merge": [{"ids": [ids["location"], ids["city"]], "key": "city", "value": "Pune, Maharashtra"}],
                       "expire": [{"id": ids["employer"], "reason": "contradicted", "by": ids["company"]}],
                       "profile": "Based in Pune, Maharashtra; works at Acme Corp."})
    old = sorted((r["key"], r["value"]) for r in board.query('SELECT * FROM memory_facts WHERE "user" = ?', (USER,)))

    cheap.script(DelayReply(600, cheap.text_reply(plan)))  # the model thinks until the daemon is killed
    asked = len(cheap.requests)
    board.at(DUE)
    await cheap.wait_for_requests(asked + 1, timeout=120)
    assert _is_consolidation(cheap.requests[-1].body)
    await board.sabha.signal(signal.SIGKILL)
    assert sorted((r["key"], r["value"]) for r in board.query('SELECT * FROM memory_facts WHERE "user" = ?',
                                                              (USER,))) == old
    assert board.query("SELECT COUNT(*) FROM memory_changes")[0][0] == 0

    cheap.script_text(plan)
    await board.sabha.start()  # the claim left by the killed daemon is done again
    await board.wait_db("SELECT COUNT(*) FROM memory_changes", 1, timeout=120)
    await board.wait_db("SELECT status FROM scheduled_work WHERE kind = 'consolidation'", "done")
    assert sorted((r["key"], r["value"]) for r in board.query('SELECT * FROM memory_facts WHERE "user" = ?',
                                                              (USER,))) == [
        ("city", "Pune, Maharashtra"), ("company", "Acme Corp")]
    assert consolidation_asks(cheap) == 2  # once before the kill, once after
    assert board.query("SELECT COUNT(*) FROM llm_calls WHERE purpose = 'consolidation'")[0][0] == 1

    await board.sabha.signal(signal.SIGTERM)
    await board.sabha.start()  # nothing is left to do: no third model call, still one change
    await board.sabha.wait_for_log("schedule: runner started")
    assert consolidation_asks(cheap) == 2
    assert board.query("SELECT COUNT(*) FROM memory_changes")[0][0] == 1
