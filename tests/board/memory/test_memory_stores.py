"""The memory stores on their own, on SQLite and PostgreSQL: the session index (merging one person's two
keys), the facts (remember with its drop, learn, edit and forget counts, moving a user's facts to another
id), each unit of work all or nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from board.conversation.sessions import Sessions
from board.conversation.transcript_rows import transcripts_for
from board.memory.facts import EVERY_ROLE, FactSource, FactStore, MemorySettings, Provenance
from board.storage import Database

pytestmark = pytest.mark.backends


@pytest.fixture
def sessions(database: Database, data_dir: Path) -> Sessions:
    return Sessions(database, transcripts_for(database, data_dir))


async def test_merging_two_keys_keeps_one_live_session_and_every_transcript(sessions: Sessions) -> None:
    old = await sessions.open("board:finance:tg-7")
    old.append({"type": "message", "role": "user", "text": "said on telegram"})
    await old.sync()
    live = await sessions.open("board:finance:wa-7")
    moved = await sessions.merge("board:finance:tg-7", "board:finance:wa-7")
    assert [m.session_id for m in moved] == [old.session_id]
    assert await sessions.current("board:finance:tg-7") is None
    current = await sessions.current("board:finance:wa-7")
    assert current is not None and current.session_id == live.session_id  # the other key's continues
    history = await sessions.history_of("board:finance:wa-7")
    assert {h.session_id for h in history} == {old.session_id, live.session_id}
    assert [h.session_id for h in history if h.archived_at] == [old.session_id]
    assert [e["text"] for e in await sessions.transcripts.entries(old.session_id)] == ["said on telegram"]
    assert await sessions.merge("board:finance:tg-7", "board:finance:wa-7") == []  # nothing left to move


async def test_merging_into_a_key_without_a_session_moves_the_live_one(sessions: Sessions) -> None:
    first = await sessions.open("board:cto:tg-9")
    await sessions.merge("board:cto:tg-9", "board:cto:wa-9")
    current = await sessions.current("board:cto:wa-9")
    assert current is not None and current.session_id == first.session_id and current.archived_at is None
    assert sorted(await sessions.keys()) == ["board:cto:wa-9"]


async def test_remember_updates_in_place_and_drops_the_oldest_past_the_cap(database: Database) -> None:
    store = FactStore(database, MemorySettings(max_facts_per_role=2))
    await store.remember("tg:1", "finance", "Currency", "INR")
    await store.remember("tg:1", "finance", "city", "Pune")
    fact, dropped = await store.remember("tg:1", "finance", "currency", "USD")  # the same key: an update
    assert dropped is None and fact.value == "USD"
    _, dropped = await store.remember("tg:1", "finance", "team", "6 people")
    assert dropped is not None and dropped.key == "city"  # the least recently updated
    assert [(f.key, f.value) for f in await store.facts("tg:1")] == [("currency", "USD"), ("team", "6 people")]


async def test_learn_edit_forget_and_their_counts(database: Database) -> None:
    store = FactStore(database)
    heard = Provenance(source=FactSource.HEARD, entry="e1", message="telegram:5", session="main")
    learned = await store.learn("tg:1", "name", "Asha", heard)
    assert learned.changed and learned.fact.role == EVERY_ROLE
    assert not (await store.learn("tg:1", "name", "Asha", heard)).changed
    assert (await store.learn("tg:1", "name", "Asha Rao", heard)).replaced is not None
    last = await store.last_heard("tg:1")
    assert last is not None and last.value == "Asha Rao" and last.provenance.message == "telegram:5"
    assert await store.edit("tg:1", "name", "Asha R.") == 1
    assert await store.edit("tg:1", "nickname", "Ash") == 0
    await store.remember("tg:1", "finance", "currency", "INR")
    assert [f.key for f in await store.recall("tg:1", "finance")] == ["currency", "name"]
    assert await store.forget("tg:1", "Name") == 1
    assert await store.forget("tg:1", "name") == 0
    assert await store.forget("tg:1") == 1
    assert await store.facts("tg:1") == []


async def test_moving_a_users_facts_keeps_the_newer_of_each_pair(database: Database) -> None:
    store = FactStore(database)
    await store.remember("tg:1", "finance", "currency", "INR")
    await store.remember("wa:1", "finance", "currency", "USD")  # newer, under the id they keep
    await store.remember("tg:1", "finance", "city", "Pune")  # wa:1 has no city: it moves
    await store.remember("wa:1", "cto", "stack", "python")
    assert await store.move_user("tg:1", "wa:1") == 1  # only city was left to move
    assert await store.facts("tg:1") == []
    assert {(f.role, f.key, f.value) for f in await store.facts("wa:1")} == {
        ("finance", "currency", "USD"), ("finance", "city", "Pune"), ("cto", "stack", "python")}
    await store.remember("tg:2", "cto", "stack", "rust")  # newer than wa:1's
    assert await store.move_user("tg:2", "wa:1") == 1
    assert {f.value for f in await store.facts("wa:1", "cto")} == {"rust"}
    assert await store.move_user("wa:1", "wa:1") == 0


async def test_two_processes_starting_a_key_at_once_share_one_session(database: Database, data_dir: Path) -> None:
    # Two replicas (or `sabha ask` beside `sabha run`) open the same new key at the same moment: one session
    # is live for it, and both write to it.
    a = Sessions(database, transcripts_for(database, data_dir))
    b = Sessions(database, transcripts_for(database, data_dir))
    first, second = await asyncio.gather(a.open("board:cto"), b.open("board:cto"))
    assert first.session_id == second.session_id
    assert [r.session_id for r in await a.history_of("board:cto")] == [first.session_id]
