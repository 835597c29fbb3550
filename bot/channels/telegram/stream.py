"""Streamed answers on Telegram: one message, edited in place while the answer is written.

:class:`StreamedDraft` is the :class:`board.llm.stream.StreamSink` of one Telegram turn. The
first whole words of the text are sent as a message (the *draft*; a word still being written
waits, so a secret is never shown in pieces that :func:`board.masking.mask` cannot recognise);
later text is edited into it, at most once per ``telegram.stream_edit_interval_s`` and only
when the chat's flood budget can spare a request
(:meth:`bot.channels.telegram.outbound.Outbound.edit_if_idle`: a busy chat gets fewer edits,
never a 429). A tool call shows :data:`LOOKING` until the next text; a failed
attempt (a retry follows) shows :data:`RETRYING`. The draft is a preview: the channel's
delivery edits it into the final formatted answer (the guardrails' text, split at 4096 with
the rest in more messages) through ``Outbound.deliver_over``.

Never two answers. :class:`DraftStore` (table ``telegram_drafts``) records the draft *before*
its first request leaves (no id yet) and its message id as soon as Telegram answers, so
after a crash, a kill or a restart the same message is edited (the turn streams into it again,
and the answer is edited over it), or, when it is gone, the answer is sent once. The one gap:
killed between Telegram posting the draft and the id being written, the draft's id is
unknown; the answer is then sent as a new message (the draft may stay behind, partial), which
the log says. A "working on it" notice and a draft of the same message are one message: the
notice becomes the draft, or is not sent when the draft is out already (:meth:`Drafts.notice`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from board.conversation.transcripts import utc_now
from board.envelope import Envelope, Reply
from board.llm.stream import PreviewText, whole_words
from board.masking import mask
from board.storage import Database, Dialect
from bot.channels.telegram.outbound import Outbound, Target
from bot.intake.delivery import SendFailed
from bot.intake.lanes import stepping_aside

__all__ = ["INTERRUPTED", "LOOKING", "RETRYING", "DraftKey", "DraftStore", "Drafts", "StoredDraft", "StreamedDraft"]

log = logging.getLogger("sabha.telegram.stream")

LOOKING = "🔎 looking it up…"
RETRYING = "… (the model stumbled; trying again)"
#: What a draft becomes when its answer will not come (given up at a restart, or undeliverable).
INTERRUPTED = "⚠️ This answer was interrupted: please ask again."
CURSOR = " …"
MIN_EDIT_GAP_S = 1.0  # Telegram: about one message (an edit counts) a second per chat
MAX_REMEMBERED = 1000  # closed drafts' ids kept for their delivery (see Drafts.stored)


@dataclass(frozen=True)
class DraftKey:
    """Which answer a draft is: the chat, and the id of the message it answers."""

    chat_id: str
    reply_to: str

    @classmethod
    def of_envelope(cls, envelope: Envelope) -> DraftKey:
        return cls(str(envelope.chat_id), str(envelope.message_id))

    @classmethod
    def of_reply(cls, reply: Reply) -> DraftKey | None:
        return cls(str(reply.chat_id), str(reply.reply_to)) if reply.reply_to else None


@dataclass(frozen=True)
class StoredDraft:
    """A draft as recorded: ``message_id`` None while (or when) its first send's outcome is unknown."""

    message_id: int | None


class DraftStore:
    """The ``telegram_drafts`` table (migration 0720).

    Most answers have no draft (the provider does not stream, or the answer came too fast for one), yet each was
    looked up twice, as its turn began and as it was delivered: two round trips to the database, the first inside
    the turn's place under the cap (issue 44). On SQLite this process is the table's only writer (one daemon owns
    a data dir), so the keys it holds are known after :meth:`prune` read them, and a key not among them has no
    draft: not looked up. On PostgreSQL another replica may have recorded a draft of a conversation this one takes
    over: always looked up."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._keys: set[DraftKey] | None = None  # every key with a row (SQLite, once read); None: ask the table

    def _has(self, key: DraftKey) -> None:
        """``key`` is being written (known before the row may exist: a failed write leaves one lookup too many)."""
        if self._keys is not None:
            self._keys.add(key)

    async def get(self, key: DraftKey) -> StoredDraft | None:
        if self._keys is not None and key not in self._keys:
            return None
        row = await self.db.fetchone("SELECT message_id FROM telegram_drafts WHERE chat_id = ? AND reply_to = ?",
                                     (key.chat_id, key.reply_to))
        return None if row is None else StoredDraft(row["message_id"])

    async def sending(self, key: DraftKey) -> None:
        """The draft's first request is about to leave."""
        self._has(key)
        await self.db.execute("INSERT INTO telegram_drafts (chat_id, reply_to, message_id, created_at) "
                              "VALUES (?, ?, NULL, ?) ON CONFLICT (chat_id, reply_to) DO NOTHING",
                              (key.chat_id, key.reply_to, utc_now()))

    async def placed(self, key: DraftKey, message_id: int) -> None:
        self._has(key)
        await self.db.execute("INSERT INTO telegram_drafts (chat_id, reply_to, message_id, created_at) "
                              "VALUES (?, ?, ?, ?) ON CONFLICT (chat_id, reply_to) DO UPDATE SET message_id = "
                              "excluded.message_id", (key.chat_id, key.reply_to, message_id, utc_now()))

    async def prune(self, keep: timedelta = timedelta(days=7)) -> None:
        """Forget drafts older than ``keep`` (an answer whose delivery failed leaves its record; the
        inbox forgets its message after a week too); on SQLite, then read the keys left (see the class)."""
        cutoff = (datetime.now(UTC) - keep).isoformat(timespec="seconds")
        await self.db.execute("DELETE FROM telegram_drafts WHERE created_at < ?", (cutoff,))
        if self.db.dialect is Dialect.SQLITE:
            rows = await self.db.fetchall("SELECT chat_id, reply_to FROM telegram_drafts")
            self._keys = {DraftKey(str(r["chat_id"]), str(r["reply_to"])) for r in rows}

    async def forget(self, key: DraftKey) -> None:
        await self.db.execute("DELETE FROM telegram_drafts WHERE chat_id = ? AND reply_to = ?",
                              (key.chat_id, key.reply_to))
        if self._keys is not None:
            self._keys.discard(key)


class StreamedDraft(PreviewText):
    """One answer's draft message; see the module docstring. Feed it through the sink methods;
    :meth:`close` stops it (waiting for a request in flight) and returns the draft's message id."""

    def __init__(self, outbound: Outbound, store: DraftStore, key: DraftKey, target: Target, header: str, *,
                 interval: float, message_id: int | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.outbound, self.store, self.key, self.target, self.header = outbound, store, key, target, header
        self.interval = interval
        self.message_id = message_id
        self.clock = clock
        self.lock = asyncio.Lock()  # the first send (draft or notice) of this answer
        self.edits = 0
        self.recorded = False  # its message id is stored in telegram_drafts (by this process)
        self.broken = False  # Telegram refused an edit, or the first send failed: no more previews
        self._shown: str | None = None
        self._last = -1e9
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None

    # -- board.llm.stream.StreamSink -------------------------------------------------

    looking, retrying = LOOKING, RETRYING

    def on_speaker(self, label: str) -> None:
        self.header = label

    def _changed(self) -> None:
        self._wake.set()
        if self._task is None and not self._closing:
            self._task = asyncio.create_task(self._run(), name=f"telegram draft {self.key.chat_id}")

    @property
    def last_request(self) -> float:
        """When (``clock``) the draft's last request was answered."""
        return self._last

    # -- the editor ------------------------------------------------------------------

    def view(self) -> str | None:
        """What the draft should show now (None: nothing yet)."""
        words = whole_words(self._text)  # a word cut at a delta waits for its end: a secret is masked whole
        if words.strip():
            return mask(words).rstrip() + CURSOR  # every known secret masked, as in every other write
        return self._status

    async def _run(self) -> None:
        try:
            await self._edit_loop()
        except Exception as exc:  # noqa: BLE001 - a preview must never break the answer (delivered whole instead)
            self.broken = True
            log.warning("telegram: the streamed draft in chat %s stopped (%s); the answer comes as usual",
                        self.target.chat_id, exc)

    async def _edit_loop(self) -> None:
        while not self._closing and not self.broken:
            await self._wake.wait()
            self._wake.clear()
            if self._closing:
                return
            if self.message_id is not None:
                wait = self._last + self.interval - self.clock()
                if wait > 0:
                    await self._pause(wait)
                    if self._closing:
                        return
            view = self.view()
            if view is None or view == self._shown:
                continue
            await self._show(view)

    async def _pause(self, seconds: float) -> None:
        """Sleep ``seconds`` (a close ends it early); new text meanwhile is shown after it."""
        self._wake.clear()
        stop = asyncio.Event()
        self._stop = stop
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), seconds)
        self._wake.set()

    async def _show(self, view: str) -> None:
        if self.message_id is None:
            async with self.lock:
                if self.message_id is None:
                    await self._post(view)
                    return
        shown = await self.outbound.edit_if_idle(self.target, self.message_id, view, reserve=1, header=self.header)
        if shown is None:  # the chat's budget is needed elsewhere: try again a little later
            self._last = self.clock() - self.interval + min(1.0, self.interval)
            self._wake.set()
            return
        self._last = self.clock()
        if shown:
            self._shown = view
            self.edits += 1
        else:
            self.broken = True  # refused (the message is gone?): the answer's delivery sorts it out

    async def _post(self, view: str) -> None:
        await self.store.sending(self.key)  # before the request leaves: a restart knows a draft may exist
        try:
            message = await self.outbound.post_draft(self.target, view, header=self.header)
        except SendFailed as exc:
            log.warning("telegram: the streamed draft to chat %s was not sent (%s); the answer comes whole",
                        self.target.chat_id, exc)
            self.broken = True
            return
        self.message_id = message.message_id
        await self.store.placed(self.key, message.message_id)
        self.recorded = True
        self._shown, self._last = view, self.clock()

    async def adopt_notice(self, post: Callable[[], Awaitable[int | None]]) -> int | None:
        """A "working on it" notice for this answer: none when the draft is out (its id instead),
        else ``post`` it and make it the draft (recorded as the draft before it leaves)."""
        async with self.lock:
            if self.message_id is not None:
                return self.message_id
            await self.store.sending(self.key)
            message_id = await post()
            if message_id is not None:
                self.message_id = message_id
                await self.store.placed(self.key, message_id)
                self.recorded = True
            return message_id

    async def close(self) -> int | None:
        """Stop previewing (a request in flight finishes first); the draft's message id, if any."""
        self._closing = True
        self._wake.set()
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        async with self.lock:
            return self.message_id


class Drafts:
    """The drafts of one bot: opened around a turn (:meth:`streaming`), found again by the delivery."""

    def __init__(self, outbound: Outbound, store: DraftStore, *, enabled: bool, interval: float) -> None:
        self.outbound = outbound
        self.store = store
        self.enabled = enabled
        self.interval = interval
        self.live: dict[DraftKey, StreamedDraft] = {}
        self._quiet_until: dict[DraftKey, float] = {}  # no final edit before (a second after the last request)
        self._placed: dict[DraftKey, int] = {}  # drafts just closed whose message id this process stored

    @contextlib.asynccontextmanager
    async def streaming(self, envelope: Envelope, target: Target) -> AsyncIterator[StreamedDraft | None]:
        """A draft for the answer to ``envelope`` (None when streaming is off); one recorded earlier
        (a restart) is continued."""
        if not self.enabled:
            yield None
            return
        key = DraftKey.of_envelope(envelope)
        stored = await self.store.get(key)
        draft = StreamedDraft(self.outbound, self.store, key, target, "", interval=self.interval,
                              message_id=stored.message_id if stored is not None else None)
        self.live[key] = draft
        try:
            yield draft
        finally:
            await draft.close()
            self.live.pop(key, None)
            if draft.message_id is not None:
                self._quiet_until[key] = draft.last_request + MIN_EDIT_GAP_S
            if draft.recorded and draft.message_id is not None:
                self._placed[key] = draft.message_id
                while len(self._placed) > MAX_REMEMBERED:  # answers never delivered here: forgotten oldest first
                    self._placed.pop(next(iter(self._placed)))

    async def stored(self, key: DraftKey) -> StoredDraft | None:
        """The draft of ``key`` as recorded: from memory when this process just closed it and stored its id (what
        the table holds: one statement less per streamed answer), else from :class:`DraftStore`."""
        message_id = self._placed.pop(key, None)
        if message_id is not None:
            return StoredDraft(message_id)
        return await self.store.get(key)

    async def settle(self, key: DraftKey, clock: Callable[[], float] = time.monotonic) -> None:
        """Wait until the answer's final edit keeps one request a second in the chat. The wait is no work: the
        turn's place under the cap goes to another conversation meanwhile (:func:`bot.intake.lanes.stepping_aside`)."""
        until = self._quiet_until.pop(key, None)
        if until is not None and until > clock():
            async with stepping_aside():
                await asyncio.sleep(until - clock())

    async def notice(self, reply: Reply, post: Callable[[], Awaitable[int | None]]) -> int | None:
        """Post a "working on it" notice through the answer's draft when one is open (see
        :meth:`StreamedDraft.adopt_notice`), else plainly."""
        key = DraftKey.of_reply(reply)
        draft = self.live.get(key) if key is not None else None
        if draft is None:
            return await post()
        return await draft.adopt_notice(post)
