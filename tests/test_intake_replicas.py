"""The intake on both backends, and with replicas: two intakes (two "replicas", each with its own hub, lanes and
leases) on ONE PostgreSQL state store receive the messages of one conversation alternately; each message is
answered once, in the order it arrived, by whichever replica holds the conversation. A replica that stops
renewing (frozen or killed) loses its conversations after ``lease_s``; the other answers what it left.

The board here is a small stand-in (a model that answers ``A:<text>`` after a delay): what is under test is
the intake's store, lanes and leases, not the board's turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from board.clock import SYSTEM_CLOCK
from board.envelope import Envelope, Reply
from board.storage import Database, Dialect
from bot.channels.base import Admission, ChannelTexts, SendProgress
from bot.intake.config import InboxSection
from bot.intake.inbox import Arrival, Inbox
from bot.intake.intake import Intake, IntakeHub
from bot.intake.migrations import MIGRATIONS as INTAKE_MIGRATIONS

pytestmark = pytest.mark.backends

_ids = itertools.count(1)


@dataclass
class Delivered:
    """Every reply of every replica, in the order they were delivered."""

    replies: list[tuple[str, Reply]] = field(default_factory=list)
    event: asyncio.Event = field(default_factory=asyncio.Event)

    def texts(self) -> list[str]:
        return [reply.text for _, reply in self.replies]

    async def wait(self, count: int, timeout: float = 20.0) -> None:
        async def enough() -> None:
            while len(self.replies) < count:
                self.event.clear()
                await self.event.wait()

        await asyncio.wait_for(enough(), timeout)


@dataclass
class Courier:
    """A channel in miniature: everyone admitted, one lane per chat; replies go to the shared list."""

    replica: str
    delivered: Delivered
    name: str = "test"
    texts: ChannelTexts = field(default_factory=ChannelTexts)

    def admit(self, envelope: Envelope) -> Admission:
        return Admission(True)

    def conversation(self, envelope: Envelope) -> str:
        return f"t:{envelope.chat_id}"

    @contextlib.asynccontextmanager
    async def typing(self, envelope: Envelope) -> AsyncIterator[None]:
        yield

    async def deliver(self, reply: Reply, progress: SendProgress) -> None:
        await progress.leaving()
        progress.posted += 1
        self.delivered.replies.append((self.replica, reply))
        self.delivered.event.set()


class _NoSchedule:
    def waits_for(self, channel: str, chat: str) -> bool:
        return False


class _NoMedia:
    async def speak(self, envelope: Envelope, reply: Reply) -> Reply:
        return reply


@dataclass
class MiniBoard:
    """What the intake uses of a board: its store and clock, and a turn (``A:<text>`` after ``latency``)."""

    db: Database
    latency: float = 0.02
    hold: asyncio.Event | None = None  # set: turns wait for it (a replica frozen mid-turn)
    clock: Any = SYSTEM_CLOCK
    schedule: _NoSchedule = field(default_factory=_NoSchedule)
    media: _NoMedia = field(default_factory=_NoMedia)
    turns: list[str] = field(default_factory=list)

    async def identify(self, envelope: Envelope) -> Envelope:
        return envelope

    async def read_media(self, envelope: Envelope, fetcher: Any) -> Envelope:
        return envelope

    async def handle(self, envelope: Envelope) -> Reply:
        self.turns.append(envelope.text)
        if self.hold is not None:
            await self.hold.wait()
        await asyncio.sleep(self.latency)
        return Reply.to(envelope, role="general", name="G", emoji="", text=f"A:{envelope.text}")


@dataclass
class Replica:
    name: str
    board: MiniBoard
    hub: IntakeHub
    intake: Intake

    async def receive(self, chat: str, text: str) -> None:
        envelope = Envelope(channel="test", text=text, sender="u1", chat_id=chat, message_id=str(next(_ids)))
        await self.intake.receive([Arrival(envelope, "")])


@pytest.fixture
async def replicas(database_with: Any, backend: Dialect) -> AsyncIterator[Callable[..., Any]]:
    """``await replicas(n)``: ``n`` replicas on one state store (on SQLite: one replica, the single process)."""
    made: list[Replica] = []

    async def make(count: int = 2, *, lease_s: float = 15.0, latency: float = 0.02) -> list[Replica]:
        db = await database_with(INTAKE_MIGRATIONS)
        for n in range(count):
            board = MiniBoard(db, latency=latency)
            hub = IntakeHub(InboxSection(), slow_notice_s=0, replica=f"r{n}", lease_s=lease_s)
            courier = Courier(f"r{n}", delivered)
            intake = hub.intake(board, courier)  # type: ignore[arg-type]
            await intake.resume()
            made.append(Replica(f"r{n}", board, hub, intake))
        return made

    delivered = Delivered()
    make.delivered = delivered  # type: ignore[attr-defined]
    yield make
    for replica in made:
        if replica.board.hold is not None:
            replica.board.hold.set()
        await replica.hub.drain(1.0)


async def test_the_inbox_stores_once_and_hands_back_in_order(database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox = Inbox(db, "test")
    envelopes = [Envelope(channel="test", text=f"m{n}", sender="u", chat_id="c", message_id=str(n))
                 for n in range(1, 6)]
    fresh = await inbox.store([Arrival(e, "t:c") for e in envelopes[:3]])
    assert [p.message_id for p in fresh] == ["1", "2", "3"]
    again = await inbox.store([Arrival(e, "t:c") for e in (envelopes[1], envelopes[3], envelopes[3], envelopes[4])])
    assert [p.message_id for p in again] == ["4", "5"]  # a redelivery and a twin in one batch: skipped
    assert inbox.duplicates == 2
    assert await inbox.count_unfinished() == 5
    await inbox.finish(fresh[0], inbox_status("answered"))
    from datetime import timedelta

    todo = await inbox.unfinished(timedelta(hours=1))
    assert [p.message_id for p in todo] == ["2", "3", "4", "5"]
    assert [p.envelope.text for p in todo] == ["m2", "m3", "m4", "m5"]
    assert await inbox.status("c", "1") == "answered"
    assert await inbox.status("c", "404") is None


async def test_ids_unique_recognises_a_redelivery_filed_under_another_chat(database_with: Any) -> None:
    db = await database_with(INTAKE_MIGRATIONS)
    inbox = Inbox(db, "wa", ids_unique=True)
    first = Envelope(channel="wa", text="hi", sender="p", chat_id="old", message_id="wamid.1")
    assert len(await inbox.store([Arrival(first, "wa:old")])) == 1
    moved = Envelope(channel="wa", text="hi", sender="p", chat_id="new", message_id="wamid.1")
    assert await inbox.store([Arrival(moved, "wa:new")]) == []


def inbox_status(value: str) -> Any:
    from bot.intake.inbox import InboxStatus

    return InboxStatus(value)


async def test_two_replicas_answer_one_conversation_once_each_in_order(replicas: Any, backend: Dialect) -> None:
    count = 2 if backend is Dialect.POSTGRES else 1
    made: list[Replica] = await replicas(count, latency=0.05)
    for n in range(12):  # alternately taken in by each replica (a load balancer's round robin)
        await made[n % count].receive("c1", f"q{n:02d}")
        await asyncio.sleep(0.01)
    delivered = replicas.delivered
    await delivered.wait(12)
    await asyncio.sleep(1.0)  # nothing more comes (no second answer)
    assert delivered.texts() == [f"A:q{n:02d}" for n in range(12)]
    assert sorted(t for r in made for t in r.board.turns) == [f"q{n:02d}" for n in range(12)]  # one turn each
    for replica in made:
        assert await replica.intake.inbox.count_unfinished() == 0
    # the conversation went idle: its lease was let go
    await asyncio.sleep(0.3)
    assert await made[0].board.db.fetchall("SELECT key FROM leases") == []


async def test_a_replica_that_stops_renewing_loses_its_conversation_to_the_other(replicas: Any,
                                                                                 backend: Dialect) -> None:
    if backend is Dialect.SQLITE:
        pytest.skip("one process owns a SQLite data dir: no second replica")
    a, b = await replicas(2, lease_s=1.0, latency=0.01)
    a.board.hold = asyncio.Event()  # a's turns never end: a is frozen (as good as killed) mid-turn
    await a.receive("c2", "first")
    await asyncio.sleep(0.3)
    assert a.board.turns == ["first"]
    await b.receive("c2", "second")  # b takes it in; a holds the conversation: b leaves it to a
    await asyncio.sleep(0.5)
    assert b.board.turns == []
    assert a.hub.lanes is not None
    heartbeat = a.hub.lanes._heartbeat
    assert heartbeat is not None
    heartbeat.cancel()  # a stops renewing, like a killed process
    delivered = replicas.delivered
    await delivered.wait(2, timeout=10)
    assert [(who, reply.text) for who, reply in delivered.replies] == [("r1", "A:first"), ("r1", "A:second")]
    rows = await b.board.db.fetchall("SELECT status, attempts FROM inbound_messages ORDER BY message_id")
    assert [(r["status"], r["attempts"]) for r in rows] == [("answered", 2), ("answered", 1)]
