"""Slack's tables (migration 1100 and its PostgreSQL twin) on both backends: a streamed answer's draft recorded
before its post leaves and with its ts after, forgotten once the answer is delivered; a thread's role kept across a
restart (a new store reads it back)."""

from __future__ import annotations

import pytest

from board.app import Board
from bot.channels.slack.store import SlackDraftKey, SlackDraftStore, SlackThreadRoles

pytestmark = pytest.mark.backends


async def test_a_draft_is_recorded_before_and_after_its_post_and_forgotten_after_the_answer(board: Board) -> None:
    store = SlackDraftStore(board.parts.db)
    key = SlackDraftKey("C0BOARD/1700000000.000001", "C0BOARD/1700000000.000001")
    assert await store.get(key) is None
    await store.sending(key)
    stored = await store.get(key)
    assert stored is not None and stored.ts is None, "recorded before the post left: a restart knows it may exist"
    await store.sending(key)  # a second try of the first post keeps the one row
    await store.placed(key, "1700000000.000002")
    stored = await store.get(key)
    assert stored is not None and stored.ts == "1700000000.000002"
    await store.prune()
    assert await store.get(key) is not None, "a fresh draft is not pruned"
    await store.forget(key)
    assert await store.get(key) is None


async def test_a_thread_s_role_outlives_a_restart_and_the_first_one_named_stays(board: Board) -> None:
    roles = SlackThreadRoles(board.parts.db)
    await roles.load()
    await roles.remember("C0BOARD/1700000000.000001", "finance")
    await roles.remember("C0BOARD/1700000000.000001", "critic")
    again = SlackThreadRoles(board.parts.db)
    await again.load()
    assert again.role_of("C0BOARD/1700000000.000001") == "finance"
    assert again.role_of("C0BOARD/1700000000.000009") is None
