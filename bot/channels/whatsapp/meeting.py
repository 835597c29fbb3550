"""Board meetings called from WhatsApp: the decision, then the minutes, in as few messages as fit.

:class:`MeetingRelay` subscribes to the board's meeting events and, for meetings whose
origin is a WhatsApp user, sends two things only: the concise decision (recommendation,
dissent, owned action items) when it is taken, then the minutes packed into as few 4096
character messages as they fit. Statements are not relayed (``sabha meetings show <id>``
has them): few messages rarely meet WhatsApp's pair limit. Sends are queued and made by one
worker, so a slow or rate-limited Graph API never slows the meeting. The decision carries the reply
buttons Ratify / Veto / Revisit (:func:`board.commands.decisions.decision_buttons`) under its last
part (:func:`.format.with_buttons`); a press is the owner sending ``/ratify <id>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from board.commands.decisions import decision_buttons
from board.envelope import Button
from board.room.meeting import MeetingEvent, MeetingEventKind
from board.room.render import format_decision
from bot.channels.whatsapp.format import split_text, to_whatsapp, with_buttons
from bot.intake.delivery import SendFailed

__all__ = ["MeetingRelay"]

log = logging.getLogger("sabha.whatsapp")

Send = Callable[[str, str, str | None, tuple[Button, ...]], Awaitable[None]]  # (user, body, reply_to, buttons)


class MeetingRelay:
    """See the module docstring."""

    def __init__(self, channel: str, send: Send) -> None:
        self.channel = channel
        self.send = send
        self.active = False
        self._queue: asyncio.Queue[tuple[str, str, str | None, tuple[Button, ...]]] = asyncio.Queue()
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
        if event.kind is MeetingEventKind.DECISION:
            body = f"*Board decision* on \u201c{event.topic}\u201d\n\n{to_whatsapp(format_decision(event))}"
            buttons = decision_buttons(event.meeting_id)
            pieces, button_body = with_buttons(split_text(body), buttons)
            for piece in pieces:
                self._queue.put_nowait((user, piece, quote, ()))
            if button_body is not None:
                self._queue.put_nowait((user, button_body, quote, buttons))
        elif event.kind is MeetingEventKind.ENDED:
            minutes = str(event.data.get("minutes") or "").strip()
            if minutes:
                for piece in split_text(f"*Minutes* ({event.meeting_id})\n\n{to_whatsapp(minutes)}"):
                    self._queue.put_nowait((user, piece, None, ()))
            elif event.data.get("error"):
                self._queue.put_nowait((user, f"The meeting on \u201c{event.topic}\u201d ended without a decision "
                                              f"({event.data.get('stop_reason')}).", quote, ()))

    async def _work(self) -> None:
        while True:
            user, body, quote, buttons = await self._queue.get()
            try:
                await self.send(user, body, quote, buttons)
            except SendFailed as exc:
                log.error("whatsapp: a meeting message to %s was not delivered: %s", user, exc)
            except Exception:
                log.exception("whatsapp: sending a meeting message to %s failed", user)
            finally:
                self._queue.task_done()

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
