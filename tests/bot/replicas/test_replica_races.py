"""Races only replicas have, on one PostgreSQL database seen by two replicas (two pools, two stores).

A role's Telegram topic created by two replicas at once ends as one topic; the same WhatsApp person,
or two statuses of one message, recorded by two replicas at once break no key and lose nothing; a web
login link redeemed twice at once on two replicas lets exactly one in; a link code sent from two
accounts at once links once; two replicas appending to one web chat take distinct seqs; a claim waits for the
conversation's lane lock another replica's claim holds, traced or not.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from telegram import Bot

from board.app import BOARD_MIGRATIONS
from board.clock import SystemClock
from board.envelope import Envelope
from board.people import LinkOutcome, People, PeopleSettings
from board.storage import Database, Dialect, StateURL, open_database
from board.workspace.souls import AgentProfile
from bot.app import all_migrations
from bot.channels.telegram.topics import Topics, TopicStore, topic_name
from bot.channels.web.store import EntryKind, NewEntry, Outbox
from bot.channels.whatsapp.identity import WhatsAppPeople
from bot.channels.whatsapp.store import DeliveryStatus, DeliveryStore
from bot.intake.inbox import LANE_LOCKS, Arrival, Inbox
from bot.web.auth import LinkVerdict, LoginLinks

pytestmark = pytest.mark.parametrize("backend", [Dialect.POSTGRES], ids=["postgres"], indirect=True)

FORUM = -100123


@pytest.fixture
async def replicas(state_url: StateURL | None, data_dir: Path) -> AsyncIterator[tuple[Database, Database]]:
    """Two replicas' connections to the test's one PostgreSQL database."""
    assert state_url is not None
    steps = [*BOARD_MIGRATIONS, *all_migrations()]
    first = await open_database(state_url, steps, pool_size=4)
    second = await open_database(state_url, steps, pool_size=4)
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


class TwoReplicasBot:
    """The Bot API as two replicas see it at once: each creates a topic, and neither stores it before both have
    (the widest window); deleting a topic is recorded."""

    def __init__(self) -> None:
        self.next_thread = 100
        self.created: list[tuple[str, int]] = []
        self.deleted: list[int] = []
        self._both = asyncio.Barrier(2)

    async def get_chat(self, chat_id: int) -> Any:
        return SimpleNamespace(id=chat_id, is_forum=True)

    async def create_forum_topic(self, chat_id: int, name: str) -> Any:
        self.next_thread += 1
        thread = self.next_thread
        self.created.append((name, thread))
        await self._both.wait()
        return SimpleNamespace(message_thread_id=thread, name=name)

    async def delete_forum_topic(self, chat_id: int, message_thread_id: int) -> bool:
        self.deleted.append(message_thread_id)
        return True


def _profile(role: str) -> AgentProfile:
    return cast(AgentProfile, SimpleNamespace(role=role, name=role.title(), emoji="💰"))


async def test_two_replicas_creating_a_roles_topic_at_once_end_with_one(
        replicas: tuple[Database, Database]) -> None:
    first, second = replicas
    bot = TwoReplicasBot()
    a, b = Topics(FORUM, TopicStore(first)), Topics(FORUM, TopicStore(second))
    profiles = [_profile("finance")]
    made_a, made_b = await asyncio.gather(a.ensure(cast(Bot, bot), profiles), b.ensure(cast(Bot, bot), profiles))
    assert len(bot.created) == 2  # both asked Telegram: the race really happened
    assert len(made_a) + len(made_b) == 1  # one replica's topic won
    assert a.thread_for("finance") == b.thread_for("finance")
    rows = await first.fetchall("SELECT role, thread_id, name FROM telegram_topics WHERE chat_id = ?", (str(FORUM),))
    assert [(r["role"], int(r["thread_id"]), r["name"]) for r in rows] == \
        [("finance", a.thread_for("finance"), topic_name(profiles[0]))]
    loser = next(thread for _, thread in bot.created if thread != a.thread_for("finance"))
    assert bot.deleted == [loser]  # the duplicate is gone from the forum too
    again = Topics(FORUM, TopicStore(second))  # a restart reads the one topic
    assert await again.ensure(cast(Bot, bot), profiles) == []
    assert again.thread_for("finance") == a.thread_for("finance")


async def test_two_replicas_recording_the_same_whatsapp_person_make_one_row(
        replicas: tuple[Database, Database]) -> None:
    first, second = replicas
    a, b = WhatsAppPeople(first), WhatsAppPeople(second)
    await a.load()
    await b.load()
    keys = await asyncio.gather(a.person_for("15550001", "US.1349.x"), b.person_for("15550001", "US.1349.x"))
    assert keys[0] == keys[1] == "15550001"
    rows = await first.fetchall("SELECT person, phone, bsuid FROM whatsapp_people")
    assert [(r["person"], r["phone"], r["bsuid"]) for r in rows] == [("15550001", "15550001", "US.1349.x")]
    assert b.address(keys[1]) == "15550001" and a.address(keys[0]) == "15550001"


async def test_two_replicas_recording_statuses_of_one_message_keep_the_furthest(
        replicas: tuple[Database, Database]) -> None:
    first, second = replicas
    a, b = DeliveryStore(first), DeliveryStore(second)
    for n in range(10):
        wamid = f"wamid.{n}"
        await asyncio.gather(a.status(wamid, DeliveryStatus.READ, "15550001"),
                             b.status(wamid, DeliveryStatus.DELIVERED, "15550001"),
                             a.status(wamid, DeliveryStatus.SENT, "15550001"))
        record = await b.get(wamid)
        assert record is not None and record.status == DeliveryStatus.READ.value
    assert await a.counts() == {"read": 10}


async def test_a_login_link_redeemed_at_once_on_two_replicas_lets_exactly_one_in(
        replicas: tuple[Database, Database]) -> None:
    first, second = replicas
    clock = SystemClock()
    for _ in range(5):
        token = await LoginLinks(first, clock).create(600)
        verdicts = await asyncio.gather(LoginLinks(first, clock).redeem(token, by="10.0.0.1"),
                                        LoginLinks(second, clock).redeem(token, by="10.0.0.2"))
        assert sorted(verdicts) == sorted([LinkVerdict.OK, LinkVerdict.USED])


async def test_a_link_code_sent_from_two_accounts_on_two_replicas_links_once(
        replicas: tuple[Database, Database]) -> None:
    first, second = replicas
    now = datetime(2026, 11, 25, 12, tzinfo=UTC).timestamp()
    a, b = (People(db, PeopleSettings(), clock=lambda: now) for db in (first, second))
    code = await a.ask_code("telegram:1", is_owner=False)
    results = await asyncio.gather(a.redeem("whatsapp:2", code, is_owner=False),
                                   b.redeem("web:3", code, is_owner=False))
    assert sorted(r.outcome.value for r in results) == sorted([LinkOutcome.LINKED.value, LinkOutcome.REUSED.value])
    persons = await b.persons()
    assert len(persons) == 1 and len(persons[0].identities) == 2 and "telegram:1" in persons[0].identities


async def test_two_replicas_appending_to_one_web_chat_take_distinct_seqs(
        replicas: tuple[Database, Database]) -> None:
    first, second = replicas
    a, b = Outbox(first), Outbox(second)
    appends = [(a if n % 2 else b).append("finance", NewEntry(f"q:{n}", EntryKind.QUESTION, f"question {n}"))
               for n in range(12)]
    stored = await asyncio.gather(*appends)
    assert all(fresh for _, fresh in stored)
    assert sorted(entry.seq for entry, _ in stored) == list(range(1, 13))
    assert [e.key for e in await a.since("finance", 0)] == [e.key for e, _ in sorted(stored, key=lambda s: s[0].seq)]

#: An active trace context, as a traced receipt span hands a claim.
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.mark.parametrize("traced", [False, True], ids=["untraced", "traced"])
async def test_a_claim_waits_for_the_conversation_s_lane_lock_held_by_another_replica(
        replicas: tuple[Database, Database], traced: bool) -> None:
    """A claim holds its conversations' lane locks until it commits, so another replica storing the next message of
    the same conversation waits for it and the two are numbered in the order they commit (bot.intake.inbox,
    ``LANE_LOCKS``). With tracing on each stored row also carries its trace context; the lock must still be the
    conversation's (found by ack48: the lock was taken on the row's last column, which with tracing on is its
    ``traceparent``, a key no other claim shares, so it excluded nothing)."""
    holder, claimer = replicas
    inbox = Inbox(claimer, "whatsapp", ids_unique=True)
    envelope = Envelope(channel="whatsapp", text="hello", sender="15550001111", chat_id="15550001111",
                        message_id="wamid.traced1")
    arrival = Arrival(envelope, "wa:15550001111", traceparent=TRACEPARENT if traced else None)
    async with holder.transaction() as tx:  # another replica's claim of this conversation, not committed yet
        await tx.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", (LANE_LOCKS, "whatsapp:wa:15550001111"))
        storing = asyncio.create_task(inbox.store([arrival]))

        async def waiting_for_the_lock() -> None:
            for _ in range(6000):  # polls the server's lock table (no event to wait for): 60 s at most
                if await holder.fetchall("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"):
                    return
                await asyncio.sleep(0.01)

        seen = asyncio.create_task(waiting_for_the_lock())
        try:
            done, _ = await asyncio.wait({storing, seen}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        finally:
            seen.cancel()
        assert seen in done and storing not in done, "the claim did not wait for its conversation's lane lock"
    assert len(await asyncio.wait_for(storing, 60)) == 1  # the other claim committed: this one goes on
