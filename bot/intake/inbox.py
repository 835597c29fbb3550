"""The durable inbox: the ``inbound_messages`` rows behind every channel's intake.

A message is stored here (its :class:`board.envelope.Envelope` as JSON) before the
channel tells its service that it arrived; the primary key ``(channel, chat_id,
message_id)`` makes a redelivery a no-op, so a message is answered once (for a channel
whose ids are unique across chats, WhatsApp's, the id alone: ``ids_unique``). A row moves on
as the answer does::

    received   stored; the board has not answered yet
    replied    the board's Reply is stored; nothing of it has left
    sending    the Reply is being delivered: a request may have reached the service
    unconfirmed  its request left and its answer was lost; the channel's service confirms what it
               delivered (WhatsApp's status webhook): :meth:`Inbox.confirm` finishes it, else after
               ``inbox.confirm_within_s`` it is sent once more, marked (:meth:`Inbox.overdue`)
    answered | failed | may_have_arrived | denied | not_text | abandoned      (final)

A crash or a stop leaves rows in the first three states. At the next start
:meth:`Inbox.unfinished` hands back ``received`` rows (the board answers them) and
``replied`` rows (their stored reply is delivered without a new model call) that are
younger than ``inbox.resume_max_age_s`` and were not interrupted :data:`MAX_ATTEMPTS`
times; the rest is logged and marked ``abandoned``, never dropped silently. A ``sending``
row's request had started to leave (the channel marks it as the bytes go, not while the
request waits for a connection), so its reply may or may not have arrived: when the channel
says delivering it again only edits a message that is there already (a streamed answer's
draft on Telegram) it is delivered again; else it is sent once more, headed by the channel's
"possibly repeated" line (``resends`` counts it: never a third copy), so nobody is left
silently unanswered; a second copy is the smaller harm. Of a reply in several messages, ``parts_posted``
counts those that went out whole, in order (:meth:`Inbox.parts_posted` as each one's answer comes back,
:meth:`Inbox.part_confirmed` from the service's status of one): the marked copy starts after them
(:attr:`Pending.posted`). Finished rows older than a week are pruned.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Collection, Container, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from board.envelope import Button, Envelope, Reply
from board.media.attachment import attachment_from_dict, attachment_to_dict
from board.storage import Database, Dialect, Row, Work

__all__ = [
    "MAX_ATTEMPTS",
    "SENT_AGAIN",
    "Arrival",
    "InboundKind",
    "Inbox",
    "InboxStatus",
    "LeaseLost",
    "Pending",
    "envelope_from_json",
    "envelope_to_json",
]

log = logging.getLogger("sabha.inbox")

KEEP = timedelta(days=7)
#: Where a row of :meth:`Inbox.store` keeps its lane: (channel, chat, message, received, envelope, kind, lane[, trace]).
_LANE = 6
_BATCH_ROWS = 500  # rows per statement (7 or 8 parameters each, well under SQLite's limit of 32766)
MAX_ATTEMPTS = 3  # a message whose answering was interrupted this often is given up (it may be the cause)
#: The detail of a row whose reply is sent once more, marked (kept when it is delivered).
SENT_AGAIN = ("sent once more (its first sending may have arrived: Sabha stopped, the connection dropped or the "
              "service never confirmed it), marked as possibly repeated")


#: The advisory lock class of conversations' receipts (PostgreSQL; the second key is the lane's hash).
LANE_LOCKS = 0x5AB1


class LeaseLost(Exception):
    """This replica may no longer answer a message: its conversation's lease passed to another replica (this
    one was cut off longer than ``replicas.lease_s``), or the message was answered meanwhile."""


class InboxStatus(StrEnum):
    """Where a stored message stands (see the module docstring)."""

    RECEIVED = "received"
    REPLIED = "replied"
    SENDING = "sending"
    ANSWERED = "answered"
    FAILED = "failed"
    MAY_HAVE_ARRIVED = "may_have_arrived"
    UNCONFIRMED = "unconfirmed"  # its request left, its answer was lost: the service's confirmation is awaited
    DENIED = "denied"
    NOT_TEXT = "not_text"
    ABANDONED = "abandoned"


UNFINISHED = (InboxStatus.RECEIVED, InboxStatus.REPLIED, InboxStatus.SENDING)


class InboundKind(StrEnum):
    """What a stored message is: text for the board, or something only a fixed line answers."""

    TEXT = "text"
    UNSUPPORTED = "unsupported"  # answered with the channel's "text only" line
    EDITED = "edited"  # an edit of an earlier message: answered with the channel's "edits are not read" line


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp(when: datetime) -> str:
    return when.isoformat(timespec="milliseconds")


_ENVELOPE_FIELDS = tuple(f.name for f in fields(Envelope))


def envelope_to_json(envelope: Envelope) -> str:
    """The envelope as JSON (``received_at`` as ISO 8601). Its fields are plain values, so
    they are read directly (``dataclasses.asdict`` deep-copies each one: most of the cost
    of storing a message)."""
    data: dict[str, Any] = {name: getattr(envelope, name) for name in _ENVELOPE_FIELDS}
    data["received_at"] = envelope.received_at.isoformat()
    if envelope.attachments:
        data["attachments"] = [attachment_to_dict(a) for a in envelope.attachments]
    else:
        del data["attachments"]
    return json.dumps(data, ensure_ascii=False)


def envelope_from_json(text: str) -> Envelope:
    """An envelope stored by :func:`envelope_to_json`; raises ValueError/TypeError/KeyError if unusable."""
    data: dict[str, Any] = json.loads(text)
    known = {f.name for f in fields(Envelope)}
    values = {k: v for k, v in data.items() if k in known}
    if isinstance(values.get("received_at"), str):
        values["received_at"] = datetime.fromisoformat(values["received_at"])
    if "attachments" in values:
        values["attachments"] = tuple(attachment_from_dict(a) for a in values["attachments"])
    return Envelope(**values)


def reply_to_json(reply: Reply) -> str:
    """The reply as JSON."""
    return json.dumps(asdict(reply), ensure_ascii=False)


def reply_from_json(text: str) -> Reply:
    """A reply stored by :func:`reply_to_json`; raises ValueError/TypeError if unusable."""
    data: dict[str, Any] = json.loads(text)
    known = {f.name for f in fields(Reply)}
    values = {k: v for k, v in data.items() if k in known}
    values["buttons"] = tuple(Button(label=b["label"], command=b["command"]) for b in values.get("buttons") or ())
    return Reply(**values)


@dataclass(frozen=True)
class Pending:
    """A stored message still to answer: the board answers ``envelope``, or, when it had
    already answered before a restart, ``reply`` is delivered as it is."""

    channel: str
    lane: str
    envelope: Envelope
    kind: InboundKind = InboundKind.TEXT
    reply: Reply | None = None
    attempts: int = 0
    resends: int = 0  # the reply is a copy sent once more after a restart, marked as possibly repeated
    #: Messages of the (unmarked) reply the service confirmed, in order, before its delivery was cut off: a copy sent
    #: once more starts after them (``parts_posted``, stored as each one's answer came back)
    posted: int = 0
    #: The W3C trace context of the span that received and stored it (tracing on; ``inbound_messages.traceparent``):
    #: its answer's span is that span's child. None: tracing was off then, or it was stored before the column.
    traceparent: str | None = None

    @property
    def chat_id(self) -> str:
        """The chat the message came from."""
        return self.envelope.chat_id

    @property
    def message_id(self) -> str:
        """The channel's id of the message."""
        return self.envelope.message_id or ""

    def with_reply(self, reply: Reply) -> Pending:
        """This message with the board's answer attached."""
        return replace(self, reply=reply)


@dataclass(frozen=True)
class Arrival:
    """A message to store: its envelope, kind and lane (and, while tracing is on, the trace context it arrived in)."""

    envelope: Envelope
    lane: str
    kind: InboundKind = InboundKind.TEXT
    traceparent: str | None = None


class Inbox:
    """The durable inbox of one channel; see the module docstring."""

    def __init__(self, db: Database, channel: str, *, ids_unique: bool = False) -> None:
        self.db = db
        self.channel = channel
        # The channel's message ids are unique across its chats (WhatsApp's wamids): a
        # redelivery is recognised by its id alone, even when the chat it is filed under
        # changed since (one WhatsApp person found under two ids and merged).
        self.ids_unique = ids_unique
        self.duplicates = 0
        self.resumed = 0
        self.abandoned = 0
        #: Replicas (PostgreSQL): ``fence()`` gives (this replica's name, now in epoch seconds); storing an answer
        #: and marking it "sending" then happen only while this replica holds the conversation's lease
        #: (:meth:`replied`, :meth:`sending`). None (SQLite, one process): no check.
        self.fence: Callable[[], tuple[str, float]] | None = None

    async def store(self, arrivals: Sequence[Arrival]) -> list[Pending]:
        """Store ``arrivals`` in one transaction; returns the ones seen for the first time
        (a redelivery is skipped). Raises the storage error (nothing stored) when the db
        cannot be written. It is an urgent unit of work (:meth:`board.storage.Database.unit`; on SQLite one step
        on the express connection), so it does not wait behind the board's statements. It takes a handful of statements
        whatever the batch size: each statement lets go of the GIL and must win it back
        from a busy event loop (up to 5 ms each), so one INSERT per message made a burst's
        acknowledgements wait ~50 ms for their batch."""
        received = _stamp(_now())
        keys = [(a.envelope.chat_id, a.envelope.message_id or "") for a in arrivals]
        rows: dict[tuple[str, str], tuple[str | None, ...]] = {}
        traced = any(a.traceparent for a in arrivals)  # tracing off: the column is not written (NULL)
        for key, a in zip(keys, arrivals, strict=True):
            if key not in rows:  # a message twice in one batch: the first is stored, the second skipped
                rows[key] = (self.channel, *key, received, envelope_to_json(a.envelope), a.kind.value, a.lane,
                             *((a.traceparent,) if traced else ()))

        # An urgent unit of work (on SQLite one step on the express connection, ahead of the units queued there).
        stored = await self.db.unit(self._claim(list(rows), rows), urgent=True)
        fresh: list[Pending] = []
        seen: set[tuple[str, str]] = set()
        for key, arrival in zip(keys, arrivals, strict=True):
            envelope = arrival.envelope
            if key in stored or key in seen:
                self.duplicates += 1
                log.info("%s: message %s in chat %s was delivered again; already stored, skipping",
                         self.channel, envelope.message_id, envelope.chat_id)
                continue
            seen.add(key)
            fresh.append(Pending(self.channel, arrival.lane, envelope, arrival.kind, traceparent=arrival.traceparent))
        return fresh

    def _claim(self, new: list[tuple[str, str]],
               rows: dict[tuple[str, str], tuple[str | None, ...]]) -> Work[set[tuple[str, str]]]:
        """The statements of :meth:`store`, one at a time (each gets its rows back): which of ``new`` were
        stored already (by message id alone when ``ids_unique``), then the rest inserted; a redelivery (same
        key) is not inserted and not returned, so one statement stores and dedupes. Returns the keys that
        were stored already."""
        lanes = sorted({str(row[_LANE]) for row in rows.values() if row[_LANE]})  # not row[-1]: traced, a traceparent
        if lanes and self.db.dialect is Dialect.POSTGRES:
            # Replicas: a conversation's rows are numbered (seq) as they are inserted, but seen by others when
            # committed. Holding its lock until this commit makes the two orders the same: another replica
            # storing the next message of it waits for this one (sorted: no deadlock).
            yield ("SELECT pg_advisory_xact_lock(?, hashtext(lane)) FROM (SELECT lane FROM "
                   "unnest(CAST(? AS TEXT[])) AS lane ORDER BY lane) AS ordered",
                   [LANE_LOCKS, [f"{self.channel}:{lane}" for lane in lanes]])
        known: set[str] = set()
        if self.ids_unique:
            for start in range(0, len(new), _BATCH_ROWS):
                chunk = new[start:start + _BATCH_ROWS]
                marks = ", ".join("?" for _ in chunk)
                found = yield (f"SELECT message_id FROM inbound_messages WHERE channel = ? AND message_id IN "
                               f"({marks})", [self.channel, *(message for _, message in chunk)])
                known.update(str(r["message_id"]) for r in found)
        fresh_rows = [rows[key] for key in new if key[1] not in known]
        inserted: set[tuple[str, str]] = set()
        traced = bool(fresh_rows) and len(fresh_rows[0]) > 7  # each row carries its traceparent (tracing on)
        columns, marks = (", traceparent", ", ?") if traced else ("", "")
        for start in range(0, len(fresh_rows), _BATCH_ROWS):
            chunk_rows = fresh_rows[start:start + _BATCH_ROWS]
            values = ", ".join(f"(?, ?, ?, ?, 'received', ?, 0, ?, ?{marks})" for _ in chunk_rows)
            found = yield ("INSERT INTO inbound_messages(channel, chat_id, message_id, received_at, status, "
                           f"envelope, attempts, kind, lane{columns}) VALUES {values} "
                           "ON CONFLICT (channel, chat_id, message_id) DO NOTHING RETURNING chat_id, message_id",
                           [v for row in chunk_rows for v in row])
            inserted.update((str(r["chat_id"]), str(r["message_id"])) for r in found)
        return {key for key in new if key not in inserted}

    async def _update(self, pending: Pending, sql: str, params: tuple[Any, ...] = ()) -> None:
        await self.db.execute(
            f"UPDATE inbound_messages SET {sql} WHERE channel = ? AND chat_id = ? AND message_id = ?",
            (*params, self.channel, pending.chat_id, pending.message_id),
        )

    async def started(self, pending: Pending) -> None:
        """Answering ``pending`` starts (counted: a message that keeps crashing Sabha is given up)."""
        await self._update(pending, "attempts = attempts + 1")

    async def handed_over(self, pending: Pending) -> None:
        """This replica's turn on ``pending`` ended because it lost the conversation's lease (the holder answers
        it): take back the attempt :meth:`started` counted, while it is still unanswered. A hand-over is not an
        interruption; counted, a message handed over a few times under stalls was given up unanswered."""
        await self.db.execute(
            "UPDATE inbound_messages SET attempts = attempts - 1 WHERE channel = ? AND chat_id = ? AND message_id = ? "
            "AND status = ? AND attempts > 0", (self.channel, pending.chat_id, pending.message_id,
                                                InboxStatus.RECEIVED.value))

    async def delivery_broke(self, pending: Pending) -> int:
        """Delivering the stored reply raised (not a refused send): counted like an interrupted turn. Returns
        the attempts so far (at :data:`MAX_ATTEMPTS` the caller gives the message up)."""
        row = await self.db.fetchone(
            "UPDATE inbound_messages SET attempts = attempts + 1 WHERE channel = ? AND chat_id = ? AND message_id = ? "
            "RETURNING attempts", (self.channel, pending.chat_id, pending.message_id))
        return MAX_ATTEMPTS if row is None else int(row["attempts"])

    async def replied(self, pending: Pending, reply: Reply) -> None:
        """The board answered with ``reply``; nothing of it has left yet. With a :attr:`fence` (replicas) only
        while this replica holds the conversation and the message is still unanswered: else
        :class:`LeaseLost` (the conversation's new holder answers it; this late answer is dropped)."""
        await self._fenced(pending, "status = 'replied', reply = ?", (reply_to_json(reply),),
                           (InboxStatus.RECEIVED,), "store its answer")

    async def sending(self, pending: Pending) -> None:
        """Delivery of the stored reply starts now: from here it may arrive. With a :attr:`fence`, only the
        replica holding the conversation marks it (a ``replied`` row, or a ``sending`` one its channel may send
        again, :meth:`unfinished`'s ``redo``): else :class:`LeaseLost`, raised before any request leaves."""
        await self._fenced(pending, "status = 'sending'", (), (InboxStatus.REPLIED, InboxStatus.SENDING),
                           "send its answer")

    async def _fenced(self, pending: Pending, sql: str, params: tuple[Any, ...], expected: tuple[InboxStatus, ...],
                      doing: str) -> None:
        if self.fence is None:
            await self._update(pending, sql, params)
            return
        holder, now = self.fence()
        found = await self.db.fetchall(
            f"UPDATE inbound_messages SET {sql} WHERE channel = ? AND chat_id = ? AND message_id = ? "
            f"AND status IN ({', '.join('?' for _ in expected)}) "
            "AND EXISTS (SELECT 1 FROM leases WHERE key = ? AND holder = ? AND expires_at > ?) RETURNING status",
            (*params, self.channel, pending.chat_id, pending.message_id, *(e.value for e in expected),
             f"lane:{pending.lane}", holder, now))
        if not found:
            raise LeaseLost(f"{self.channel} message {pending.message_id} in chat {pending.chat_id}: this replica "
                            f"({holder}) no longer holds its conversation, or it was answered meanwhile; not "
                            f"going to {doing} (the conversation's holder answers it)")

    async def unsent(self, pending: Pending) -> None:
        """Delivery stopped before any request left: deliver the stored reply at the next start. Only a row still
        'sending' this very copy moves (``resends``): not one confirmed, or sent once more, meanwhile."""
        await self._moved_on(pending, "status = 'replied'", (), (InboxStatus.SENDING,), say=False)

    async def finish(self, pending: Pending, status: InboxStatus, detail: str | None = None) -> None:
        """Record how a message ended: only while it is unfinished and its row is still about this copy of the
        reply (``resends``). A late outcome of a first send does not overwrite a confirmation (a status webhook
        that beat the send's answer) nor the marked copy another replica queued meanwhile."""
        await self._moved_on(pending, "status = ?, answered_at = ?, detail = ?",
                             (status.value, _stamp(_now()), detail), (*UNFINISHED, InboxStatus.UNCONFIRMED))

    async def _moved_on(self, pending: Pending, sql: str, params: tuple[Any, ...],
                        expected: tuple[InboxStatus, ...], *, say: bool = True) -> bool:
        """``sql`` applied to ``pending``'s row only when its status is one of ``expected`` and its ``resends`` is
        ``pending``'s; False (logged when ``say``) when the row had moved on."""
        row = await self.db.fetchone(
            f"UPDATE inbound_messages SET {sql} WHERE channel = ? AND chat_id = ? AND message_id = ? "
            f"AND status IN ({', '.join('?' for _ in expected)}) AND resends = ? RETURNING status",
            (*params, self.channel, pending.chat_id, pending.message_id, *(e.value for e in expected),
             pending.resends))
        if row is None and say:
            log.info("%s: message %s in chat %s had moved on meanwhile (confirmed, or its reply sent once more); "
                     "leaving it as it is", self.channel, pending.message_id, pending.chat_id)
        return row is not None

    async def status(self, chat_id: str, message_id: str) -> str | None:
        """Where a message stands (None: never stored)."""
        row = await self.db.fetchone(
            "SELECT status FROM inbound_messages WHERE channel = ? AND chat_id = ? AND message_id = ?",
            (self.channel, chat_id, message_id),
        )
        return None if row is None else str(row["status"])

    async def count_unfinished(self) -> int:
        """Messages stored and not answered yet (a reply waiting for the service's confirmation included)."""
        waiting = (*UNFINISHED, InboxStatus.UNCONFIRMED)
        row = await self.db.fetchone(
            f"SELECT COUNT(*) AS n FROM inbound_messages WHERE channel = ? AND status IN "
            f"({', '.join('?' * len(waiting))})", (self.channel, *waiting))
        return int(row["n"]) if row is not None else 0

    async def unfinished(self, max_age: timedelta, redo: Callable[[Reply], Awaitable[bool]] | None = None,
                         gave_up: Callable[[Pending], Awaitable[None]] | None = None, *,
                         mine: Callable[[Pending], Awaitable[bool]] | None = None,
                         lanes: Collection[str] | None = None, skip: Container[tuple[str, str]] = frozenset(),
                         after_restart: bool = True, again: Callable[[Reply], Reply] | None = None,
                         confirms: bool = False) -> list[Pending]:
        """Messages stored and never answered, in order of arrival, to take up (after a restart, or left by a
        replica that stopped); the ones that may not be taken up are logged and marked abandoned. A reply
        that was being sent is taken up again only when ``redo`` says sending it again cannot
        post it twice (the channel edits a message already there: a streamed draft). ``gave_up``
        hears of each message abandoned (not of a reply that may have arrived). Else such a reply is sent once
        more as ``again(reply)`` makes it (the channel's "possibly repeated" copy), once only; when the channel
        ``confirms`` what it delivered, it waits for that confirmation first (``unconfirmed``).

        With replicas: only rows in ``lanes`` (None: all), not in ``skip`` (``(chat_id, message_id)`` being
        answered here already), and of which ``mine(pending)`` says this replica works its conversation (it
        holds or took its lease) are looked at; the rest is left alone, untouched, for the replica that has it.
        """
        rows = await self._unfinished_rows(lanes)
        now = _now()
        todo: list[Pending] = []
        for row in rows:
            if (str(row["chat_id"]), str(row["message_id"])) in skip:
                continue
            pending, unreadable, why = self._pending_of(row, now, max_age)
            if mine is not None and not await mine(pending):
                continue
            status = str(row["status"])
            may_have_arrived = False
            if unreadable is not None:
                why = unreadable
            elif why is None and status == InboxStatus.SENDING and not (
                    pending.reply is not None and redo is not None and await redo(pending.reply)):
                # too old or interrupted too often (``why``): given up like any other row, the user told
                handled, why = await self._left_sending(pending, again, confirms, todo)
                if handled:
                    continue
                may_have_arrived = True
            if why is not None:
                await self._give_up(pending, row, why, may_have_arrived, gave_up)
                continue
            todo.append(pending)
        if after_restart:
            self.resumed += len(todo)
            if todo:
                log.info("%s: taking up %d message(s) received before the restart and not answered yet",
                         self.channel, len(todo))
        return todo

    async def _left_sending(self, pending: Pending, again: Callable[[Reply], Reply] | None, confirms: bool,
                            todo: list[Pending]) -> tuple[bool, str | None]:
        """A reply whose request had left when Sabha stopped: wait for the service's confirmation (``confirms``),
        or send it once more as ``again`` makes it (added to ``todo``). (True, None): so handled; (False, why):
        it may not be sent again (no way to mark it, or it was the marked copy already)."""
        if pending.reply is not None and confirms and pending.resends == 0:
            await self.unconfirmed(pending)  # the service's status webhook says whether it arrived
            log.warning("%s: message %s in chat %s: its reply was being sent when Sabha stopped; waiting for "
                        "the service to confirm it arrived, else it is sent once more", self.channel,
                        pending.message_id, pending.chat_id)
            return True, None
        if pending.reply is not None and again is not None and pending.resends == 0:
            marked = await self.send_again(pending, again(pending.reply), "was being sent when Sabha stopped")
            if marked is not None:
                todo.append(marked)
            return True, None
        return False, ("its reply was being sent when Sabha stopped and may have arrived; not sending it again, "
                       "since that could post it twice" if pending.resends == 0 else
                       "its reply, sent once more after an earlier stop, was being sent when Sabha stopped and may "
                       "have arrived; not sending a third copy")

    async def _give_up(self, pending: Pending, row: Row, why: str, may_have_arrived: bool,
                       gave_up: Callable[[Pending], Awaitable[None]] | None) -> None:
        """A row :meth:`unfinished` may not take up: finished (``may_have_arrived``, else abandoned and
        ``gave_up`` told) and logged with ``why``."""
        status_after = InboxStatus.MAY_HAVE_ARRIVED if may_have_arrived else InboxStatus.ABANDONED
        await self.finish(pending, status_after, why)
        self.abandoned += 1
        if gave_up is not None and status_after is InboxStatus.ABANDONED:
            await gave_up(pending)
        envelope = pending.envelope if row["envelope"] else None
        log.warning("%s: message %s in chat %s (%s) was received but not answered; not answering it: %s",
                    self.channel, pending.message_id, pending.chat_id, _preview(envelope), why)

    async def send_again(self, pending: Pending, marked: Reply, why: str) -> Pending | None:
        """A reply whose request had left when its answer was lost (``why``: Sabha stopped, the connection
        dropped) goes once more, as ``marked``: stored (``replied``, its ``resends`` counted) before it is
        delivered. None: it was sent once more already, or the row moved on meanwhile (another replica)."""
        row = await self.db.fetchone(
            "UPDATE inbound_messages SET status = 'replied', reply = ?, resends = resends + 1, detail = ? "
            "WHERE channel = ? AND chat_id = ? AND message_id = ? AND status IN ('sending', 'unconfirmed') "
            "AND resends = 0 "
            "RETURNING message_id", (reply_to_json(marked), SENT_AGAIN, self.channel, pending.chat_id,
                                     pending.message_id))
        if row is None:
            return None
        log.warning("%s: message %s in chat %s: its reply %s and may or may not have arrived (its request had "
                    "left); sending it once more, marked as possibly repeated", self.channel, pending.message_id,
                    pending.chat_id, why)
        return replace(pending, reply=marked, resends=pending.resends + 1)

    async def parts_posted(self, pending: Pending, parts: int) -> None:
        """The first ``parts`` messages of ``pending``'s reply are posted (the service answered for each; more
        follow): a copy sent once more after a stop starts after them. Only while this very copy is 'sending'
        (not a marked copy: it is never sent a third time)."""
        await self.db.execute(
            "UPDATE inbound_messages SET parts_posted = ? WHERE channel = ? AND chat_id = ? AND message_id = ? "
            "AND status = ? AND resends = 0 AND parts_posted < ?",
            (parts, self.channel, pending.chat_id, pending.message_id, InboxStatus.SENDING.value, parts))

    async def part_confirmed(self, message_id: str, part: int) -> bool:
        """The service confirmed message ``part`` of the reply to ``message_id`` (its status webhook): that part
        arrived, and the ones before it (they are sent in order, each after the service took the one before). False
        when nothing waited for it (answered already, a marked copy on its way, or it knew as much already)."""
        row = await self.db.fetchone(
            "UPDATE inbound_messages SET parts_posted = ? WHERE channel = ? AND message_id = ? AND status IN "
            "('sending', 'unconfirmed') AND resends = 0 AND parts_posted < ? RETURNING chat_id",
            (part, self.channel, message_id, part))
        return row is not None

    async def unconfirmed(self, pending: Pending) -> bool:
        """``pending``'s reply may have arrived: wait for the service to confirm it (from now on). False: the row
        was no longer 'sending' (the service confirmed it before the send's answer was lost)."""
        return await self._moved_on(pending, "status = ?, unconfirmed_at = ?", (InboxStatus.UNCONFIRMED.value,
                                                                        _stamp(_now())), (InboxStatus.SENDING,))

    async def confirm(self, message_id: str, how: str) -> bool:
        """The service confirmed the reply to ``message_id`` (``how``: its status): answered, not sent again.
        False when nothing waited for it (answered already, or a marked copy is on its way)."""
        row = await self.db.fetchone(
            "UPDATE inbound_messages SET status = 'answered', answered_at = ?, detail = ? WHERE channel = ? AND "
            "message_id = ? AND status IN ('sending', 'unconfirmed') AND resends = 0 RETURNING chat_id",
            (_stamp(_now()), f"confirmed by the service ({how})", self.channel, message_id))
        return row is not None

    async def overdue(self, within: timedelta, *, holder: str | None = None, now_s: float | None = None,
                      max_age: timedelta | None = None) -> list[Pending]:
        """Replies that waited longer than ``within`` for a confirmation that never came. With ``holder`` (replicas)
        only those of conversations it holds or nobody holds (their lease gone by ``now_s``, epoch seconds): the
        rest is left to the replica that works them. One whose stored copy cannot be read is given up (abandoned,
        logged), not skipped for ever; one received longer than ``max_age`` ago is not sent again days late
        (may have arrived, logged)."""
        sql = ("SELECT m.chat_id AS chat_id, m.message_id AS message_id, m.received_at AS received_at, m.status AS "
               "status, m.envelope AS envelope, m.reply AS reply, m.attempts AS attempts, m.kind AS kind, m.lane AS "
               "lane, m.resends AS resends, m.parts_posted AS parts_posted, m.traceparent AS traceparent FROM "
               "inbound_messages m ")
        params: list[Any] = []
        if holder is not None:
            sql += "LEFT JOIN leases l ON l.key = 'lane:' || m.lane "
        sql += "WHERE m.channel = ? AND m.status = ? AND m.unconfirmed_at < ?"
        params += [self.channel, InboxStatus.UNCONFIRMED.value, _stamp(_now() - within)]
        if holder is not None:
            sql += " AND (l.key IS NULL OR l.holder = ? OR l.expires_at < ?)"
            params += [holder, now_s if now_s is not None else _now().timestamp()]
        found = []
        for row in await self.db.fetchall(sql, params):
            pending, unreadable, why = self._pending_of(row, _now(), max_age or timedelta(days=3650))
            if unreadable is None and pending.reply is None:
                unreadable = "its stored reply is missing"
            if unreadable is not None or why is not None:  # too old: its request had left, so it may have arrived
                await self._give_up(pending, row, unreadable or why or "", unreadable is None, None)
                continue
            found.append(pending)
        return found

    async def fill_lanes(self, conversation: Callable[[Envelope], str]) -> int:
        """Give each unfinished message stored without a lane (before migration 0300 added lanes; carried over
        by ``sabha state copy``) the lane ``conversation`` names for it, so that every replica's in-order check
        and dispatcher see it. A row without a stored copy keeps none (it is given up when taken up). Returns
        how many rows got a lane."""
        marks = ", ".join("?" * len(UNFINISHED))
        rows = await self.db.fetchall(
            f"SELECT chat_id, message_id, envelope FROM inbound_messages WHERE channel = ? AND status IN ({marks}) "
            "AND (lane IS NULL OR lane = '') AND envelope IS NOT NULL", [self.channel, *UNFINISHED])
        filled = 0
        for row in rows:
            try:
                lane = conversation(envelope_from_json(row["envelope"]))
            except (ValueError, TypeError, KeyError):
                continue  # unreadable: unfinished() gives it up and says why
            await self.db.execute(
                "UPDATE inbound_messages SET lane = ? WHERE channel = ? AND chat_id = ? AND message_id = ? "
                "AND (lane IS NULL OR lane = '')", (lane, self.channel, str(row["chat_id"]), str(row["message_id"])))
            filled += 1
        if filled:
            log.info("%s: %d unanswered message(s) stored before conversations had lanes were given theirs",
                     self.channel, filled)
        return filled

    async def lane_order(self, lane: str) -> list[tuple[str, str]]:
        """``(chat_id, message_id)`` of the unfinished messages of ``lane``, in the order they were stored."""
        marks = ", ".join("?" * len(UNFINISHED))
        order = "seq" if self.db.dialect is Dialect.POSTGRES else "rowid"
        rows = await self.db.fetchall(
            f"SELECT chat_id, message_id FROM inbound_messages WHERE channel = ? AND status IN ({marks}) "
            f"AND lane = ? ORDER BY {order}", [self.channel, *UNFINISHED, lane])
        return [(str(r["chat_id"]), str(r["message_id"])) for r in rows]

    async def _unfinished_rows(self, lanes: Collection[str] | None) -> list[Row]:
        marks = ", ".join("?" * len(UNFINISHED))
        where, params = f"channel = ? AND status IN ({marks})", [self.channel, *UNFINISHED]
        if lanes is not None:
            if not lanes:
                return []
            where += f" AND lane IN ({', '.join('?' * len(lanes))})"
            params.extend(lanes)
        order = "seq" if self.db.dialect is Dialect.POSTGRES else "rowid"  # the order they were stored in
        return await self.db.fetchall(
            "SELECT chat_id, message_id, received_at, status, envelope, reply, attempts, kind, lane, resends, "
            f"parts_posted, traceparent FROM inbound_messages WHERE {where} ORDER BY {order}", params)

    def _pending_of(self, row: Row, now: datetime, max_age: timedelta) -> tuple[Pending, str | None, str | None]:
        """A stored row as a :class:`Pending`; why its copy cannot be read; why else it may not be taken up
        (None: it may, as far as the row says)."""
        status = str(row["status"])
        received = _parse_time(row["received_at"])
        attempts = int(row["attempts"] or 0)
        envelope: Envelope | None = None
        reply: Reply | None = None
        kind = InboundKind.TEXT
        why = unreadable = None
        try:
            envelope = envelope_from_json(row["envelope"]) if row["envelope"] else None
            reply = reply_from_json(row["reply"]) if row["reply"] and status in (
                InboxStatus.REPLIED, InboxStatus.SENDING, InboxStatus.UNCONFIRMED) else None
            kind = InboundKind(row["kind"] or InboundKind.TEXT)
        except (ValueError, TypeError, KeyError) as exc:
            unreadable = f"its stored copy cannot be read ({exc})"
        age = now - received if received is not None else None
        if envelope is None:
            why = "no copy of it was kept (received before Sabha kept copies)"
        elif age is None or age > max_age:
            why = (f"it was received {_ago(age)} ago, longer than the {_ago(max_age)} Sabha answers after a "
                   "restart (inbox.resume_max_age_s)")
        elif attempts >= MAX_ATTEMPTS:
            why = f"answering it was interrupted {attempts} times; giving up on it"
        stand_in = Envelope(channel=self.channel, text="", sender="", chat_id=str(row["chat_id"]),
                            message_id=str(row["message_id"]))
        pending = Pending(self.channel, str(row["lane"] or ""), envelope or stand_in, kind, reply, attempts,
                          int(row["resends"] or 0), int(row["parts_posted"] or 0), row["traceparent"] or None)
        return pending, unreadable, why

    async def prune(self, keep: timedelta = KEEP) -> None:
        """Forget finished rows older than ``keep`` (services redeliver for a day or so);
        unfinished ones stay until :meth:`unfinished` has logged them."""
        cutoff = _stamp(_now() - keep)
        await self.db.execute(
            "DELETE FROM inbound_messages WHERE channel = ? AND received_at < ? "
            f"AND status NOT IN ({', '.join('?' * len(UNFINISHED))})", (self.channel, cutoff, *UNFINISHED)
        )


def _parse_time(value: Any) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _ago(delta: timedelta | None) -> str:
    if delta is None:
        return "an unknown time"
    seconds = int(delta.total_seconds())
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds // 60} min"
    return f"{seconds} s"


def _preview(envelope: Envelope | None) -> str:
    if envelope is None:
        return "no text kept"
    text = " ".join(envelope.text.split())
    return repr(text if len(text) <= 60 else text[:59] + "…")
