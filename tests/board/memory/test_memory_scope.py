"""Memory facts stay where they were learned (issue item 8): a fact the owner stated in a direct chat never
reaches a group turn (a Telegram forum topic, whose answers the members read), and a fact an advisor saved in
a group is seen only in that group. Old rows, from before facts carried a scope, count as direct-chat
(private) facts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from board.envelope import Envelope
from board.memory.migrations import MIGRATIONS as MEMORY_MIGRATIONS
from board.storage import Dialect
from board.storage.open import open_database
from board.storage.url import StateURL, parse_state_url
from tests.board.memory.test_memory_extract import open_on
from tests.support.daemon import SabhaProcess, answered, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.scripted_model import ScriptedModel, call, say
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.knowledge import board_settings, context_of, rows
from tests.support.llm import envelope
from tests.support.telegram import FORUM, OWNER, eventually, last_user_text

pytestmark = pytest.mark.backends

#: The number of the migration that gives facts their scope.
SCOPE_MIGRATION = 970


def body_of(model: EchoModel, marker: str) -> str:
    """The request the model got for the question carrying ``marker`` (the whole prompt, as JSON)."""
    found = [json.dumps(b) for b in model.bodies if marker in json.dumps(b.get("messages", [])[-1:])]
    assert len(found) == 1, f"{len(found)} requests carry {marker}"
    return found[0]


async def test_a_fact_from_the_owners_direct_chat_never_reaches_a_forum_turn(tmp_path: Path,
        fake: FakeTelegramAPI, backend: Dialect) -> None:
    if backend is Dialect.POSTGRES:
        pytest.skip("the daemon's path is the same on both backends; the store's scope is tested on both below")
    async with EchoModel(latency=0.01) as model:
        config = write_config(tmp_path, fake, model)
        text = config.read_text(encoding="utf-8").replace("llm:\n", "llm:\n  cheap_model: offline\n", 1)
        config.write_text(text, encoding="utf-8")  # facts are extracted by the offline model's rules
        sabha = SabhaProcess(config)
        try:
            await sabha.start()
            fake.push_text(OWNER, OWNER, "Hi, I'm based in Pune. Please call me Asha.")
            await eventually(lambda: len(fake.sent_to(OWNER)) == 1, "the direct answer", timeout=60)
            await sabha.wait_for_log(r"memory: heard 'name'", timeout=60)
            topics = {t["name"]: t["message_thread_id"] for t in fake.created_topics}
            finance = next(thread for name, thread in topics.items() if "finance" in name.lower())
            fake.push_text(FORUM, OWNER, "Q801 where should we hold the offsite?")  # the General topic
            fake.push_text(FORUM, OWNER, "Q802 what budget for it?", thread_id=finance)
            await eventually(lambda: answered(fake)["Q801"] and answered(fake)["Q802"], "both forum answers",
                             timeout=60)
            fake.push_text(OWNER, OWNER, "Q803 and what about hiring?")  # marker: the direct chat still knows
            await eventually(lambda: answered(fake)["Q803"], "the marker's answer", timeout=60)
        finally:
            await sabha.close()
    for marker in ("Q801", "Q802"):
        prompt = body_of(model, marker)
        assert "Pune" not in prompt and "Asha" not in prompt, f"{marker}'s forum turn saw the direct chat's facts"
    direct = body_of(model, "Q803")
    assert '- location: \\"Pune\\"' in direct and '- name: \\"Asha\\"' in direct


def in_group(text: str, chat: str = "-100123", thread: int | None = None) -> Envelope:
    return replace(envelope(text), is_group=True, chat_id=chat, thread_id=thread, channel="telegram",
                   sender="42")


def in_private(text: str) -> Envelope:
    return replace(envelope(text), channel="telegram", sender="42", chat_id="42")


async def test_a_fact_saved_in_a_group_is_seen_only_in_that_group(workspace: Path, data_dir: Path,
        state_url: StateURL | None) -> None:
    model = ScriptedModel()
    model.script(call("remember", {"key": "offsite city", "value": "Goa"}), say("Noted for the group."),
                 say("a"), say("b"), say("c"), say("d"))
    model.script(call("remember", {"key": "home city", "value": "Pune"}), say("Noted."), role="finance")
    async with await open_on(board_settings(workspace, data_dir, model, state=state_url), model) as b:
        await b.handle(in_group("Remember the offsite is in Goa."))
        await b.handle(in_private("@finance I live in Pune, remember it."))
        await b.handle(in_group("And now?"))
        await b.handle(in_group("And here?", chat="-100999"))
        await b.handle(in_private("What do you know?"))
        scopes = {r["key"]: r["scope"] for r in await rows(b, "SELECT key, scope FROM memory_facts")}
    assert scopes == {"offsite city": "group:telegram:-100123", "home city": "direct"}
    def context_for(text: str) -> str:
        return context_of(next(r for r in model.requests if text in last_user_text(r.request)))

    assert '- offsite city: "Goa"' in context_for("And now?")  # the same group
    assert "Goa" not in context_for("And here?")  # another group
    assert "Goa" not in context_for("What do you know?")  # the direct chat
    assert "Pune" not in context_for("And now?") and "Pune" not in context_for("And here?")
    assert '- home city: "Pune"' not in context_for("What do you know?")  # told to finance only


@pytest.fixture
def empty_state(tmp_path: Path, backend: Dialect, request: pytest.FixtureRequest) -> StateURL:
    """An empty state db on the test's backend (a fresh PostgreSQL database, or a SQLite file)."""
    if backend is Dialect.POSTGRES:
        return parse_state_url(request.getfixturevalue("pg_url"), data_dir=tmp_path, env={})
    return parse_state_url(f"sqlite:///{tmp_path / 'state.db'}", data_dir=tmp_path, env={})


async def test_facts_stored_before_scopes_are_private(empty_state: StateURL) -> None:
    """The migration on a state db holding a fact from before it: the fact becomes a direct-chat fact."""
    url = empty_state
    before = [m for m in MEMORY_MIGRATIONS if m.number < SCOPE_MIGRATION]
    db = await open_database(url, before)
    try:
        await db.execute('INSERT INTO memory_facts("user", role, key, value, created_at, updated_at) '
                         "VALUES ('telegram:42', '*', 'location', 'Pune', 'x', 'x')")
    finally:
        await db.close()
    db = await open_database(url, MEMORY_MIGRATIONS)
    try:
        kept = [dict(r) for r in await db.fetchall("SELECT key, value, scope FROM memory_facts")]
        applied = [r["name"] for r in await db.fetchall("SELECT name FROM schema_migrations")]
    finally:
        await db.close()
    assert kept == [{"key": "location", "value": "Pune", "scope": "direct"}]
    assert any(m.number == SCOPE_MIGRATION for m in MEMORY_MIGRATIONS if m.name in applied)
