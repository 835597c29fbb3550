"""The durable inbox: every inbound message is answered once, even across redeliveries and restarts.

Telegram redelivers updates that were not confirmed before a restart (and a webhook may
retry); WhatsApp retries webhooks. Each channel claims ``(channel, chat_id, message_id)``
in the ``inbound_messages`` table of the state db before answering; a second claim of
the same id fails and the duplicate is skipped, so a redelivered update is never
answered twice.

The claim also stores the :class:`board.envelope.Envelope` (as JSON), and a row moves on as
the answer does::

    received   claimed; the board has not answered yet
    replied    the board's Reply is stored; nothing of it has reached Telegram
    sending    the Reply is being delivered: a request may have reached the channel
    answered | failed | denied | not_text | abandoned      (final)

A crash, or a shutdown whose drain ran out, leaves rows in the first three states. At
the next start :meth:`Inbox.resume` hands back the ``received`` ones (the board answers
them again) and the ``replied`` ones (their stored reply is delivered without a new model
call), if they are younger than the channel's ``resume_max_age_s`` (default an hour) and
were not already interrupted :data:`MAX_ATTEMPTS` times. Everything else is logged and
marked ``abandoned``, never dropped silently: older messages, rows stored without an
envelope (a non-text message, or one received before this table kept envelopes), and
``sending`` rows, whose reply may already have been posted (answering again could post
it twice). Finished rows older than a week are pruned at start.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime, timedelta
from typing import Any

from board.db import StateDB
from board.envelope import Envelope, Reply

log = logging.getLogger("sabha.inbox")

KEEP = timedelta(days=7)
RESUME_MAX_AGE = timedelta(hours=1)
MAX_ATTEMPTS = 3  # a message whose answering was interrupted this often is given up (it may be the cause)
UNFINISHED = ("received", "replied", "sending")


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp(when: datetime) -> str:
    return when.isoformat(timespec="seconds")


def envelope_to_json(envelope: Envelope) -> str:
    """The envelope as JSON (``received_at`` as ISO 8601)."""
    data = asdict(envelope)
    data["received_at"] = envelope.received_at.isoformat()
    return json.dumps(data, ensure_ascii=False)


def envelope_from_json(text: str) -> Envelope:
    """An envelope stored by :func:`envelope_to_json`; raises ValueError/TypeError/KeyError if unusable."""
    data: dict[str, Any] = json.loads(text)
    known = {f.name for f in fields(Envelope)}
    values = {k: v for k, v in data.items() if k in known}
    if isinstance(values.get("received_at"), str):
        values["received_at"] = datetime.fromisoformat(values["received_at"])
    return Envelope(**values)


def reply_to_json(reply: Reply) -> str:
    """The reply as JSON."""
    return json.dumps(asdict(reply), ensure_ascii=False)


def reply_from_json(text: str) -> Reply:
    """A reply stored by :func:`reply_to_json`; raises ValueError/TypeError if unusable."""
    data: dict[str, Any] = json.loads(text)
    known = {f.name for f in fields(Reply)}
    return Reply(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class Unfinished:
    """A claimed message to take up again after a restart: answer ``envelope`` or, when the
    board had already answered, deliver ``reply``."""

    chat_id: str
    message_id: str
    envelope: Envelope
    reply: Reply | None
    received_at: datetime
    attempts: int


class Inbox:
    """The durable inbox of one channel; see the module docstring."""

    def __init__(self, db: StateDB, channel: str) -> None:
        self.db = db
        self.channel = channel
        self.duplicates = 0
        self.resumed = 0
        self.abandoned = 0

    async def claim(self, chat_id: str, message_id: str, envelope: Envelope | None = None) -> bool:
        """True the first time a message is seen; False for a redelivery (skip it).

        Pass the ``envelope`` to make the message resumable after a crash.
        """
        cursor = await self.db.conn.execute(
            "INSERT OR IGNORE INTO inbound_messages(channel, chat_id, message_id, received_at, status, envelope, "
            "attempts) VALUES (?, ?, ?, ?, 'received', ?, 1)",
            (self.channel, chat_id, message_id, _stamp(_now()),
             envelope_to_json(envelope) if envelope is not None else None),
        )
        fresh = cursor.rowcount > 0
        await cursor.close()
        await self.db.conn.commit()
        if not fresh:
            self.duplicates += 1
            log.info("%s: message %s in chat %s was delivered again; already handled, skipping",
                     self.channel, message_id, chat_id)
        return fresh

    async def sending(self, chat_id: str, message_id: str, reply: Reply) -> None:
        """The board answered with ``reply`` and its delivery starts now."""
        await self.db.execute(
            "UPDATE inbound_messages SET status = 'sending', reply = ? WHERE channel = ? AND chat_id = ? "
            "AND message_id = ?",
            (reply_to_json(reply), self.channel, chat_id, message_id),
        )

    async def unsent(self, chat_id: str, message_id: str) -> None:
        """Delivery stopped before any request left: deliver the stored reply at the next start."""
        await self.db.execute(
            "UPDATE inbound_messages SET status = 'replied' WHERE channel = ? AND chat_id = ? AND message_id = ? "
            "AND status = 'sending'",
            (self.channel, chat_id, message_id),
        )

    async def done(self, chat_id: str, message_id: str, status: str = "answered") -> None:
        """Record how a claimed message ended (answered, denied, failed, not_text, abandoned)."""
        await self.db.execute(
            "UPDATE inbound_messages SET status = ?, answered_at = ? WHERE channel = ? AND chat_id = ? "
            "AND message_id = ?",
            (status, _stamp(_now()), self.channel, chat_id, message_id),
        )

    async def status(self, chat_id: str, message_id: str) -> str | None:
        """Where a message stands (None: never claimed)."""
        row = await self.db.fetchone(
            "SELECT status FROM inbound_messages WHERE channel = ? AND chat_id = ? AND message_id = ?",
            (self.channel, chat_id, message_id),
        )
        return None if row is None else str(row["status"])

    async def resume(self, max_age: timedelta = RESUME_MAX_AGE) -> list[Unfinished]:
        """Messages claimed before a restart and never answered, oldest first, to take up
        again; the ones that may not be taken up are logged and marked abandoned."""
        rows = await self.db.fetchall(
            "SELECT chat_id, message_id, received_at, status, envelope, reply, attempts FROM inbound_messages "
            f"WHERE channel = ? AND status IN ({', '.join('?' * len(UNFINISHED))}) "
            "ORDER BY received_at, CAST(message_id AS INTEGER)",
            (self.channel, *UNFINISHED),
        )
        now = _now()
        todo: list[Unfinished] = []
        for row in rows:
            chat_id, message_id, status = str(row["chat_id"]), str(row["message_id"]), str(row["status"])
            received = _parse_time(row["received_at"])
            attempts = int(row["attempts"] or 0)
            envelope: Envelope | None = None
            reply: Reply | None = None
            why = None
            try:
                envelope = envelope_from_json(row["envelope"]) if row["envelope"] else None
                reply = reply_from_json(row["reply"]) if row["reply"] and status == "replied" else None
            except (ValueError, TypeError, KeyError) as exc:
                why = f"its stored copy cannot be read ({exc})"
            age = now - received if received is not None else None
            if why is not None:
                pass
            elif status == "sending":
                why = ("its reply was being sent when Sabha stopped and may have been posted; not sending it again, "
                       "since that could post it twice")
            elif envelope is None:
                why = "no copy of it was kept (not a text message, or received before Sabha kept copies)"
            elif age is None or age > max_age:
                why = (f"it was received {_ago(age)} ago, longer than the {_ago(max_age)} Sabha answers after a "
                       "restart (telegram.resume_max_age_s)")
            elif attempts >= MAX_ATTEMPTS:
                why = f"answering it was interrupted {attempts} times; giving up on it"
            if why is not None:
                await self.done(chat_id, message_id, "abandoned")
                self.abandoned += 1
                log.warning("%s: message %s in chat %s (%s) was received but never answered; not answering it: %s",
                            self.channel, message_id, chat_id, _preview(envelope), why)
                continue
            assert envelope is not None and received is not None
            await self.db.execute(
                "UPDATE inbound_messages SET attempts = attempts + 1 WHERE channel = ? AND chat_id = ? "
                "AND message_id = ?", (self.channel, chat_id, message_id),
            )
            todo.append(Unfinished(chat_id, message_id, envelope, reply, received, attempts + 1))
        self.resumed += len(todo)
        if todo:
            log.info("%s: taking up %d message(s) received before the restart and not answered yet",
                     self.channel, len(todo))
        return todo

    async def prune(self, keep: timedelta = KEEP) -> None:
        """Forget finished ids older than ``keep`` (Telegram redelivers for at most a day);
        unfinished ones stay until :meth:`resume` has logged them."""
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
