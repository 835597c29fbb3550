"""Recall through the real path: ``sabha run`` with Telegram on its fake and a scripted OpenAI-compatible model
that calls the ``recall`` tool. The owner asks "what did we decide about the Pune office and who disagreed?" and
the advisor answers citing the meeting; a member who was not in the owner's conversation asks the same and the
tool hands their turn the board's record and nothing of the owner's private chat."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from board.app import BOARD_MIGRATIONS
from board.room.store import MeetingStore
from board.storage import open_database, parse_state_url
from bot.app import all_migrations
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FRIEND, OWNER, eventually

QUESTION = "What did we decide about the Pune office and who disagreed?"
ANSWER = "We decided to open the Pune office in Q3 [decision m-pune]; critic disagreed [meeting m-pune, round 2]."
PRIVATE = "Privately: my brother-in-law owns the Pune office building."


async def _seed_meeting(root: Path) -> None:
    """The Pune meeting, held before this run: finance for, critic against, decided."""
    url = parse_state_url("", data_dir=root / "sessions", env={})
    async with await open_database(url, [*BOARD_MIGRATIONS, *all_migrations()]) as db:
        store = MeetingStore(db)
        await store.create("m-pune", "Should we open an office in Pune?", "default", "general")
        await store.statement("m-pune", 1, "finance", "The Pune office rent is affordable; I support it.",
                              model="m", cost_usd=0.0)
        await store.statement("m-pune", 2, "critic", "I disagree: a Pune office splits the team in two.",
                              model="m", cost_usd=0.0)
        await store.finish("m-pune", stop_reason="completed", cost_usd=0.0,
                           decision={"recommendation": "Open the Pune office in Q3", "rationale": "rent"},
                           minutes="Decided to open the Pune office. critic disagreed.")


async def _indexed(root: Path, words: str) -> bool:
    """A durable mark: the daemon's background indexer has written a passage holding ``words``."""
    url = parse_state_url("", data_dir=root / "sessions", env={})
    async with await open_database(url, [*BOARD_MIGRATIONS, *all_migrations()]) as db:
        row = await db.fetchone("SELECT count(*) AS n FROM recall_passages WHERE text LIKE ?", (f"%{words}%",))
    return row is not None and int(row["n"]) > 0


def _recall_results(model: FakeOpenAI) -> list[str]:
    """The content of every ``recall`` tool result the model was sent, in order."""
    found: list[str] = []
    for request in model.requests:
        body: dict[str, Any] = request.json
        messages = body.get("messages", [])
        if messages and messages[-1].get("role") == "tool":
            found.append(str(messages[-1].get("content")))
    return found


async def test_an_advisor_recalls_the_pune_decision_citing_it_and_a_member_sees_only_theirs(
        tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI) -> None:
    config = write_config(tmp_path, fake, fake_openai, stream=False)  # type: ignore[arg-type]
    text = config.read_text(encoding="utf-8").replace("llm:\n", "llm:\n  cheap_model: offline\n", 1)
    config.write_text(text, encoding="utf-8")  # memory's extraction takes no scripted answer
    await _seed_meeting(tmp_path)
    sabha = SabhaProcess(config)
    try:
        await sabha.start()
        fake_openai.script_text("Noted, and kept between us.")
        fake.push_text(OWNER, OWNER, PRIVATE)
        await eventually(lambda: len(fake.sent_to(OWNER)) == 1, "the answer to the private remark", timeout=120)
        await eventually(lambda: _indexed(tmp_path, "brother-in-law"), "the private remark indexed", timeout=120)

        fake_openai.script_tool_call("recall", {"query": "Pune office disagreed"})
        fake_openai.script_text(ANSWER)
        fake.push_text(OWNER, OWNER, QUESTION)
        await eventually(lambda: len(fake.sent_to(OWNER)) == 2, "the owner's answer", timeout=120)
        assert "[meeting m-pune, round 2]" in fake.sent_to(OWNER)[-1].text

        fake_openai.script_tool_call("recall", {"query": "Pune office disagreed"})
        fake_openai.script_text(ANSWER)
        fake.push_text(FRIEND, FRIEND, QUESTION)
        await eventually(lambda: len(fake.sent_to(FRIEND)) == 1, "the member's answer", timeout=120)
    finally:
        await sabha.close()
    owner_result, member_result = _recall_results(fake_openai)
    for result in (owner_result, member_result):  # the meeting's statements and the decision, each cited
        passages = json.loads(result)["result"]["passages"]
        cites = [p["cite"] for p in passages]
        assert "[meeting m-pune, round 2]" in cites and "[decision m-pune]" in cites, cites
        assert any(p["said_by"] == "critic" and "disagree" in p["text"] for p in passages)
    assert "brother-in-law" in owner_result  # the owner's own conversation
    assert "brother-in-law" not in member_result  # never another person's
