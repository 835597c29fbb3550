"""The small stores of the channels, the web pages, media and guardrails, through their own methods on both
backends: what a retried or repeated write does (ignored, replaced, moved forward only), and that rows read
back as they were written."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import cast

import pytest

from board.agent.guardrails import GuardAction, Guardrails, GuardRule, GuardTier, Violation
from board.clock import SystemClock
from board.media.attachment import Attachment, MediaKind
from board.media.store import MediaStore
from board.storage import Database
from bot.channels.telegram.buttons import ButtonPosts
from bot.channels.telegram.outbound import Outbound
from bot.channels.telegram.stream import DraftKey, DraftStore, StoredDraft
from bot.channels.whatsapp.store import DeliveryStatus, DeliveryStore
from bot.web.auth import WebSession, WebSessions

pytestmark = pytest.mark.backends


async def test_a_draft_is_recorded_once_then_placed_then_forgotten(database: Database) -> None:
    store, key = DraftStore(database), DraftKey("-100123", "77")
    await store.sending(key)
    await store.sending(key)  # a retried turn: the record is there already
    assert await store.get(key) == StoredDraft(None)
    await store.placed(key, 4242)
    assert await store.get(key) == StoredDraft(4242)
    await store.prune()
    assert await store.get(key) == StoredDraft(4242)  # young: kept
    await store.forget(key)
    assert await store.get(key) is None


async def test_a_button_post_recorded_twice_is_one_row(database: Database) -> None:
    posts = ButtonPosts(database, cast(Outbound, None))
    await posts.record("m-1", -100123, 9)
    await posts.record("m-1", -100123, 9)
    rows = await database.fetchall("SELECT subject, chat_id, message_id FROM telegram_button_posts")
    assert [(r["subject"], int(r["chat_id"]), int(r["message_id"])) for r in rows] == [("m-1", -100123, 9)]


async def test_delivery_statuses_move_forward_only(database: Database) -> None:
    store = DeliveryStore(database)
    await store.accepted("wamid.1", "15550001", "wamid.in")
    await store.accepted("wamid.1", "15550001", "wamid.in")  # told twice: one row
    await store.status("wamid.1", DeliveryStatus.READ, "15550001")
    await store.status("wamid.1", DeliveryStatus.DELIVERED, "15550001")  # late: read stays read
    record = await store.get("wamid.1")
    assert record is not None and record.status == "read" and record.reply_to == "wamid.in"
    await store.status("wamid.2", DeliveryStatus.FAILED, None, 131047, "Re-engagement message")  # unknown wamid
    await store.status("wamid.2", DeliveryStatus.UNDELIVERABLE, None)  # same rank: moves, keeps the error
    failed = await store.get("wamid.2")
    assert failed is not None and (failed.status, failed.error_code, failed.user) == ("undeliverable", 131047, "?")
    await store.refused("15550002", None, DeliveryStatus.FAILED, 131026, "Message undeliverable")
    assert await store.counts() == {"read": 1, "undeliverable": 1, "failed": 1}
    assert [r.wamid for r in await store.undeliverable()] == ["wamid.2"]


async def test_a_web_session_is_recorded_once_and_revoked_for_good(database: Database) -> None:
    clock = SystemClock()
    sessions = WebSessions(database, clock)
    one = WebSession("sid-1", clock.now() + timedelta(hours=1), "csrf")
    await sessions.add(one, by="127.0.0.1")
    await sessions.add(one, by="127.0.0.1")
    assert await sessions.live(one)
    await sessions.revoke(one)
    assert not await sessions.live(one)
    two = WebSession("sid-2", clock.now() + timedelta(hours=1), "csrf")
    await sessions.add(two, by="127.0.0.1")
    assert await sessions.revoke_all() == 1 and not await sessions.live(two)


async def test_a_retried_messages_attachments_replace_their_rows(database: Database) -> None:
    store = MediaStore(database)
    doc = Attachment(kind=MediaKind.DOCUMENT, mime="text/plain", size=12, name="q3.txt", blob="b" * 64,
                     derived="first read")
    for derived in ("first read", "second read"):
        await store.record(channel="telegram", chat_id="42", thread_id=7, message_id="9", sender="42",
                           attachments=(replace(doc, derived=derived),))
    [stored] = await store.recent(channel="telegram", chat_id="42")
    assert (stored.derived, stored.thread_id, stored.size, stored.name) == ("second read", 7, 12, "q3.txt")
    since = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    assert [d.blob for d in await store.documents_since(since)] == ["b" * 64]
    await store.remember("b" * 64, "document", "one")
    await store.remember("b" * 64, "document", "two")
    assert await store.derived("b" * 64, "document") == "two"
    assert await store.prune(30) == 0


async def test_guardrail_violations_of_one_answer_are_recorded_together(database: Database) -> None:
    guard = Guardrails(db=database)
    await guard.record([Violation(GuardTier.AGENT, GuardRule.EMPTY, GuardAction.REPLACE),
                        Violation(GuardTier.PERSONA, GuardRule.MODEL_NAME, GuardAction.SCRUB, {"names": ["x"]})],
                       role="finance", model="openai:gpt-4o-mini", session_key="board:finance:42")
    found = await guard.violations()
    assert [(v["rule"], v["detail"]) for v in found] == [("model_name", {"names": ["x"]}), ("empty", {})]
    assert [v["role"] for v in await guard.violations(role="finance", limit=1)] == ["finance"]
