"""Streamed answers on Discord: one message posted with the first words, then edited while the answer is written.

:class:`StreamedAnswer` is the :class:`board.llm.stream.StreamSink` of one turn (only whole words reach it, see
:class:`board.llm.stream.CheckedSink`). Its first text is posted as the *draft* (into the conversation's thread,
started first when the question opened it); later text is edited in, at most once per ``interval`` seconds
(``discord.stream_edit_interval_s``, at least 1 s: Discord allows about five edits of a channel's messages per
five seconds) and only the latest text: edits never queue up. A 429 is waited out by discord.py (its
``retry_after``) before the next edit. The draft ends with a cursor; a tool call shows :data:`LOOKING`.

The draft is a preview. When the answer is delivered, :meth:`StreamedAnswer.settle` first lets the edit in flight
finish (never cancelled: a request cut while being written leaves its connection unusable), then the channel
edits the final answer's first message over the draft (the rest posted after it). Drafts are kept in memory: after
a restart the answer is posted as a new message and a draft left behind stays as it was (partial), which the
log says. A draft that cannot be posted or edited is logged; the answer is delivered all the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from board.llm.stream import PreviewText
from bot.channels.discord.format import MAX_CHARS, headed
from bot.channels.discord.outbound import DiscordOutbound
from bot.intake.delivery import SendFailed

__all__ = ["CURSOR", "LOOKING", "StreamedAnswer"]

log = logging.getLogger("sabha.discord")

LOOKING = "🔎 looking it up…"
CURSOR = " …"


class StreamedAnswer(PreviewText):
    """See the module docstring."""

    looking = LOOKING

    def __init__(self, outbound: DiscordOutbound, target: Callable[[str], Awaitable[int]], *,
                 interval: float) -> None:
        self.outbound = outbound
        self.target = target  # the channel id to post into, given the answerer's label (its thread started)
        self.interval = interval
        self.label = ""
        self.channel_id: int | None = None
        self.message_id: int | None = None  # the draft, once posted
        self.edits = 0
        self._wake = asyncio.Event()
        self._closed = False
        self._done = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def on_speaker(self, label: str) -> None:
        self.label = label

    def _changed(self) -> None:
        if self._closed:
            return
        self._wake.set()
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="discord stream")

    def render(self) -> str:
        """What the draft shows now."""
        body = self._status if self._status is not None else self._text + CURSOR
        text = headed(self.label, body)
        return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1] + "…"

    async def _run(self) -> None:
        while not self._closed:
            await self._wake.wait()
            self._wake.clear()
            if self._closed:
                return
            try:
                await self._show(self.render())
            except (SendFailed, OSError) as exc:
                log.warning("discord: the streamed draft could not be shown (%s); the answer follows whole", exc)
                return
            with contextlib.suppress(TimeoutError):  # the next edit waits for the interval, or the end
                await asyncio.wait_for(self._done.wait(), self.interval)

    async def _show(self, text: str) -> None:
        if self.message_id is None:
            self.channel_id = await self.target(self.label)
            self.message_id = await self.outbound.post(self.channel_id, text, None)
        else:
            assert self.channel_id is not None
            await self.outbound.edit(self.channel_id, self.message_id, text)
            self.edits += 1

    async def settle(self) -> None:
        """Stop editing: no new edit starts; the one in flight finishes."""
        self._closed = True
        self._wake.set()
        self._done.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._task)
