"""A state db migrated before board/'s packages were regrouped (issue 37) still opens: the db records
applied migrations by name only (``schema_migrations``), so every migration keeps its number, name and
script wherever its owner now lives (memory's split into board/conversation, board/spending and
board/memory; ratification, reminders, predictions and recall into board/decisions)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from board.app import BOARD_MIGRATIONS
from board.storage import Dialect, open_database, parse_state_url
from board.storage.migrations import for_dialect, pending

#: Every board migration before the move: name -> the first 16 hex digits of its SQLite script's sha256.
BEFORE_THE_MOVE = {
    "0001_sessions": "6bf2cc9f9c576a56",
    "0002_llm_calls": "03b4f417c30ba484",
    "0003_tool_calls": "f6a5b2cd6bfdef4a",
    "0004_llm_calls_sender": "e4bb707dc4580fbd",
    "0005_llm_calls_cache_saved": "6fcc9fdf45720440",
    "0006_llm_calls_scope": "259d4a6e1c6ecbf1",
    "0007_llm_calls_thinking": "5fab2feb26584f74",
    "0100_meetings": "2f62997f77035778",
    "0101_consultations": "24fd87068c24ba6e",
    "0102_stances_and_actions": "6358c8b30e93e90e",
    "0500_memory_facts": "3e40e3df26c843ff",
    "0501_guardrail_violations": "118e7cd0540c387e",
    "0502_web_searches": "6a9a6f5614ba3970",
    "0550_knowledge_index": "e33e3c5cca317ace",
    "0600_media": "493b3d36ec7ab13a",
    "0601_attachment_stranger": "14376dbf2dd841e1",
    "0700_people": "b695f2c92c8e3b56",
    "0710_memory_fact_sources": "915564dfad9806d7",
    "0800_scheduled_work": "237c1b9d965682f0",
    "0801_action_items_due": "0874f50537224bc2",
    "0810_decision_ratification": "04664f3ac99b47ed",
    "0820_predictions": "905382f0b9934cd0",
    "0821_decision_search": "1415640ece78c68b",
    "0960_transcript_lines": "b2b77f143fb811da",
    "0970_memory_fact_scope": "5e4381f01d11120b",
    "0975_meeting_is_group": "86055025d6532e5f",
    "0984_attachment_stored_bytes": "bdd023bf19dba5a1",
}


def test_every_migration_keeps_its_name_and_script() -> None:
    now = {m.name: hashlib.sha256(m.sql.encode()).hexdigest()[:16] for m in BOARD_MIGRATIONS}
    assert {name: now.get(name) for name in BEFORE_THE_MOVE} == BEFORE_THE_MOVE
    on_postgres = {m.name for m in for_dialect(BOARD_MIGRATIONS, Dialect.POSTGRES)}
    assert set(BEFORE_THE_MOVE) <= on_postgres


def test_a_db_migrated_before_the_move_has_nothing_unknown_and_nothing_to_redo() -> None:
    left = pending(BOARD_MIGRATIONS, set(BEFORE_THE_MOVE), where="a state db from before the move")
    assert not {m.name for m in left} & set(BEFORE_THE_MOVE)


async def test_a_db_migrated_before_the_move_opens(tmp_path: Path) -> None:
    url = parse_state_url(f"sqlite:///{tmp_path / 'sabha.db'}", data_dir=tmp_path, env={})
    before = [m for m in BOARD_MIGRATIONS if m.name in BEFORE_THE_MOVE]  # a db as it was: later ones not applied
    async with await open_database(url, before):
        pass
    async with await open_database(url, BOARD_MIGRATIONS) as db:  # only what was there before: opens, migrated
        applied = {str(r["name"]) for r in await db.fetchall("SELECT name FROM schema_migrations")}
    assert applied == {m.name for m in BOARD_MIGRATIONS}
