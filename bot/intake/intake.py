"""The one life of an inbound message, written once for every channel.

A channel reads its native update into :class:`bot.intake.inbox.Arrival` records and
calls :meth:`Intake.receive`; only when that returns does it tell its service the update
arrived (the next ``getUpdates`` offset, a webhook's 200). In between, and after:

1. **clean**: text that is not valid Unicode (lone surrogates) becomes U+FFFD before
   anything is written; a message of only white space is ignored;
2. **access gate**: :meth:`bot.intake.courier.Courier.admit`, deny by default; a denied
   sender is never stored, never reaches a model, and is told (once) if the channel says so;
3. **durable claim**: all arrivals of one update batch are stored in one transaction with
   their envelope (:class:`bot.intake.inbox.Inbox`), together with those of other updates
   arriving meanwhile (group commit), on SQLite's express connection; a redelivered id is
   skipped. If the state db cannot be written (disk full, read-only),
   :class:`StorageUnavailable` is raised so the channel does not acknowledge: the service
   keeps the message and offers it again; the sender gets one short "can't save, try
   again shortly" (once per sender and chat in each outage, however many messages or
   redeliveries);
4. **lane**: the stored message joins its conversation's lane in the shared
   :class:`bot.intake.lanes.Lanes` (order within a conversation, conversations
   concurrent up to the global cap, fair turns); a consent answer (``/allow``, ``/deny``, a press of
   their buttons) joins a lane beside its conversation's (:func:`board.tools.consent.consent_lane`):
   the turn that waits for it holds the conversation's lane, and would hold the answer behind it; a job holds
   its place under the cap until its answer is stored (:func:`bot.intake.lanes.giving_place_up`): delivering it
   runs beside the next conversation's turn, while its own lane stays taken until the outcome is recorded;
5. **answer**: attachments are fetched and read (:mod:`board.media`), then the board
   answers (typing shown only while the turn runs), and the answer gets its voice note
   when ``media.speak_replies`` asks for one (before it is stored: never synthesised twice); a storage
   error on the way parks the message and retries it later, so nothing is lost; a turn
   still running after ``board.slow_notice_s`` tells the user once that the board is
   working on it (never stored: the notice is not the answer; a channel that can edits
   it into the answer, else the answer follows as its own message, as it does after a
   restart, when the notice's message id is gone with the process); a channel that shows
   answers while they are written (``courier.stream``) gets the turn's deltas;
6. **reply stored, then delivered**: the reply is written before the first request
   leaves, and marked "sending" as that request starts to be written (not while it waits
   for a connection or the rate limiter); the outcome is recorded: answered, or failed (the
   service proved it was not posted); when the request left and its answer was lost (the
   connection dropped) it is sent once more, headed by the channel's ``possibly_repeated``
   line, and only a marked copy lost that way too is recorded as may-have-arrived; of a reply in several
   messages, those the service confirmed are stored as they go (``parts_posted``) and never repeated: the
   marked copy starts after them, here, after a restart (7) or when a confirmation is overdue;
7. **resume** (:meth:`Intake.resume`, at start): what a crash or a stop left unanswered
   is answered, or its stored reply delivered, in the order it arrived; a reply that was
   being sent (its request had left: it may or may not have arrived) is sent once more,
   headed by the channel's ``possibly_repeated`` line (:class:`bot.intake.courier.ChannelTexts`);
8. **replicas** (``state.url`` on PostgreSQL, several ``sabha run``): a conversation is answered by the
   replica holding its lease (:mod:`bot.intake.leasing`); a message another replica took in is found by
   the holder's dispatcher (:meth:`Intake.dispatch`) and answered there, in the order the messages were
   stored; a replica that dies leaves its conversations to the others once its leases expired (the
   resume rules of 7 apply). A PostgreSQL outage is a storage outage as in 3 and 5 (503, parked).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from enum import Enum
from typing import TYPE_CHECKING, TypeVar

from board.envelope import Envelope, Reply, cleaned
from board.llm.stream import StreamSink
from board.media.understand import MediaFetcher
from board.storage import StorageError
from board.telemetry.spans import is_on, span, traced, traceparent
from board.tools.consent import answers_consent, consent_lane
from bot.intake.collector import CollectorPause
from bot.intake.config import InboxSection
from bot.intake.courier import Capabilities, Courier
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress
from bot.intake.inbox import (
    MAX_ATTEMPTS,
    SENT_AGAIN,
    UNFINISHED,
    Arrival,
    InboundKind,
    Inbox,
    InboxStatus,
    LeaseLost,
    Pending,
)
from bot.intake.lanes import Lanes, giving_place_up
from bot.intake.leasing import LaneLeases, replica_name
from bot.intake.storage import StorageHealth, is_storage_error

if TYPE_CHECKING:
    from bot.intake.answers import IntakeParts

__all__ = ["Intake", "IntakeHub", "StorageUnavailable"]

log = logging.getLogger("sabha.intake")
_A = TypeVar("_A")
_T = TypeVar("_T")
#: The start of a :attr:`SendProgress.key`: the reply to the stored message whose id follows.
REPLY_KEY = "sabha-reply:"
_PART = re.compile(r"(?P<id>.+):(?P<part>[0-9]+)/(?P<parts>[0-9]+)")


def _reply_part(rest: str) -> tuple[str, int, int]:
    """A reply key (without :data:`REPLY_KEY`) as (message id, part, parts): ``<id>:<i>/<n>`` for a reply sent in
    several messages (:meth:`bot.intake.delivery.SendProgress.part_key`), ``<id>`` (one part of one) else."""
    found = _PART.fullmatch(rest)
    if found is None:
        return rest, 1, 1
    return found["id"], int(found["part"]), int(found["parts"])
_releasing: set[asyncio.Task[int]] = set()  # held scheduled work being released (kept from the collector)


@dataclass(frozen=True)
class _Rest:
    """What of a reply an earlier try left uncertain: ``reply`` as stored (unmarked), of which the first ``posted``
    messages certainly arrived (the service confirmed them); the rest goes once more, marked."""

    reply: Reply
    posted: int


class _Turn(Enum):
    """What :meth:`Intake._in_order` says of a message about to be answered."""

    NOW = "now"  # next in its conversation: answer it
    REQUEUED = "requeued"  # older messages go first; it is queued again behind them
    DONE = "done"  # answered or given up meanwhile elsewhere: nothing to do


class StorageUnavailable(Exception):
    """The arrivals could not be stored; do not acknowledge them to the service."""


class IntakeHub:
    """What the intakes of all channels share: the settings, the global cap with its fair
    lanes, and the daemon's view of storage health."""

    def __init__(self, settings: InboxSection | None = None, *, slow_notice_s: float = 8.0, replica: str = "",
                 lease_s: float = 15.0) -> None:
        self.settings = settings or InboxSection()
        self.slow_notice_s = slow_notice_s  # board.slow_notice_s; 0 = no "working on it" notice
        self.scheduler = Lanes(self.settings.max_concurrent_turns)
        #: The garbage collector waits while a burst is acknowledged (:mod:`bot.intake.collector`)
        self.collector = CollectorPause(quiet=self.scheduler.quiet, most=self.scheduler.max_defer)
        self.storage = StorageHealth()
        self.intakes: list[Intake] = []
        self.replica = replica_name(replica)  # replicas.name, or host name and pid
        self.lease_s = lease_s  # replicas.lease_s
        self.lanes: LaneLeases | None = None  # made with the first intake (it knows the board's store)
        self.lost_leases = 0  # answers dropped because another replica took the conversation meanwhile

    def intake(self, parts: IntakeParts, courier: Courier) -> Intake:
        """The intake of one channel."""
        if self.lanes is None:
            self.lanes = LaneLeases(parts.db, self.scheduler, holder=self.replica, lease_s=self.lease_s,
                                    clock=parts.clock)
        intake = Intake(parts, courier, self)
        self.intakes.append(intake)
        return intake

    @contextlib.contextmanager
    def receiving(self) -> Iterator[None]:
        """Wrap a webhook's receipt in this: answers start after it, up to a second later
        (:meth:`bot.intake.lanes.Lanes.hold`), and the garbage collector waits as long
        (:class:`bot.intake.collector.CollectorPause`), so acknowledging comes first."""
        with self.collector.receiving(), self.scheduler.hold():
            yield

    async def after_receipts(self) -> None:
        """Wait, in background work a receipt asked for (a name to look up), until the answers may start: a burst
        of webhooks is acknowledged first (:meth:`bot.intake.lanes.Lanes.receipts_quiet`)."""
        await self.scheduler.receipts_quiet()

    async def drain(self, grace: float | None = None) -> bool:
        """Finish running turns (up to ``grace``, default ``shutdown_grace_s``); queued ones stay stored. Then
        let this replica's conversation leases go (another replica takes up what is left at once)."""
        self.collector.close()
        finished = await self.scheduler.drain(self.settings.shutdown_grace_s if grace is None else grace)
        for intake in self.intakes:
            await intake.stop_dispatching()
        if self.lanes is not None:
            await self.lanes.stop()
        return finished


class Intake:
    """One channel's intake; see the module docstring."""

    def __init__(self, parts: IntakeParts, courier: Courier, hub: IntakeHub) -> None:
        self.uses = parts  # what it uses of the board (bot.intake.answers)
        self.courier = courier
        #: What the courier can do besides the basics, resolved once (:mod:`bot.intake.courier`)
        self.caps = Capabilities.of(courier)
        self.hub = hub
        self.inbox = Inbox(parts.db, courier.name, ids_unique=self.caps.unique_ids)
        lanes = hub.lanes
        if lanes is not None and lanes.shared:  # replicas: answers stored and sent only under the lease
            self.inbox.fence = lambda: (lanes.holder, parts.clock.now().timestamp())
        self._batch: list[tuple[list[Arrival], asyncio.Future[int]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._told_denied: set[str] = set()
        self._told_cannot_save: set[tuple[int, str, str]] = set()  # (outage, chat, sender)
        self._background: set[asyncio.Task[None]] = set()
        self._notices: dict[tuple[str, str], object] = {}  # (chat, message id) -> the notice to edit
        self._local: set[tuple[str, str]] = set()  # (chat, message id) queued or being answered here
        self._dispatcher: asyncio.Task[None] | None = None
        self.received = 0  # new messages stored (redeliveries not counted)
        self.commits = 0  # transactions that stored arrivals (group commit: a burst takes a few)
        self._in_store = 0  # arrivals in the transaction running now
        self.denied = 0
        self.answered = 0
        self.failed = 0
        self.uncertain = 0
        self.ignored = 0
        #: The channel's service confirms each delivered message (WhatsApp's status webhook): a reply that may have
        #: arrived waits for that confirmation (``inbox.confirm_within_s``) before it is sent once more
        self.confirms = self.caps.confirms

    @property
    def waiting(self) -> int:
        """Arrivals waiting for their commit now (their service not acknowledged yet): in the running transaction
        and queued for the next."""
        return self._in_store + sum(len(arrivals) for arrivals, _ in self._batch)

    @property
    def scheduler(self) -> Lanes:
        """The shared lanes."""
        return self.hub.scheduler

    @property
    def _may_redo(self) -> Callable[[Reply], Awaitable[bool]] | None:
        """Whether a reply left "sending" may be delivered again (``courier.may_redo``; None: never)."""
        return self.caps.redo.may_redo if self.caps.redo is not None else None

    def _current(self, envelope: Envelope) -> Envelope:
        """Who a stored message is from now (identities merged since: ``courier.current``), if the channel knows."""
        return self.caps.sender.current(envelope) if self.caps.sender is not None else envelope

    # -- receipt ---------------------------------------------------------------------

    async def receive(self, arrivals: Sequence[Arrival]) -> None:
        """Store ``arrivals`` durably, then queue them for an answer (a redelivery is skipped).

        Raises :class:`StorageUnavailable` when they could not be stored: the caller must
        not acknowledge them (the service will offer them again).

        While tracing is on this is the ``claim`` span, and each row keeps the trace context it arrived in (the
        caller's ``receipt`` span, else the claim): its answer's ``message`` span is that span's child.
        """
        if not is_on():  # no span, no trace context to keep: the claim alone (it is on every acknowledgement's path)
            await self._claim(arrivals, None)
            return
        arrived_in = traceparent()  # the receipt span the channel opened (None: tracing off, or no span)
        with span("claim", {"sabha.channel": self.courier.name, "sabha.messages.count": len(arrivals)}) as claim:
            stored, admitted = await self._claim(arrivals, arrived_in or traceparent())
            claim.update({"sabha.messages.admitted": admitted, "sabha.messages.stored": stored,
                          "sabha.messages.duplicates": admitted - stored})

    async def _claim(self, arrivals: Sequence[Arrival], context: str | None) -> tuple[int, int]:
        """:meth:`receive`'s work: (how many were stored for the first time, how many were admitted)."""
        admitted: list[Arrival] = []
        for arrival in arrivals:
            envelope = cleaned(arrival.envelope)
            if arrival.kind is InboundKind.TEXT and not envelope.text.strip() and not envelope.attachments:
                self.ignored += 1
                log.debug("%s: ignored an empty message %s", self.courier.name, envelope.message_id)
                continue
            if not self._admitted(envelope):
                continue
            lane = arrival.lane or self.courier.conversation(envelope)
            if answers_consent(envelope.text):  # the turn waiting for this answer holds the conversation's lane
                lane = consent_lane(lane)
            admitted.append(Arrival(envelope, lane, arrival.kind, context))
        if not admitted:
            return 0, 0
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._batch.append((admitted, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name=f"{self.courier.name} store")
        # not shielded: a caller cancelled meanwhile leaves the store to finish (it checks done())
        return await done, len(admitted)

    async def _flush(self) -> None:
        """Group commit: what arrives while a transaction runs is stored together in the next
        one, so a burst costs a few commits, not one each. Batches are stored, and their
        messages queued in their lanes, in the order they arrived."""
        while self._batch:
            batch, self._batch = self._batch, []
            admitted = [arrival for arrivals, _ in batch for arrival in arrivals]
            self._in_store = len(admitted)
            try:
                fresh = await self.inbox.store(admitted)
            except asyncio.CancelledError:  # stopping: the callers are not acknowledged either
                for _, done in batch:
                    done.cancel()
                raise
            except Exception as exc:  # noqa: BLE001 - handed to every waiting caller
                failure: BaseException = exc
                if is_storage_error(exc):
                    self.hub.storage.failed(exc, f"storing {len(admitted)} {self.courier.name} message(s)")
                    for arrival in admitted:
                        self._tell_cannot_save(arrival.envelope)
                    failure = StorageUnavailable(str(exc))
                    failure.__cause__ = exc
                for _, done in batch:
                    if not done.done():
                        done.set_exception(failure)
                continue
            finally:
                self._in_store = 0
            self.hub.storage.recovered()
            self.commits += 1
            self.received += len(fresh)
            for pending in fresh:
                self._queue(pending)
            self._release_waiting(fresh)
            stored = {(p.chat_id, p.message_id) for p in fresh} if is_on() else set()  # counted for the claim span
            for arrivals, done in batch:
                if not done.done():
                    done.set_result(sum((a.envelope.chat_id, a.envelope.message_id or "") in stored for a in arrivals))

    def _release_waiting(self, fresh: Sequence[Pending]) -> None:
        """Scheduled messages waiting for these chats (a WhatsApp window that closed: the user wrote
        again) may go now (:meth:`board.schedule.Schedule.release`); off the acknowledgement's path."""
        schedule = self.uses.schedule
        for chat in {p.chat_id for p in fresh if schedule.waits_for(self.courier.name, p.chat_id)}:
            task = asyncio.create_task(schedule.release(self.courier.name, chat), name="release scheduled work")
            _releasing.add(task)
            task.add_done_callback(_releasing.discard)

    def _admitted(self, envelope: Envelope) -> bool:
        verdict = self.courier.admit(envelope)
        if verdict.allowed:
            return True
        self.denied += 1
        key = verdict.notice_key or envelope.sender
        if verdict.notice and key not in self._told_denied:
            self._told_denied.add(key)
            self._say(envelope, verdict.notice)
        return False

    def _queue(self, pending: Pending, *, front: bool = False) -> None:
        """Queue ``pending`` in its lane here, unless it is queued or being answered here already."""
        key = (pending.chat_id, pending.message_id)
        if key in self._local:
            return
        self._local.add(key)
        if not self.scheduler.submit(pending.lane, lambda: self._run(pending), front=front):
            self._local.discard(key)

    async def _run(self, pending: Pending) -> None:
        """Answer ``pending`` if this replica works its conversation (holds or takes its lease); else leave it
        to the replica that does (its dispatcher finds it)."""
        key = (pending.chat_id, pending.message_id)
        requeued = False  # queued again behind older messages of its conversation: that job owns it now
        try:
            lanes = self.hub.lanes
            if lanes is not None:
                await self._dispatching(lanes)
                took = False
                if not lanes.holds(pending.lane):
                    if not await self._retrying(f"taking conversation {pending.lane}", lanes.take, pending.lane):
                        log.debug("%s: conversation %s is worked by another replica; message %s is left to it",
                                  self.courier.name, pending.lane, pending.message_id)
                        return
                    took = True
                if took or lanes.shared:  # messages of it may have been stored by another replica
                    go = await self._retrying(f"reading conversation {pending.lane}", self._in_order, pending)
                    requeued = go is _Turn.REQUEUED
                    if go is not _Turn.NOW:
                        return
            await self._answer(pending)
        except LeaseLost as exc:  # cut off longer than the lease: the conversation's holder answers it
            self.hub.lost_leases += 1
            log.warning("%s: %s", self.courier.name, exc)
            self._notices.pop((pending.chat_id, pending.message_id), None)  # this replica's "working on it"
            try:  # a hand-over, not an interruption: the attempt this turn counted is taken back
                await self.inbox.handed_over(pending)
            except Exception as problem:  # noqa: BLE001 - the count stays one higher; nothing else depends on it
                log.warning("%s: could not take back the attempt on %s: %s", self.courier.name, pending.message_id,
                            problem)
            try:  # a partial (streamed) answer this replica showed says it stopped; the holder's answer follows
                await self._interrupted(pending)
            except Exception as problem:  # noqa: BLE001 - best effort: the answer is the holder's
                log.warning("%s: could not mark the partial answer to %s as stopped: %s", self.courier.name,
                            pending.message_id, problem)
        finally:
            if not requeued:
                self._local.discard(key)

    async def _in_order(self, pending: Pending) -> _Turn:
        """Whether ``pending`` is next in its conversation. Messages of it stored before it and not answered
        yet go first: the ones stored by another replica (or left by one that stopped) are queued here at the
        front, and ``pending`` again behind the lane's queue (what is queued here already goes before it too,
        and is checked the same way when its turn comes)."""
        key = (pending.chat_id, pending.message_id)
        order = await self.inbox.lane_order(pending.lane)
        if key not in order:
            return _Turn.DONE  # answered (or given up) meanwhile by the replica that had the conversation
        if order[0] == key:
            return _Turn.NOW
        remote = await self._unanswered([pending.lane], frozenset(self._local))
        self._local.discard(key)
        for stored in reversed(remote):
            self._queue(stored, front=True)
        self._queue(pending)
        return _Turn.REQUEUED

    async def _unanswered(self, lanes: Sequence[str], skip: frozenset[tuple[str, str]]) -> list[Pending]:
        """The unanswered messages of ``lanes`` not in ``skip``, under the restart rules (a reply that may have
        arrived is never sent again; too old or too often interrupted: given up)."""
        max_age = timedelta(seconds=self.hub.settings.resume_max_age_s)
        return await self.inbox.unfinished(max_age, self._may_redo, self._interrupted,
                                           lanes=lanes, skip=skip, after_restart=False, again=self._sent_again,
                                           confirms=self.confirms)

    async def _retrying(self, doing: str, step: Callable[[_A], Awaitable[_T]], arg: _A) -> _T:
        """``await step(arg)``, again after a pause while the state store is out (like a parked answer)."""
        delay = self.hub.settings.storage_retry_s
        while True:
            try:
                return await step(arg)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not is_storage_error(exc):
                    raise
                self.hub.storage.failed(exc, f"{doing} ({self.courier.name})")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)

    # -- replicas: the dispatcher -----------------------------------------------------

    async def dispatch(self) -> None:
        """Until the scheduler closes: every ``poll_s`` find unanswered messages in conversations this replica
        holds or can take (stored by another replica, or left by one that stopped or died) and queue them."""
        lanes = self.hub.lanes
        if lanes is None:
            return
        wake = asyncio.Event()
        if lanes.shared:  # other replicas store messages: a turn ending here makes room for one of them
            self.scheduler.when_spare(wake.set)
        while not self.scheduler.closed:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(lanes.poll_s):
                    await wake.wait()
            wake.clear()
            try:
                await self._look(lanes)
                if self.confirms:
                    await self._unconfirmed_overdue()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if is_storage_error(exc):
                    log.debug("%s: dispatcher: state store out (%s)", self.courier.name, exc)
                else:
                    log.exception("%s: dispatcher: looking for messages to answer failed", self.courier.name)

    async def _look(self, lanes: LaneLeases) -> None:
        """One look of :meth:`dispatch`."""
        await lanes.balance()  # conversations parked behind busy turns here go to replicas with room
        local = frozenset(self._local)  # before the rows are read: a job ending meanwhile is still skipped
        marks = ", ".join("?" * len(UNFINISHED))
        rows = await self.uses.db.fetchall(
            "SELECT m.lane AS lane, m.chat_id AS chat_id, m.message_id AS message_id FROM inbound_messages m "
            "LEFT JOIN leases l ON l.key = 'lane:' || m.lane "
            f"WHERE m.channel = ? AND m.status IN ({marks}) AND m.lane IS NOT NULL "
            "AND (l.key IS NULL OR l.holder = ? OR l.expires_at < ?)",
            [self.courier.name, *UNFINISHED, lanes.holder, self.uses.clock.now().timestamp()])
        wanted = sorted({str(r["lane"]) for r in rows if (str(r["chat_id"]), str(r["message_id"])) not in local})
        wanted.sort(key=lambda lane: not lanes.holds(lane))  # this replica's conversations first
        for lane in wanted:
            if self.scheduler.closed:
                return
            if not lanes.holds(lane):
                # A conversation nobody works (yet) is taken only with room to answer it now: a replica whose
                # turns are all busy would hold it in a queue while another replica sits idle.
                if self.scheduler.spare <= 0:
                    break
                if not await lanes.take(lane):
                    continue  # another replica was quicker
            todo = await self._unanswered([lane], frozenset(self._local))
            for pending in todo:
                self._queue(pending)
            if todo:
                log.info("%s: taking up %d message(s) of conversation %s (stored by another replica, or left by "
                         "one that stopped)", self.courier.name, len(todo), lane)
            elif not self.scheduler.active(lane):
                lanes.idle(lane)

    async def _unconfirmed_overdue(self) -> None:
        """Replies whose confirmation never came within ``inbox.confirm_within_s``: sent once more, marked."""
        within = timedelta(seconds=self.hub.settings.confirm_within_s)
        lanes = self.hub.lanes
        overdue = await self.inbox.overdue(within, holder=lanes.holder if lanes is not None else None,
                                           now_s=self.uses.clock.now().timestamp(),
                                           max_age=timedelta(seconds=self.hub.settings.resume_max_age_s))
        for pending in overdue:
            assert pending.reply is not None
            if not self.courier.admit(pending.envelope).allowed:  # the config may have changed since
                await self.inbox.finish(pending, InboxStatus.DENIED, "the sender is not allowed any more")
                continue
            why = f"was not confirmed by the service within {within.total_seconds():.0f} s"
            again = await self.inbox.send_again(pending, self._sent_again(pending.reply), why)
            if again is not None:
                if not again.lane:
                    again = replace(again, lane=self.courier.conversation(again.envelope))
                self._queue(again)

    async def confirmed(self, key: str | None, how: str) -> bool:
        """The service confirmed the delivery of a message whose progress had ``key`` (a status webhook): a reply
        that waited for it is answered and not sent again. False when ``key`` is not a reply's or nothing waited."""
        if not key or not key.startswith(REPLY_KEY):
            return False
        message_id, part, parts = _reply_part(key.removeprefix(REPLY_KEY))
        if part != parts:  # a reply in several messages: only its last part's status says all of it left
            if await self.inbox.part_confirmed(message_id, part):  # a copy sent once more starts after it
                log.info("%s: part %d of %d of the reply to message %s was confirmed by the service (%s); waiting "
                         "for its last part", self.courier.name, part, parts, message_id, how)
            return False
        done = await self.inbox.confirm(message_id, how)
        if done:
            log.info("%s: the reply to message %s was confirmed by the service (%s); not sending it again",
                     self.courier.name, message_id, how)
        return done

    async def _dispatching(self, lanes: LaneLeases) -> None:
        """Leases started (heartbeat; SQLite: the previous run's taken over) and this intake's dispatcher
        running: at :meth:`resume`, or at the first message of a channel that does not resume."""
        await lanes.start()
        if self._dispatcher is None and not self.scheduler.closed:
            self._dispatcher = asyncio.create_task(self.dispatch(), name=f"{self.courier.name} dispatcher")

    async def stop_dispatching(self) -> None:
        """Stop looking for messages to answer (the daemon stops)."""
        task, self._dispatcher = self._dispatcher, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- answering -------------------------------------------------------------------

    @traced("message", lambda self, pending: {"sabha.channel": self.courier.name,
                                             "sabha.message.kind": pending.kind.value,
                                             "sabha.message.resends": pending.resends}, root=True,
            parent=lambda self, pending: pending.traceparent)
    async def _answer(self, pending: Pending) -> None:
        """Answer one stored message (runs in its lane); storage errors park it and retry."""
        delay = self.hub.settings.storage_retry_s
        while True:
            try:
                pending = await self._reply_for(pending)
                break
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not is_storage_error(exc):
                    raise
                self.hub.storage.failed(exc, f"answering {self.courier.name} message {pending.message_id}")
                self._tell_cannot_save(pending.envelope)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)
        self.hub.storage.recovered()
        # The answer is stored: delivering it and recording how that went is no work the cap bounds. The place goes
        # to the next conversation's turn; this lane stays taken, so the conversation's next message still waits.
        giving_place_up()
        while not await self._deliver(pending):
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)
        await self._after(pending)

    async def _after(self, pending: Pending) -> None:
        """What the delivered answer leaves for outside its turn (:meth:`Answers.after`: the history compacted ahead
        of the next turn), in the lane, without a place under the cap: the conversation's next message waits for it,
        no other conversation does. The message is answered already: a lease lost meanwhile ends it, nothing else."""
        if pending.reply is None or pending.kind is not InboundKind.TEXT:
            return
        lanes = self.hub.lanes
        if lanes is not None and not lanes.holds(pending.lane):
            return  # lost while the answer went out: the replica that has the conversation now compacts it when due
        try:
            async with self._leased(pending.lane):
                await self.uses.answers.after(self._current(pending.envelope), pending.reply)
        except LeaseLost:
            log.debug("%s: conversation %s went to another replica before its history was compacted ahead",
                      self.courier.name, pending.lane)
        except Exception:  # the message is answered and recorded: nothing here may fail its job
            log.exception("%s: the work after answering message %s in chat %s failed", self.courier.name,
                          pending.message_id, pending.chat_id)

    async def _reply_for(self, pending: Pending) -> Pending:
        """``pending`` with the board's stored reply (asks the board unless a reply is stored)."""
        if pending.reply is not None:
            return pending
        await self.inbox.started(pending)
        envelope = self._current(pending.envelope)  # who the message is from now (identities merged)
        if self.caps.at_turn is not None:  # what the channel decides in the conversation's order (a sticky role)
            envelope = await self.caps.at_turn.at_turn(envelope, pending.kind is InboundKind.TEXT)
        if pending.kind is not InboundKind.TEXT:  # a fixed line, no model call
            line = self.courier.texts.edited if pending.kind is InboundKind.EDITED else self.courier.texts.text_only
            reply = self._system_reply(envelope, line, labelled=False)
        else:
            try:
                async with self.courier.typing(envelope), self._streaming(envelope) as sink, \
                        self._working_notice(pending, envelope):
                    # One call (board.answer): identified, gated, its files fetched and read here, in the lane (a
                    # fresh link each try), answered, and spoken before it is stored; cleaned at receipt already.
                    fetcher = self.courier if isinstance(self.courier, MediaFetcher) else None
                    async with self._leased(pending.lane):  # stopped at once if the lease is lost meanwhile
                        reply = await self.uses.answers.handle(envelope, fetcher=fetcher, sink=sink, spoken=True,
                                                               received_clean=True, read_files=True)
            except (asyncio.CancelledError, LeaseLost):
                raise
            except Exception as exc:
                if is_storage_error(exc):
                    raise
                log.exception("%s: answering message %s in chat %s failed", self.courier.name,
                              pending.message_id, pending.chat_id)
                reply = self._system_reply(envelope, self.courier.texts.answer_failed)
        await self.inbox.replied(pending, reply)
        return pending.with_reply(reply)

    def _leased(self, lane: str) -> contextlib.AbstractAsyncContextManager[object]:
        """The board's work on ``lane``, cancelled (:class:`LeaseLost`) when this replica loses its lease."""
        lanes = self.hub.lanes
        return lanes.turn(lane) if lanes is not None else contextlib.nullcontext()

    @traced("send", lambda self, pending: {"sabha.channel": self.courier.name, "sabha.reply.resends": pending.resends})
    async def _deliver(self, pending: Pending) -> bool:
        """Deliver the stored reply and record the outcome; False when "sending" could not be
        recorded (nothing left: try again later). A marked copy of a reply whose first messages certainly
        arrived (``pending.posted``, in this run or before a stop) starts after them, marked."""
        assert pending.reply is not None
        first_copy = pending.resends == 0
        progress = SendProgress(before_first_request=lambda: self.inbox.sending(pending),
                                after_refusal=lambda: self.inbox.unsent(pending),  # a 429: nothing posted yet
                                key=f"{REPLY_KEY}{pending.message_id}", again=not first_copy,
                                after_part=(lambda parts: self._parts_posted(pending, parts)) if first_copy else None)
        reply = pending.reply
        rest = self._rest_of(pending)
        if rest is not None:
            reply, progress.skip, progress.heading = rest.reply, rest.posted, self.courier.texts.possibly_repeated
        notice = self._notices.pop((pending.chat_id, pending.message_id), None)
        over = self.caps.notice
        try:
            if notice is not None and over is not None and not progress.again:
                await over.deliver_over(notice, reply, progress)
            else:
                await self.courier.deliver(reply, progress)
        except SendFailed as exc:
            if exc.outcome is DeliveryOutcome.MAY_HAVE_ARRIVED and pending.resends == 0 and self.confirms:
                if not await self.inbox.unconfirmed(pending):  # the service's status webhook says whether it arrived
                    return True  # it confirmed it already
                log.warning("%s: the reply to message %s in chat %s may or may not have arrived (%s); waiting up to "
                            "%.0f s for the service to confirm it, else it is sent once more", self.courier.name,
                            pending.message_id, pending.chat_id, exc, self.hub.settings.confirm_within_s)
                return True
            if exc.outcome is DeliveryOutcome.MAY_HAVE_ARRIVED and pending.resends == 0:
                again = await self.inbox.send_again(pending, self._sent_again(pending.reply),
                                                    f"left but its answer was lost ({exc})")
                if again is not None:  # nobody is left silently unanswered: once more, marked
                    # from the message whose answer was lost: those before it certainly arrived
                    return await self._deliver(replace(again, posted=progress.parts_done))
            if exc.outcome is DeliveryOutcome.MAY_HAVE_ARRIVED:
                self.uncertain += 1
                status = InboxStatus.MAY_HAVE_ARRIVED
            else:
                self.failed += 1
                status = InboxStatus.FAILED
            log.error("%s: reply to message %s in chat %s not delivered: %s", self.courier.name,
                      pending.message_id, pending.chat_id, exc)
            await self._record(pending, status, str(exc))
            if status is InboxStatus.FAILED:
                await self._interrupted(pending)
            return True
        except asyncio.CancelledError:
            if progress.untouched:  # stopped before anything left: deliver it at the next start
                await self._record_unsent(pending)
            raise
        except Exception as exc:
            if is_storage_error(exc) and progress.untouched:
                self.hub.storage.failed(exc, f"recording the delivery of {self.courier.name} message "
                                             f"{pending.message_id}")
                return False
            if is_storage_error(exc) or isinstance(exc, LeaseLost):
                raise
            await self._delivery_broke(pending, progress, exc)
            return True
        self.answered += 1
        kind = InboxStatus.NOT_TEXT if pending.kind is not InboundKind.TEXT else InboxStatus.ANSWERED
        await self._record(pending, kind, progress.note or (SENT_AGAIN if pending.resends else None))
        return True

    def _sent_again(self, reply: Reply) -> Reply:
        """A reply that was being sent when Sabha stopped, as it is sent once more: headed by the channel's
        "possibly repeated" line (the request had left; nothing says whether it arrived)."""
        return replace(reply, text=f"{self.courier.texts.possibly_repeated}\n\n{reply.text}")

    def _rest_of(self, pending: Pending) -> _Rest | None:
        """What a marked copy sends when the service confirmed the first ``pending.posted`` messages of the reply:
        the reply as first sent (the stored copy without :meth:`_sent_again`'s heading), after them. None: all of
        the marked copy goes (nothing confirmed; or a copy stored with another heading, an older version's)."""
        if pending.resends == 0 or pending.posted <= 0 or pending.reply is None:
            return None
        heading = f"{self.courier.texts.possibly_repeated}\n\n"
        if not pending.reply.text.startswith(heading):
            return None
        return _Rest(replace(pending.reply, text=pending.reply.text.removeprefix(heading)), pending.posted)

    async def _parts_posted(self, pending: Pending, parts: int) -> None:
        """The first ``parts`` messages of ``pending``'s reply are posted: stored, so that after a stop a marked
        copy starts after them. Not stored (the state store is out): a marked copy may repeat them, as before."""
        try:
            await self.inbox.parts_posted(pending, parts)
        except Exception as exc:
            if not is_storage_error(exc):
                raise
            log.warning("%s: could not record that %d message(s) of the reply to message %s are posted (%s); a "
                        "copy sent once more after a stop would repeat them", self.courier.name, parts,
                        pending.message_id, exc)

    async def _delivery_broke(self, pending: Pending, progress: SendProgress, exc: Exception) -> None:
        """Delivering raised something that is not a refused send (a bug in the channel's code, a reply it cannot
        render). Nothing left yet: counted as an attempt, and the dispatcher (or the next start) tries again until
        :data:`~bot.intake.inbox.MAX_ATTEMPTS`, then it is given up and the user told. Something left: it may have
        arrived, so it is not sent again."""
        name = self.courier.name
        log.error("%s: delivering the reply to message %s in chat %s broke", name, pending.message_id,
                  pending.chat_id, exc_info=exc)
        if not progress.untouched:
            self.uncertain += 1
            await self._record(pending, InboxStatus.MAY_HAVE_ARRIVED, f"delivering it broke part-way: {exc}")
            return
        attempts = await self.inbox.delivery_broke(pending)
        if attempts < MAX_ATTEMPTS:
            return
        self.failed += 1
        await self._record(pending, InboxStatus.ABANDONED,
                           f"delivering its answer broke {attempts} times ({exc}); giving up on it")
        log.error("%s: gave up on message %s in chat %s: delivering its answer broke %d times", name,
                  pending.message_id, pending.chat_id, attempts)
        await self._interrupted(pending)
        self._say(pending.envelope, self.courier.texts.answer_failed)  # best effort: it may break the same way

    async def _interrupted(self, pending: Pending) -> None:
        """The answer to ``pending`` will not come: the channel says so where it showed a partial one
        (``courier.interrupted``, a streamed draft), if it has one."""
        if self.caps.interruption is not None:
            await self.caps.interruption.interrupted(pending.chat_id, pending.message_id)

    async def _record(self, pending: Pending, status: InboxStatus, detail: str | None = None) -> None:
        """Record how ``pending`` ended; while the state store cannot be written, again after a pause until it is.
        Until then the row stays 'sending' and this job keeps it (``_local``), so the dispatcher does not send
        it once more; only a stop meanwhile leaves it 'sending' (the next start sends it once more, marked)."""
        await self._retrying(f"recording the outcome of {self.courier.name} message {pending.message_id}",
                             self._finish, (pending, status, detail))

    async def _finish(self, outcome: tuple[Pending, InboxStatus, str | None]) -> None:
        await self.inbox.finish(*outcome)

    async def _record_unsent(self, pending: Pending) -> None:
        try:
            await self.inbox.unsent(pending)
        except Exception as exc:  # noqa: BLE001 - shutting down; the row stays 'sending' (not re-sent)
            log.warning("%s: could not mark message %s as unsent: %s", self.courier.name, pending.message_id, exc)

    # -- "working on it" --------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _streaming(self, envelope: Envelope) -> AsyncIterator[StreamSink | None]:
        """The channel's view of the answer while it is written (``courier.stream``), if it has one."""
        if self.caps.stream is None:
            yield None
            return
        async with self.caps.stream.stream(envelope) as sink:
            yield sink

    @contextlib.asynccontextmanager
    async def _working_notice(self, pending: Pending, envelope: Envelope) -> AsyncIterator[None]:
        """While the turn runs: after ``slow_notice_s`` tell the user once that the board is
        working on it. On leaving, a notice not yet due is called off; one being sent is
        awaited, so it never arrives after the answer."""
        delay = self.hub.slow_notice_s
        if delay <= 0:
            yield
            return
        sending = asyncio.Event()
        task = asyncio.create_task(self._notify_after(delay, sending, pending, envelope),
                                   name=f"{self.courier.name} working notice")
        try:
            yield
        finally:
            if not sending.is_set():
                task.cancel()
            await asyncio.wait({task})  # a notice on its way goes out before the answer
            if not task.cancelled() and task.exception() is not None:
                log.warning("%s: the working notice for message %s failed: %s", self.courier.name,
                            pending.message_id, task.exception())

    async def _notify_after(self, delay: float, sending: asyncio.Event, pending: Pending,
                            envelope: Envelope) -> None:
        """Sleep ``delay``, then send the notice (best effort: a failure is logged, not raised)."""
        await asyncio.sleep(delay)
        sending.set()  # past the point of calling it off
        reply = self._system_reply(envelope, self.courier.texts.working, labelled=False)
        notice = self.caps.notice
        progress = SendProgress()
        try:
            if notice is not None:
                handle = await notice.post_notice(reply)
                if handle is not None:
                    self._notices[(pending.chat_id, pending.message_id)] = handle
            else:
                await self.courier.deliver(reply, progress)
        except (SendFailed, sqlite3.Error, StorageError, OSError) as exc:  # best effort: the answer is what counts
            self._said_badly(envelope, progress, exc, reply.text)
        else:
            log.info("%s: told chat %s the board is working on message %s", self.courier.name,
                     envelope.chat_id, pending.message_id)

    # -- fixed lines -----------------------------------------------------------------

    def _system_reply(self, envelope: Envelope, text: str, *, labelled: bool = True) -> Reply:
        """A fixed line from Sabha itself; ``labelled`` heads it ``⚠️ Sabha`` like an answer."""
        name, emoji = ("Sabha", "⚠️") if labelled else ("", "")
        return Reply.to(envelope, role="general", name=name, emoji=emoji, text=text, kind="error")

    def _tell_cannot_save(self, envelope: Envelope) -> None:
        """Say "can't save" once per sender and chat in each outage (after ``storage.failed``)."""
        outage = self.hub.storage.outage
        key = (outage, envelope.chat_id, envelope.sender)
        if key in self._told_cannot_save:
            return
        self._told_cannot_save = {k for k in self._told_cannot_save if k[0] == outage}  # earlier outages
        self._told_cannot_save.add(key)
        self._say(envelope, self.courier.texts.cannot_save)

    def _say(self, envelope: Envelope, text: str) -> None:
        """Send a fixed line in the background (best effort, never stored)."""

        async def send() -> None:
            progress = SendProgress()
            try:
                await self.courier.deliver(self._system_reply(envelope, text, labelled=False), progress)
            except (SendFailed, sqlite3.Error, StorageError, OSError) as exc:  # best effort: the stored message counts
                self._said_badly(envelope, progress, exc, text)
            else:
                log.info("%s: told chat %s: %s", self.courier.name, envelope.chat_id, text)

        task = asyncio.create_task(send(), name=f"{self.courier.name} notice")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _said_badly(self, envelope: Envelope, progress: SendProgress, exc: BaseException, text: str) -> None:
        """Log what became of a fixed line whose delivery raised, as far as it is known."""
        name, chat = self.courier.name, envelope.chat_id
        if progress.posted and is_storage_error(exc):  # it went out; only recording that failed
            log.info("%s: told chat %s: %s (the record of sending it could not be written: %s)", name, chat, text,
                     exc)
        elif progress.posted or (isinstance(exc, SendFailed) and exc.outcome is DeliveryOutcome.MAY_HAVE_ARRIVED):
            log.warning("%s: a fixed line to chat %s may or may not have arrived (not resent): %s", name, chat, exc)
        else:
            log.warning("%s: could not tell chat %s: %s", name, chat, exc)

    # -- restart ---------------------------------------------------------------------

    async def resume(self) -> int:
        """Queue what a crash or a stop left unanswered (call before receiving anything new)."""
        max_age = timedelta(seconds=self.hub.settings.resume_max_age_s)
        lanes = self.hub.lanes
        mine = None
        await self.inbox.fill_lanes(self.courier.conversation)  # before anything reads rows by their lane
        if lanes is not None:
            await lanes.start()  # before any lease is taken: on SQLite the previous run's are taken over
            taken: dict[str, bool] = {}

            async def mine(pending: Pending) -> bool:  # this replica works its conversation (others: theirs)
                lane = pending.lane or self.courier.conversation(pending.envelope)
                if lane not in taken:
                    taken[lane] = await lanes.take(lane)
                return taken[lane]

        todo = await self.inbox.unfinished(max_age, self._may_redo, self._interrupted,
                                           mine=mine, skip=frozenset(self._local), again=self._sent_again,
                                           confirms=self.confirms)
        if lanes is not None:
            await self._dispatching(lanes)
        for pending in todo:
            if not self.courier.admit(pending.envelope).allowed:  # the config may have changed since
                await self.inbox.finish(pending, InboxStatus.DENIED, "the sender is not allowed any more")
                continue
            if not pending.lane:
                pending = replace(pending, lane=self.courier.conversation(pending.envelope))
            self._queue(pending)
        return len(todo)

    async def wind_down(self, grace: float | None, *, owns_hub: bool,
                        alongside: Callable[[float], Awaitable[None]] | None = None) -> None:
        """After the channel stopped receiving: let running answers finish (when the channel
        owns its hub; the daemon drains a shared one), then wait for fixed lines being sent
        and for ``alongside(grace)`` (e.g. a meeting view posting what is left)."""
        grace = self.hub.settings.shutdown_grace_s if grace is None else grace
        if owns_hub:
            await self.hub.drain(grace)
        extra = [alongside(max(0.5, grace))] if alongside is not None else []
        await asyncio.gather(self.settle(), *extra)

    async def settle(self, timeout: float = 2.0) -> None:
        """Wait (bounded) for fixed lines still being sent."""
        if self._background:
            await asyncio.wait(list(self._background), timeout=timeout)

    def status_line(self) -> str:
        """One line for ``/status``."""
        s = self.scheduler
        return (f"  answered {self.answered}, failed {self.failed} ({self.uncertain} may have arrived), denied "
                f"{self.denied}, duplicates {self.inbox.duplicates}; taken up after a restart {self.inbox.resumed}, "
                f"given up {self.inbox.abandoned}; turns running {s.running}/{s.cap}, waiting {s.waiting}")
