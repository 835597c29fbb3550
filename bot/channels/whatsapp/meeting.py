"""Board meetings called from WhatsApp: each round in one message, then the decision, then the minutes.

:class:`MeetingRelay` subscribes to the board's meeting events and, for meetings whose origin is a WhatsApp user,
sends the same sequence the other places show, in as few messages as WhatsApp's limits allow: each round's
statements together in one message when the round is done (``*Round 2* ...``, each statement under its speaker's
name, in speaking order; a round over the 4096-character body limit is split between statements, and only a
statement longer than the limit by itself is cut, at paragraphs and sentences: :func:`round_messages`); then the
concise decision (recommendation, dissent, owned action items) when it is taken; then the minutes packed into as
few 4096 character messages as they fit. Statements of a round a meeting ends inside (a deadline, a budget) go out
before its decision. Sends are queued and made by one worker, so a slow or rate-limited Graph API never slows the
meeting. The decision carries the reply buttons Ratify / Veto / Revisit
(:func:`board.commands.decisions.decision_buttons`) under its last part (:func:`.format.with_buttons`); a press is
the owner sending ``/ratify <id>``.

What is sent is recorded (:mod:`bot.channels.meeting_posts`: each round's, the decision's and the minutes' messages,
``sending`` as the request leaves, ``sent`` once Meta took it), so a meeting that goes on after a restart (a
``resumed`` event) is caught up from its record: each finished round not sent yet is sent, the round it resumes in
is completed with the statements stored before the stop, and nothing sent is sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from board.commands.decisions import decision_buttons
from board.envelope import Button
from board.room.meeting import MeetingEvent, MeetingEventKind
from board.room.render import format_decision
from bot.channels.meeting_posts import MeetingPosts, PostMark
from bot.channels.whatsapp.format import MAX_BODY, split_text, to_whatsapp, with_buttons
from bot.intake.delivery import SendFailed, SendProgress

if TYPE_CHECKING:
    from board.room.convene import BoardRoom

__all__ = ["MeetingRelay", "round_messages"]

log = logging.getLogger("sabha.whatsapp")

#: (user, body, reply_to, buttons, progress: marks the posted record as the request leaves)
Send = Callable[[str, str, str | None, tuple[Button, ...], SendProgress | None], Awaitable[None]]
_PARTIAL = re.compile(r"round (\d+)")


@dataclass(frozen=True)
class _Out:
    """One message a meeting still has to send."""

    meeting_id: str
    user: str
    body: str
    quote: str | None = None
    buttons: tuple[Button, ...] = ()
    item: str = ""  # its key in the posted record ("round:2:0", "decision:1" ...)


def round_messages(topic: str, round_no: int, statements: Sequence[tuple[str, str]], limit: int = MAX_BODY,
                   ) -> list[str]:
    """A round's ``(speaker, Markdown text)`` statements as WhatsApp bodies of at most ``limit`` characters: one
    when they fit, else split between statements (the first headed ``*Round n*``, the next ``*Round n* (2)``); only
    a statement too long for a message by itself is cut (:func:`.format.split_text`)."""
    blocks = [f"*{speaker}*\n{to_whatsapp(text).strip()}" for speaker, text in statements]
    bodies: list[str] = []
    current, filled = f"*Round {round_no}* of the meeting on \u201c{topic}\u201d", False
    for block in blocks:
        if filled and len(current) + 2 + len(block) > limit:  # the next message, split between statements
            bodies.append(current)
            current, filled = f"*Round {round_no}* ({len(bodies) + 1})", False
        if len(current) + 2 + len(block) <= limit:
            current, filled = f"{current}\n\n{block}", True
            continue
        pieces = split_text(block, limit - len(current) - 2)  # one statement longer than a message
        bodies += [f"{current}\n\n{pieces[0]}", *pieces[1:]]
        current, filled = f"*Round {round_no}* ({len(bodies) + 1})", False
    if filled:
        bodies.append(current)
    return bodies


class MeetingRelay:
    """See the module docstring."""

    def __init__(self, channel: str, send: Send, *, room: BoardRoom | None = None, record: MeetingPosts | None = None,
                 label_for: Callable[[str], str] | None = None) -> None:
        self.channel = channel
        self.send = send
        self.room = room  # the meetings' records (a resumed meeting's catch-up)
        self.record = record  # what was sent (None: nothing recorded)
        self.label_for = label_for or (lambda role: role)
        self.active = False
        self._rounds: dict[str, tuple[int, list[tuple[str, str]]]] = {}  # meeting -> (round, statements so far)
        self._queue: asyncio.Queue[_Out] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Relay from now on."""
        self.active = True
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name="whatsapp meetings")

    async def __call__(self, event: MeetingEvent) -> None:
        origin = event.origin
        if not self.active or origin is None or origin.channel != self.channel:
            return
        user, quote = origin.chat_id, origin.message_id
        if event.kind == MeetingEventKind.RESUMED:
            await self._catch_up(event, user)
            return
        if event.kind == MeetingEventKind.AGENT_SPOKE and event.role:
            round_no = event.round or 1
            held = self._rounds.get(event.meeting_id)
            if held is not None and held[0] != round_no:  # a new round began without a round_done
                self._flush(event, user)
            speaker = f"{event.emoji or ''} {event.name or event.role}".strip()
            self._rounds.setdefault(event.meeting_id, (round_no, []))[1].append((speaker, event.text))
            return
        if event.kind in (MeetingEventKind.ROUND_DONE, MeetingEventKind.DECISION, MeetingEventKind.ENDED):
            self._flush(event, user)
        if event.kind == MeetingEventKind.DECISION:
            body = f"*Board decision* on \u201c{event.topic}\u201d\n\n{to_whatsapp(format_decision(event))}"
            buttons = decision_buttons(event.meeting_id)
            pieces, button_body = with_buttons(split_text(body), buttons)
            mid = event.meeting_id
            for i, piece in enumerate(pieces):
                self._queue.put_nowait(_Out(mid, user, piece, quote, item=f"decision:{i}"))
            if button_body is not None:
                self._queue.put_nowait(_Out(mid, user, button_body, quote, buttons, item="decision:buttons"))
        elif event.kind == MeetingEventKind.ENDED:
            minutes = str(event.data.get("minutes") or "").strip()
            if minutes:
                for i, piece in enumerate(split_text(f"*Minutes* ({event.meeting_id})\n\n{to_whatsapp(minutes)}")):
                    self._queue.put_nowait(_Out(event.meeting_id, user, piece, item=f"minutes:{i}"))
            elif event.data.get("error"):
                self._queue.put_nowait(_Out(event.meeting_id, user, f"The meeting on \u201c{event.topic}\u201d ended "
                                            f"without a decision ({event.data.get('stop_reason')}).", quote,
                                            item="ended"))

    async def _catch_up(self, event: MeetingEvent, user: str) -> None:
        """A meeting resumed after a restart: its finished rounds not sent yet are sent (the worker skips what the
        record has), and the round it resumes in starts with the statements stored before the stop."""
        if self.room is None:
            return
        try:
            details = await self.room.store.details(event.meeting_id)
        except Exception:
            log.exception("whatsapp: reading meeting %s to catch up failed", event.meeting_id)
            return
        rounds: dict[int, list[tuple[str, str]]] = {}
        for row in details.get("statements") or []:
            rounds.setdefault(int(row["round"]), []).append((self._label(str(row["role"])), str(row["text"])))
        found = _PARTIAL.search(str(event.data.get("phase") or ""))
        partial = int(found.group(1)) if found else None
        for round_no, said in sorted(rounds.items()):
            if round_no == partial:
                self._rounds[event.meeting_id] = (round_no, list(said))
                continue
            for i, body in enumerate(round_messages(event.topic, round_no, said)):
                self._queue.put_nowait(_Out(event.meeting_id, user, body, item=f"round:{round_no}:{i}"))
        log.info("whatsapp: meeting %s resumed: %d stored round(s) looked at", event.meeting_id, len(rounds))

    def _label(self, role: str) -> str:
        try:
            return self.label_for(role)
        except Exception:  # noqa: BLE001 - a missing soul must not hide the statement
            return role

    def _flush(self, event: MeetingEvent, user: str) -> None:
        """Queue the round held for ``event``'s meeting (its statements so far), if any."""
        held = self._rounds.pop(event.meeting_id, None)
        if held is None or not held[1]:
            return
        for i, body in enumerate(round_messages(event.topic, held[0], held[1])):
            self._queue.put_nowait(_Out(event.meeting_id, user, body, item=f"round:{held[0]}:{i}"))

    async def _work(self) -> None:
        while True:
            out = await self._queue.get()
            try:
                await self._send(out)
            except SendFailed as exc:
                log.error("whatsapp: a meeting message to %s was not delivered: %s", out.user, exc)
            except Exception:
                log.exception("whatsapp: sending a meeting message to %s failed", out.user)
            finally:
                self._queue.task_done()

    async def _send(self, out: _Out) -> None:
        """Send one message, unless the record says it was sent; recorded as sent once Meta took it."""
        record = self.record if out.item else None
        progress = None
        if record is not None:
            mark = (await record.of(out.meeting_id, out.user)).get(out.item)
            if mark is not None and mark.mark is PostMark.SENT:
                return
            progress = record.progress(out.meeting_id, out.user, out.item)
        await self.send(out.user, out.body, out.quote, out.buttons, progress)
        if record is not None:
            await record.sent(out.meeting_id, out.user, out.item, None)

    async def drain(self, timeout: float) -> None:
        """Send what is queued (up to ``timeout``), then stop."""
        self.active = False
        if self._worker is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._queue.join(), timeout)
        self._worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._worker
        self._worker = None
