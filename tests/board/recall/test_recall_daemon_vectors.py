"""Recall by meaning through the real path: ``sabha run`` with Telegram on its fake, a scripted OpenAI-compatible
chat model that calls the ``recall`` tool, and ``memory.embedding_model`` served by the fake embeddings endpoint
(the official ``openai`` SDK's embeddings client on 127.0.0.1). The daemon embeds the Pune meeting in the
background; the owner's question shares no word with it ("the workplace question") and still finds it, cited;
a member asking the same gets the board's record and nothing of the owner's private remark, which is as near
in meaning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from board.app import BOARD_MIGRATIONS
from board.room.store import MeetingStore
from board.storage import open_database, parse_state_url
from bot.app import all_migrations
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.embeddings_api import FakeEmbeddings
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FRIEND, OWNER, eventually
from tests.support.vectors import EMBEDDING_MODEL

QUERY = "the workplace question"  # no passage holds "workplace": only its meaning finds the office meeting
PRIVATE = "Privately: my brother-in-law owns that office building."


async def _db_rows(root: Path, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    url = parse_state_url("", data_dir=root / "sessions", env={})
    async with await open_database(url, [*BOARD_MIGRATIONS, *all_migrations()]) as db:
        return [dict(r) for r in await db.fetchall(sql, params)]


async def _seed_meeting(root: Path) -> None:
    url = parse_state_url("", data_dir=root / "sessions", env={})
    async with await open_database(url, [*BOARD_MIGRATIONS, *all_migrations()]) as db:
        store = MeetingStore(db)
        await store.create("m-pune", "Should we open an office in Pune?", "default", "general")
        await store.statement("m-pune", 2, "critic", "I disagree: an office in Pune splits the team in two.",
                              model="m", cost_usd=0.0)
        await store.finish("m-pune", stop_reason="completed", cost_usd=0.0,
                           decision={"recommendation": "Open the Pune office in Q3", "rationale": "rent"},
                           minutes="Decided to open the Pune office. critic disagreed.")


async def _embedded(root: Path, words: str) -> bool:
    """A durable mark: the daemon's background pass stored a vector for a passage holding ``words``."""
    rows = await _db_rows(root, "SELECT count(*) AS n FROM recall_vectors v JOIN recall_passages p ON "
                                "p.id = v.passage_id WHERE p.text LIKE ? AND v.model = ?",
                          (f"%{words}%", EMBEDDING_MODEL))
    return bool(rows) and int(rows[0]["n"]) > 0


def _recall_results(model: FakeOpenAI) -> list[str]:
    found: list[str] = []
    for request in model.requests:
        messages = request.json.get("messages", [])
        if messages and messages[-1].get("role") == "tool":
            found.append(str(messages[-1].get("content")))
    return found


async def test_the_daemon_embeds_in_the_background_and_recalls_by_meaning_within_what_each_may_see(
        tmp_path: Path, fake: FakeTelegramAPI, fake_openai: FakeOpenAI) -> None:
    async with FakeEmbeddings() as embeddings:
        config = write_config(tmp_path, fake, fake_openai, stream=False, extra=[  # type: ignore[arg-type]
            "memory:", f"  embedding_model: {EMBEDDING_MODEL}", f"  embedding_base_url: {embeddings.base_url}",
            "  embedding_api_key: ${SABHA_TEST_EMBEDDING_KEY}"])
        text = config.read_text(encoding="utf-8").replace("llm:\n", "llm:\n  cheap_model: offline\n", 1)
        config.write_text(text, encoding="utf-8")  # memory's extraction takes no scripted answer
        await _seed_meeting(tmp_path)
        sabha = SabhaProcess(config)
        sabha.env["SABHA_TEST_EMBEDDING_KEY"] = embeddings.key
        try:
            await sabha.start()
            await eventually(lambda: _embedded(tmp_path, "splits the team"), "the meeting embedded", timeout=120)
            fake_openai.script_text("Noted, and kept between us.")
            fake.push_text(OWNER, OWNER, PRIVATE)
            await eventually(lambda: len(fake.sent_to(OWNER)) == 1, "the answer to the private remark", timeout=120)
            await eventually(lambda: _embedded(tmp_path, "brother-in-law"), "the private remark embedded",
                             timeout=120)
            for who, answers in ((OWNER, 2), (FRIEND, 1)):
                fake_openai.script_tool_call("recall", {"query": QUERY})
                fake_openai.script_text("We decided to open the Pune office [meeting m-pune, round 2].")
                fake.push_text(who, who, "Remind me of the workplace question?")
                await eventually(lambda w=who, n=answers: len(fake.sent_to(w)) == n, "the answer", timeout=120)
        finally:
            await sabha.close()
        assert embeddings.key not in "\n".join(sabha.lines)  # the key never in the log
    owner_result, member_result = _recall_results(fake_openai)
    for result in (owner_result, member_result):
        cites = [p["cite"] for p in json.loads(result)["result"]["passages"]]
        assert "[meeting m-pune, round 2]" in cites, cites
    assert "brother-in-law" in owner_result  # the owner's own words, found by meaning
    assert "brother-in-law" not in member_result  # never another person's, however near in meaning
    purposes = await _db_rows(tmp_path, "SELECT purpose, count(*) AS n FROM llm_calls WHERE model = ? "
                                        "GROUP BY purpose ORDER BY purpose", (EMBEDDING_MODEL,))
    assert [r["purpose"] for r in purposes] == ["embedding", "embedding-query"]
    assert [r["n"] for r in purposes][1] == 2  # one question embedded per recall
