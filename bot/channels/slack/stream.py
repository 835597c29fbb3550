"""Streamed answers on Slack: one message in the thread, edited (``chat.update``) while the answer is written.

:class:`SlackDraft` is the :class:`board.llm.stream.StreamSink` of one turn. Its first whole words are posted
in the conversation's thread (a word still being written waits, so a secret is never shown in pieces that
:func:`board.masking.mask` cannot recognise); later text is edited in, at most once per
``slack.stream_edit_interval_s`` (Slack allows about 50 ``chat.update`` a minute per workspace; a 429 is
waited out as Slack asks, :mod:`.outbound`). A tool call shows :data:`LOOKING`. The draft is a preview: the
channel's delivery edits it into the final answer (formatted, split with the rest in more messages in the
thread). Never two answers: the draft is recorded before its post leaves and with its ts once Slack answers
(:class:`.store.SlackDraftStore`), so after a kill the same message is streamed into and edited again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from board.envelope import Envelope
from board.llm.stream import PreviewText, whole_words
from board.masking import mask
from bot.channels.slack.format import escape
from bot.channels.slack.outbound import SlackWeb
from bot.channels.slack.places import split_chat
from bot.channels.slack.store import SlackDraftKey, SlackDraftStore
from bot.intake.delivery import SendFailed

__all__ = ["CURSOR", "INTERRUPTED", "LOOKING", "SlackDraft", "SlackDrafts"]

log = logging.getLogger("sabha.slack.stream")

LOOKING = "🔎 looking it up…"
RETRYING = "… (the model stumbled; trying again)"
#: What a draft becomes when its answer will not come.
INTERRUPTED = "⚠️ This answer was interrupted: please ask again."
CURSOR = " …"
PREVIEW_CHARS = 3500  # a preview longer than one message shows its end only when the answer is delivered


class SlackDraft(PreviewText):
    """One answer's draft message; see the module docstring."""

    looking, retrying = LOOKING, RETRYING

    def __init__(self, web: SlackWeb, store: SlackDraftStore, key: SlackDraftKey, *, interval: float,
                 ts: str | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.web, self.store, self.key = web, store, key
        self.channel, self.thread_ts = split_chat(key.chat_id)
        self.interval = interval
        self.ts = ts
        self.clock = clock
        self.header = ""
        self.edits = 0
        self.broken = False
        self._shown: str | None = None
        self._last = -1e9
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()

    def on_speaker(self, label: str) -> None:
        self.header = label

    def _changed(self) -> None:
        self._wake.set()
        if self._task is None and not self._closing:
            self._task = asyncio.create_task(self._run(), name=f"slack draft {self.key.chat_id}")

    @property
    def last_request(self) -> float:
        """When (``clock``) the draft's last request was answered."""
        return self._last

    def view(self) -> str | None:
        """What the draft shows now (None: nothing yet)."""
        words = whole_words(self._text)
        if words.strip():
            shown = escape(mask(words).rstrip())[:PREVIEW_CHARS] + CURSOR
        else:
            shown = escape(self._status) if self._status else ""
        if not shown:
            return None
        return f"*{escape(self.header)}*\n{shown}" if self.header else shown

    async def _run(self) -> None:
        try:
            while not self._closing and not self.broken:
                await self._wake.wait()
                self._wake.clear()
                if self._closing:
                    return
                wait = self._last + self.interval - self.clock()
                if self.ts is not None and wait > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stop.wait(), wait)
                    if self._closing:
                        return
                view = self.view()
                if view is not None and view != self._shown:
                    await self._show(view)
        except SendFailed as exc:
            self.broken = True
            log.warning("slack: the streamed draft in %s stopped (%s); the answer comes as usual", self.key.chat_id,
                        exc)
        except Exception as exc:  # noqa: BLE001 - a preview must never break the answer
            self.broken = True
            log.warning("slack: the streamed draft in %s broke (%s); the answer comes as usual", self.key.chat_id,
                        exc)

    async def _show(self, view: str) -> None:
        if self.ts is None:
            await self.store.sending(self.key)  # before the post leaves: a restart knows a draft may exist
            self.ts = await self.web.post(self.channel, view, self.thread_ts, None)
            await self.store.placed(self.key, self.ts)
        else:
            await self.web.update(self.channel, self.ts, view, None)
            self.edits += 1
        self._shown, self._last = view, self.clock()

    async def close(self) -> str | None:
        """Stop previewing (a request in flight finishes first); the draft's ts, if any."""
        self._closing = True
        self._wake.set()
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        return self.ts


class SlackDrafts:
    """The drafts of the channel: opened around a turn (:meth:`streaming`), found again by the delivery."""

    def __init__(self, web: SlackWeb, store: SlackDraftStore, *, enabled: bool, interval: float) -> None:
        self.web = web
        self.store = store
        self.enabled = enabled
        self.interval = interval
        self.live: dict[SlackDraftKey, SlackDraft] = {}
        self._quiet_until: dict[SlackDraftKey, float] = {}

    @contextlib.asynccontextmanager
    async def streaming(self, envelope: Envelope) -> AsyncIterator[SlackDraft | None]:
        """A draft for the answer to ``envelope`` (None when streaming is off); one recorded before a restart is
        continued."""
        if not self.enabled or envelope.message_id is None:
            yield None
            return
        key = SlackDraftKey(envelope.chat_id, envelope.message_id)
        stored = await self.store.get(key)
        draft = SlackDraft(self.web, self.store, key, interval=self.interval,
                           ts=stored.ts if stored is not None else None)
        self.live[key] = draft
        try:
            yield draft
        finally:
            self.live.pop(key, None)
            await draft.close()
            if draft.ts is not None:
                self._quiet_until[key] = draft.last_request + self.interval

    async def notice(self, key: SlackDraftKey, post: Callable[[], Awaitable[str]]) -> str | None:
        """A "working on it" notice for the answer ``key``: none when its draft shows the work already (the draft's
        ts, or None while its first post is on its way), else ``post`` it and make it the draft (recorded before it
        leaves), so the answer is edited over it: one message either way."""
        draft = self.live.get(key)
        if draft is not None:
            return draft.ts
        stored = await self.store.get(key)
        if stored is not None:
            return stored.ts
        await self.store.sending(key)
        ts = await post()
        await self.store.placed(key, ts)
        return ts

    async def settle(self, key: SlackDraftKey) -> None:
        """Wait until the answer's final edit keeps the edit interval after the draft's last one."""
        until = self._quiet_until.pop(key, None)
        if until is not None and until > time.monotonic():
            await asyncio.sleep(until - time.monotonic())
