"""A board meeting relayed to a chat channel: each round in one message, then the decision, then the minutes.

:class:`MeetingRelay` subscribes to the board's meeting events and, for meetings whose origin is the channel it was
made for (its name: ``whatsapp``, ``slack`` ...), sends the same sequence the other places show, in as few messages
as the channel's limits allow: each round's statements together in one message when the round is done
(``*Round 2* ...``, each statement under its speaker's name, in speaking order; a round over the channel's body
limit is split between statements, and only a statement longer than the limit by itself is cut:
:func:`round_messages`); then the concise decision (recommendation, dissent, owned action items) when it is taken;
then the minutes packed into as few messages as they fit. Statements of a round a meeting ends inside (a deadline,
a budget) go out before its decision. Sends are queued and made by one worker, so a slow or rate-limited API never
slows the meeting. The decision carries the buttons Ratify / Veto / Revisit
(:func:`board.commands.decisions.decision_buttons`) under its last part (:attr:`RelayText.with_buttons`); a press
is the owner sending ``/ratify <id>``.

How text looks is the channel's (:class:`RelayText`: Markdown in its markup, its split and limit, where buttons
go); how a message leaves is the channel's ``send``; the relay's log lines name the channel.

What is sent is recorded (:mod:`bot.channels.meeting_posts`: each round's, the decision's and the minutes' messages,
``sending`` as the request leaves, ``sent`` once the API took it), so a meeting that goes on after a restart (a
``resumed`` event) is caught up from its record: each finished round not sent yet is sent, the round it resumes in
is completed with the statements stored before the stop, and nothing sent is sent again. A message whose request was
out when Sabha stopped (``sending``: it may have arrived) is sent once more headed as possibly repeated
(``ChannelTexts.possibly_repeated``, the intake's rule for replies), never as a plain second copy. A meeting that
ended while its messages were still queued (a ``kill -9`` then) is told again at the next start
(:meth:`board.room.convene.BoardRoom.retell_ended`) and caught up the same way.

What the people at the table wrote in (contributions) and the controls the meeting applied are one line each
(:mod:`bot.channels.meeting_lines`) at the top of the message of the round that follows them (where the meeting
took them in: before that round's statements); when no round follows (a wrap, a cancel), they go in a message of
their own before the decision. A contribution written in the channel itself is not echoed: the chat shows it
already.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from board.commands.decisions import decision_buttons
from board.envelope import Button
from board.room.meeting import MeetingEvent, MeetingEventKind
from board.room.render import format_decision
from bot.channels.meeting_lines import (
    contribution_item,
    contribution_line,
    control_item,
    control_line,
    echoed,
    table_events,
)
from bot.channels.meeting_posts import MeetingPosts, PostMark, retold
from bot.intake.courier import ChannelTexts
from bot.intake.delivery import SendFailed, SendProgress

if TYPE_CHECKING:
    from board.room.convene import BoardRoom

__all__ = ["MeetingRelay", "RelayText", "Send", "round_messages"]

#: (user, body, reply_to, buttons, progress: marks the posted record as the request leaves)
Send = Callable[[str, str, str | None, tuple[Button, ...], SendProgress | None], Awaitable[None]]
_PARTIAL = re.compile(r"round (\d+)")


@dataclass(frozen=True)
class RelayText:
    """How a channel's meeting messages are written: ``markup`` turns the models' Markdown into the channel's
    (``*bold*`` and ``_italic_`` both in WhatsApp's and in Slack's), ``split(text, limit)`` cuts a body over
    ``limit`` characters, and ``with_buttons(pieces, buttons)`` says which pieces go as text and the body of the
    message that carries the buttons after them (None without buttons)."""

    markup: Callable[[str], str]
    split: Callable[[str, int], list[str]]
    limit: int
    with_buttons: Callable[[list[str], tuple[Button, ...]], tuple[list[str], str | None]]


@dataclass(frozen=True)
class _Out:
    """One message a meeting still has to send."""

    meeting_id: str
    user: str
    body: str
    quote: str | None = None
    buttons: tuple[Button, ...] = ()
    item: str = ""  # its key in the posted record ("round:2:0", "decision:1" ...)


def round_messages(topic: str, round_no: int, statements: Sequence[tuple[str, str]], text: RelayText,
                   limit: int | None = None) -> list[str]:
    """A round's ``(speaker, Markdown text)`` statements (speaker "": a line of the table, as it is) as bodies of at
    most ``limit`` characters (the channel's by default): one when they fit, else split between statements (the
    first headed ``*Round n*``, the next ``*Round n* (2)``); only a statement too long for a message by itself is
    cut (``text.split``)."""
    limit = text.limit if limit is None else limit
    split_text = text.split
    blocks = [f"*{speaker}*\n{text.markup(said).strip()}" if speaker else said for speaker, said in statements]
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

    def __init__(self, channel: str, send: Send, text: RelayText, *, room: BoardRoom | None = None,
                 record: MeetingPosts | None = None, label_for: Callable[[str], str] | None = None,
                 texts: ChannelTexts | None = None) -> None:
        self.channel = channel
        self.send = send
        self.text = text
        self.log = logging.getLogger(f"sabha.{channel}")
        self.room = room  # the meetings' records (a resumed meeting's catch-up)
        self.record = record  # what was sent (None: nothing recorded)
        self.label_for = label_for or (lambda role: role)
        self.again_heading = (texts or ChannelTexts()).possibly_repeated
        self.active = False
        self._rounds: dict[str, tuple[int, list[tuple[str, str]]]] = {}  # meeting -> (round, statements so far)
        self._lines: dict[str, list[tuple[str, str]]] = {}  # meeting -> (item, line) for the next round's message
        self._queue: asyncio.Queue[_Out] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._not_ours: set[str] = set()  # told again after a start, never seen here: left alone

    def catches_up(self) -> bool:
        """It sends from its record (:class:`board.room.subscribers.CatchesUp`): told again at a start, a meeting
        that ended lately sends what a stop kept from it."""
        return self.record is not None and self.room is not None

    def start(self) -> None:
        """Relay from now on."""
        self.active = True
        if self._worker is None:
            self._worker = asyncio.create_task(self._work(), name=f"{self.channel} meetings")

    async def __call__(self, event: MeetingEvent) -> None:
        origin = event.origin
        if not self.active or origin is None or origin.channel != self.channel:
            return
        user, quote = origin.chat_id, origin.message_id
        if event.meeting_id in self._not_ours:
            if event.kind == MeetingEventKind.ENDED:
                self._not_ours.discard(event.meeting_id)
            return
        if event.kind == MeetingEventKind.STARTED and self.record is not None:  # told again after a start: caught up
            try:
                await self.record.seen(event.meeting_id, user)
            except Exception as exc:  # noqa: BLE001 - relayed all the same; only a kill's catch-up misses it
                self.log.warning("%s: meeting %s is not recorded as seen here (%s)", self.channel, event.meeting_id,
                                 exc)
        if event.kind == MeetingEventKind.RESUMED:
            if retold(event) and self.record is not None and not await self.record.of(event.meeting_id, user):
                self._not_ours.add(event.meeting_id)  # ended before this start, never seen here: not ours
                return
            await self._catch_up(event, user)
            return
        if event.kind == MeetingEventKind.AGENT_SPOKE and event.role:
            round_no = event.round or 1
            held = self._rounds.get(event.meeting_id)
            if held is not None and held[0] != round_no:  # a new round began without a round_done
                self._flush(event, user)
            speaker = f"{event.emoji or ''} {event.name or event.role}".strip()
            if event.meeting_id not in self._rounds:  # the round's message starts with the table's lines
                lines = [("", line) for _, line in self._lines.pop(event.meeting_id, [])]
                self._rounds[event.meeting_id] = (round_no, lines)
            self._rounds[event.meeting_id][1].append((speaker, event.text))
            return
        if event.kind in (MeetingEventKind.CONTRIBUTION, MeetingEventKind.CONTROL):
            self._hold_line(event.meeting_id, event.kind, event.data, event.text)
            return
        if event.kind in (MeetingEventKind.ROUND_DONE, MeetingEventKind.DECISION, MeetingEventKind.ENDED):
            self._flush(event, user)
        if event.kind in (MeetingEventKind.DECISION, MeetingEventKind.ENDED):
            self._flush_lines(event.meeting_id, event.topic, user)
        if event.kind == MeetingEventKind.DECISION:
            body = f"*Board decision* on \u201c{event.topic}\u201d\n\n{self.text.markup(format_decision(event))}"
            buttons = decision_buttons(event.meeting_id)
            pieces, button_body = self.text.with_buttons(self._split(body), buttons)
            mid = event.meeting_id
            for i, piece in enumerate(pieces):
                self._queue.put_nowait(_Out(mid, user, piece, quote, item=f"decision:{i}"))
            if button_body is not None:
                self._queue.put_nowait(_Out(mid, user, button_body, quote, buttons, item="decision:buttons"))
        elif event.kind == MeetingEventKind.ENDED:
            minutes = str(event.data.get("minutes") or "").strip()
            if minutes:
                for i, piece in enumerate(self._split(f"*Minutes* ({event.meeting_id})\n\n"
                                                      f"{self.text.markup(minutes)}")):
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
            self.log.exception("%s: reading meeting %s to catch up failed", self.channel, event.meeting_id)
            return
        rounds: dict[int, list[tuple[str, str]]] = {}
        for row in details.get("statements") or []:
            rounds.setdefault(int(row["round"]), []).append((self._label(str(row["role"])), str(row["text"])))
        lines: dict[int, list[tuple[str, str]]] = {}  # round -> the table's lines at the top of its message
        for stored in table_events(details):
            line = self._line(stored.kind, stored.data, stored.text)
            if line is not None:  # a contribution before the round that heard it, a control before the next one
                lines.setdefault(stored.round + (stored.kind == "control"), []).append(line)
        found = _PARTIAL.search(str(event.data.get("phase") or ""))
        partial = int(found.group(1)) if found else None
        for round_no, stated in sorted(rounds.items()):
            said = [("", line) for _, line in lines.pop(round_no, [])] + stated
            if round_no == partial:
                self._rounds[event.meeting_id] = (round_no, list(said))
                continue
            for i, body in enumerate(round_messages(event.topic, round_no, said, self.text)):
                self._queue.put_nowait(_Out(event.meeting_id, user, body, item=f"round:{round_no}:{i}"))
        self._lines[event.meeting_id] = [line for _, held in sorted(lines.items()) for line in held]
        self.log.info("%s: meeting %s resumed: %d stored round(s) looked at", self.channel, event.meeting_id,
                      len(rounds))

    def _line(self, kind: str, data: dict[str, Any], text: str) -> tuple[str, str] | None:
        """A contribution's or an applied control's (item, line); None for a contribution written in this channel
        (the chat shows it already: not echoed)."""
        if kind == MeetingEventKind.CONTRIBUTION.value:
            if echoed(data, self.channel):
                return None
            return contribution_item(data), contribution_line(data, text, label_for=self._label)
        return control_item(data), control_line(data, text)

    def _hold_line(self, meeting_id: str, kind: str, data: dict[str, Any], text: str) -> None:
        """A contribution or an applied control, kept for the top of the next round's message."""
        line = self._line(kind, data, text)
        held = self._lines.setdefault(meeting_id, [])
        if line is not None and (not line[0] or all(line[0] != had for had, _ in held)):
            held.append(line)

    def _flush_lines(self, meeting_id: str, topic: str, user: str) -> None:
        """Lines no round followed: a message of their own (before the decision)."""
        held = self._lines.pop(meeting_id, [])
        if not held:
            return
        body = "\n".join([f"*At the table* of the meeting on \u201c{topic}\u201d", *(line for _, line in held)])
        for i, piece in enumerate(self._split(body)):
            self._queue.put_nowait(_Out(meeting_id, user, piece, item=f"table:{held[0][0] or 'lines'}:{i}"))

    def _split(self, body: str) -> list[str]:
        return self.text.split(body, self.text.limit)

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
        for i, body in enumerate(round_messages(event.topic, held[0], held[1], self.text)):
            self._queue.put_nowait(_Out(event.meeting_id, user, body, item=f"round:{held[0]}:{i}"))

    async def _work(self) -> None:
        while True:
            out = await self._queue.get()
            try:
                await self._send(out)
            except SendFailed as exc:
                self.log.error("%s: a meeting message to %s was not delivered: %s", self.channel, out.user, exc)
            except Exception:
                self.log.exception("%s: sending a meeting message to %s failed", self.channel, out.user)
            finally:
                self._queue.task_done()

    async def _send(self, out: _Out) -> None:
        """Send one message, unless the record says it was sent; recorded as sent once the API took it. One whose
        request was out when Sabha stopped goes once more under the possibly-repeated line (in two messages when
        the line would take it over the channel's limit)."""
        record = self.record if out.item else None
        progress = None
        bodies = [out.body]
        if record is not None:
            mark = (await record.of(out.meeting_id, out.user)).get(out.item)
            if mark is not None and mark.mark is PostMark.SENT:
                return
            if mark is not None and mark.mark is PostMark.SENDING:
                self.log.warning("%s: the %s of meeting %s may have reached %s before Sabha stopped; sending it once "
                                 "more, marked as possibly repeated", self.channel, out.item, out.meeting_id, out.user)
                prefix = f"{self.again_heading}\n\n"
                first, *more = self.text.split(out.body, self.text.limit - len(prefix)) or [""]
                bodies = [prefix + first, *more]
            progress = record.progress(out.meeting_id, out.user, out.item)
        for i, body in enumerate(bodies):  # the quote on the first, the buttons under the last
            last = i == len(bodies) - 1
            await self.send(out.user, body, out.quote if i == 0 else None, out.buttons if last else (), progress)
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
