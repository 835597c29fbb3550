"""The one way Sabha sends to Telegram: every reply, command answer, error and meeting post.

:class:`Outbound` owns the rules that keep a message in the place it belongs:

* the thread: ``message_thread_id`` is sent only for a real forum topic; the General
  topic and private chats get none (Telegram rejects ``message_thread_id=1``);
* formatting: Markdown -> text + entities, a bold ``<emoji> <Name>`` header, split at
  4096 UTF-16 units (:mod:`bot.channels.telegram.format`); if Telegram still answers
  "can't parse entities", the chunk is resent as plain text;
* flood control: a budget per chat shared by all its topics, 429 ``retry_after``
  honoured (the chat pauses) and the send retried (:mod:`bot.channels.telegram.ratelimit`);
* resending only what cannot be posted twice (below);
* what each request says about the Bot API: one that cannot connect is a network failure
  (logged as one, and :attr:`Outbound.reach` marks the API unreachable: the channel is not
  ready), any answer marks it reachable again;
* the typing indicator in the right topic while an agent thinks;
* a spoken answer's voice note (``sendVoice``, OGG/Opus) in the same topic as its text.

Resends. ``sendMessage`` is not idempotent: when the request reached Telegram and only
the answer was lost (a read timeout, the connection dropped mid-response), Telegram has
posted the message and a resend posts it a second time. So a message is resent only after
an error that proves it was not posted: a 429 ``RetryAfter``; a connection that was never
made (connection refused, connect or pool timeout: the request never left); an error
answer from the server (5xx: Telegram answered and did not post it). Any other network
error (:class:`telegram.error.TimedOut` while reading, a dropped connection, an unknown
transport error) is not resent: it raises :class:`DeliveryUnknown` and is logged as an
error saying the message may or may not have arrived. Here a lost message is the smaller
harm than a duplicate that cannot be taken back; the intake then sends a reply once more,
headed as possibly repeated (:meth:`bot.intake.inbox.Inbox.send_again`), so nobody is left
silently unanswered. Of a reply in several messages, each one Telegram answered for is reported
(``progress.part_done``: the intake stores it), and a marked copy skips them (``progress.skip``), its first
message headed by ``progress.heading``. Edits are idempotent (an edit repeated is at
worst "not modified") and are retried after any network error.

Callers describe *where* with a :class:`Target`; a :class:`board.envelope.Reply`
becomes one with :meth:`Target.of`.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

import httpx
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, InputFile, Message, MessageEntity, ReplyParameters
from telegram.constants import ChatAction
from telegram.error import (
    BadRequest,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
)

from board.envelope import Button, Reply
from bot.channels.base import repeating
from bot.channels.reach import Reach
from bot.channels.telegram.departure import Departure, departing
from bot.channels.telegram.format import Chunk, Entity, plain_chunks, render, split_chunks, utf16_len
from bot.channels.telegram.inbound import quoted_message_id
from bot.channels.telegram.ratelimit import FloodControl
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress

log = logging.getLogger("sabha.telegram.outbound")

T = TypeVar("T")

TYPING_REFRESH_S = 4.5
GENERAL_THREAD_ID = 1


class ThreadNotFound(SendFailed):
    """The forum topic no longer exists (deleted, or the id is wrong)."""


class DeliveryUnknown(SendFailed):
    """The request may have reached Telegram (the answer was lost): not resent, see the module docstring."""

    def __init__(self, message: str) -> None:
        super().__init__(message, DeliveryOutcome.MAY_HAVE_ARRIVED)


@dataclass(frozen=True)
class Target:
    """Where a message goes: a chat, and a forum topic (None = General or a private chat).

    ``reply_to`` quotes the user's message in groups so parallel answers stay legible.
    """

    chat_id: int
    thread_id: int | None = None
    reply_to: int | None = None

    @classmethod
    def of(cls, reply: Reply) -> Target:
        """The place a board reply is addressed to (the place its question came from)."""
        return cls(chat_id=int(reply.chat_id), thread_id=reply.thread_id, reply_to=quoted_message_id(reply.reply_to))

    @property
    def topic(self) -> int | None:
        """The ``message_thread_id`` to send: only a real topic, never General's id 1."""
        if self.thread_id is None or self.thread_id == GENERAL_THREAD_ID or self.chat_id > 0:
            return None
        return self.thread_id

    def general(self) -> Target:
        """The same chat's General topic."""
        return Target(self.chat_id)


def retry_after_seconds(exc: RetryAfter) -> float:
    """``RetryAfter.retry_after`` as seconds (PTB 22 gives int or timedelta, see notes/telegram.md)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value: Any = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def proves_not_sent(exc: TelegramError) -> bool:
    """True when ``exc`` proves Telegram did not carry out the request, so a resend cannot duplicate it.

    PTB raises transport failures as ``NetworkError``/``TimedOut`` caused by the httpx
    exception, and HTTP error answers other than 400/401/403/404/409 (the 5xx) as a
    ``NetworkError`` with no transport cause.
    """
    if isinstance(exc, RetryAfter):
        return True
    cause = exc.__cause__
    if isinstance(exc, NeverLeft):
        return True
    if isinstance(cause, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.ProxyError)):
        return True  # no connection (or the proxy refused the tunnel): the request never left
    if type(exc) is NetworkError:
        return cause is None or isinstance(cause, TelegramError)  # the server answered with an error status
    return False


def network_failure(exc: TelegramError) -> str | None:
    """What happened, in one line, when ``exc`` says the Bot API could not be reached at all
    (no connection was made); None when Telegram answered or the request left."""
    cause = exc.__cause__
    if isinstance(cause, (httpx.ConnectError, httpx.ConnectTimeout)):
        return f"{type(cause).__name__}: {str(cause).strip() or 'no connection'}"
    return None


def answered(exc: TelegramError) -> bool:
    """True when ``exc`` is an answer of the Bot API (an error status), not a transport failure."""
    return not isinstance(exc, NetworkError) or isinstance(exc, BadRequest) or (
        type(exc) is NetworkError and (exc.__cause__ is None or isinstance(exc.__cause__, TelegramError)))


class NeverLeft(NetworkError):
    """A network error before any byte of the request was written (its departure never came: a proxy's
    tunnel refused, a SOCKS handshake or TLS failed): nothing can have been posted."""


async def _never_left(make: Callable[[], Awaitable[T]], departure: Departure | None) -> T:
    """``make()``; a transport error it raises before its request started to be written is :class:`NeverLeft`."""
    try:
        return await make()
    except NetworkError as exc:
        if departure is None or departure.left or departure.error is not None or not _uncertain(exc):
            raise
        raise NeverLeft(f"{exc.message} (before the request was written)") from exc


def _uncertain(exc: TelegramError) -> bool:
    """The request may have been carried out although it raised (the answer was lost)."""
    return isinstance(exc, NetworkError) and not isinstance(exc, BadRequest) and not proves_not_sent(exc)


def _is_parse_error(exc: BadRequest) -> bool:
    return "can't parse entities" in exc.message.lower() or "can't find end of" in exc.message.lower()


def _is_thread_missing(exc: BadRequest) -> bool:
    return "thread not found" in exc.message.lower() or "topic_deleted" in exc.message.lower()


def keyboard(buttons: tuple[Button, ...]) -> InlineKeyboardMarkup | None:
    """A reply's buttons as an inline keyboard (one row; ``callback_data`` is the button's command,
    at most 64 bytes as :class:`board.envelope.Button` checks); None without buttons."""
    if not buttons:
        return None
    return InlineKeyboardMarkup([[InlineKeyboardButton(b.label, callback_data=b.command) for b in buttons]])


def _rest(chunks: list[Chunk], skip: int, heading: str) -> list[Chunk]:
    """The messages of a reply after its first ``skip`` (posted for certain by an earlier try), the first of them
    headed by ``heading`` (split again if that makes it too long)."""
    rest = chunks[skip:]
    if not rest or not heading:
        return rest
    first = rest[0]
    prefix = f"{heading}\n\n"
    shift = utf16_len(prefix)
    entities = [Entity(e.type, e.offset + shift, e.length, e.url, e.language) for e in first.entities]
    return [*split_chunks(prefix + first.text, entities), *rest[1:]]


def _entities(chunk: Chunk) -> list[MessageEntity] | None:
    if not chunk.entities:
        return None
    return [MessageEntity(type=e.type, offset=e.offset, length=e.length, url=e.url, language=e.language)
            for e in chunk.entities]


class Outbound:
    """Sends, edits and shows typing for one bot; see the module docstring."""

    def __init__(self, bot: Bot, flood: FloodControl | None = None, *, max_retries: int = 3) -> None:
        self.bot = bot
        self.flood = flood or FloodControl()
        self.max_retries = max_retries
        self.sent = 0
        self.failed = 0
        self.retried_429 = 0
        self.plain_fallbacks = 0
        self.unknown = 0  # sends that may or may not have arrived (not resent)
        self.retry_delay_s = 0.5  # first backoff after a network error; doubles, at most 5 s
        self.reach: Reach | None = None  # told whether requests reach the Bot API (the channel's readiness)

    # -- the one send path -----------------------------------------------------------

    async def deliver(self, reply: Reply, *, progress: SendProgress | None = None) -> list[Message]:
        """Send a board reply to where its question was asked, headed ``<emoji> <Name>``, its buttons
        (an inline keyboard) under the last message it becomes."""
        return await self.send(Target.of(reply), reply.text, header=reply.label, progress=progress,
                               buttons=reply.buttons)

    async def send(self, target: Target, text: str, *, header: str = "",
                   progress: SendProgress | None = None, buttons: tuple[Button, ...] = ()) -> list[Message]:
        """Send ``text`` (Markdown) to ``target``; returns the messages Telegram created. ``buttons``
        go under the last of them (a press arrives as a ``callback_query``: :mod:`.inbound`).

        Raises :class:`ThreadNotFound` when the topic is gone and :class:`SendFailed` for
        anything else that could not be delivered after retries.
        """
        chunks = render(text, header) or render("(no text)", header)
        if progress is not None and progress.skip:
            chunks = _rest(chunks, progress.skip, progress.heading)
        sent: list[Message] = []
        for index, chunk in enumerate(chunks):
            quote = target.reply_to if index == 0 and target.chat_id < 0 else None
            markup = keyboard(buttons) if index == len(chunks) - 1 else None
            sent.append(await self._send_chunk(target, chunk, quote, progress, markup))
            if progress is not None:  # stored when more follow: after a stop, a marked copy starts after it
                await progress.part_done(index + 1, len(chunks))
        return sent

    async def _send_chunk(self, target: Target, chunk: Chunk, quote: int | None,
                          progress: SendProgress | None = None, markup: InlineKeyboardMarkup | None = None) -> Message:
        reply_parameters = ReplyParameters(message_id=quote, allow_sending_without_reply=True) if quote else None

        async def call(c: Chunk, last: bool = True) -> Message:
            return await self.bot.send_message(
                chat_id=target.chat_id,
                text=c.text,
                entities=_entities(c),
                message_thread_id=target.topic,
                reply_parameters=reply_parameters,
                parse_mode=None,
                reply_markup=markup if last else None,
            )

        try:
            message = await self._call(target, lambda: call(chunk), progress=progress)
        except BadRequest as exc:
            if not _is_parse_error(exc):
                raise self._failure(target, exc) from exc
            log.warning("telegram: chat %s thread %s: %s; resending as plain text",
                        target.chat_id, target.topic, exc.message)
            self.plain_fallbacks += 1
            plain = plain_chunks(chunk.text)
            final = len(plain) - 1
            try:
                messages = [await self._call(target, lambda p=p, last=i == final: call(p, last),  # type: ignore[misc]
                                             progress=progress)
                            for i, p in enumerate(plain)]
            except TelegramError as again:
                raise self._failure(target, again) from again
            message = messages[0]
        except TelegramError as exc:
            raise self._failure(target, exc) from exc
        self.sent += 1
        return message

    def _failure(self, target: Target, exc: TelegramError) -> SendFailed:
        self.failed += 1
        if _uncertain(exc):
            self.unknown += 1
            log.error("telegram: sending to chat %s thread %s failed after the request was sent (%s): the message "
                      "may or may not have been posted; the intake sends it once more, marked as possibly repeated",
                      target.chat_id, target.topic, exc)
            return DeliveryUnknown(f"the message to chat {target.chat_id} thread {target.topic} may not have "
                                   f"arrived ({exc}); not resent here: the intake sends it once more, marked as "
                                   "possibly repeated")
        unreachable = network_failure(exc)
        if unreachable:
            return SendFailed(f"network failure: cannot reach the Telegram Bot API ({unreachable}); the message to "
                              f"chat {target.chat_id} thread {target.topic} was not sent")
        if isinstance(exc, BadRequest) and _is_thread_missing(exc):
            return ThreadNotFound(
                f"topic {target.thread_id} of chat {target.chat_id} does not exist any more "
                "(deleted?); run `sabha telegram topics` and restart Sabha to recreate it"
            )
        if isinstance(exc, Forbidden):
            return SendFailed(f"Telegram refused to deliver to chat {target.chat_id}: {exc.message} "
                              "(blocked by the user, or the bot was removed from the group)")
        return SendFailed(f"could not send to chat {target.chat_id} thread {target.topic}: {exc.message}")

    async def open_topic(self, chat_id: int, name: str, *, progress: SendProgress | None = None) -> int:
        """Create a forum topic named ``name`` (``createForumTopic``, under the chat's budget; like a message,
        not resent after an error that does not prove it was not made); its thread id. Raises :class:`SendFailed`."""
        target = Target(chat_id)
        try:
            topic = await self._call(target, lambda: self.bot.create_forum_topic(chat_id=chat_id, name=name),
                                     progress=progress)
        except TelegramError as exc:
            raise self._failure(target, exc) from exc
        return int(topic.message_thread_id)

    async def send_voice(self, target: Target, data: bytes) -> Message:
        """Send ``data`` (OGG/Opus) as a voice message to ``target`` (its topic, as for text), under
        flood control; resent only when it cannot have been posted. Raises :class:`SendFailed`."""
        try:
            message = await self._call(target, lambda: self.bot.send_voice(
                chat_id=target.chat_id, voice=InputFile(data, filename="answer.ogg"),
                message_thread_id=target.topic))
        except TelegramError as exc:
            raise self._failure(target, exc) from exc
        self.sent += 1
        return message

    async def deliver_over(self, message_id: int, reply: Reply, progress: SendProgress, *,
                           before_resend: Callable[[], Awaitable[None]] | None = None) -> bool:
        """A board reply put into an earlier message of ours (the "working on it" notice): its
        first chunk edited in, the rest sent after it, so no notice is left behind.

        When Telegram refuses the edit (so the notice is unchanged) the reply is sent as new
        messages instead (``before_resend`` awaited first: a record saying the reply may be edited
        over ``message_id`` again must go before a new message can exist); when the edit may or
        may not have been made, nothing is resent
        (:class:`DeliveryUnknown`): never the answer twice. True when the edit was made, False when
        the reply went out as new messages.
        """
        target = Target.of(reply)
        chunks = render(reply.text, reply.label) or render("(no text)", reply.label)
        first = chunks[0]
        markup = keyboard(reply.buttons)
        try:
            await self._call(target, lambda: self.bot.edit_message_text(
                text=first.text, chat_id=target.chat_id, message_id=message_id,
                entities=_entities(first), parse_mode=None, reply_markup=markup if len(chunks) == 1 else None),
                idempotent=True, progress=progress)
        except TelegramError as exc:
            if isinstance(exc, BadRequest) and "not modified" in exc.message.lower():
                progress.posted += 1  # it already shows the answer's first message: that part is there
            elif _uncertain(exc):
                raise self._failure(target, exc) from exc
            else:
                log.warning("telegram: could not edit the notice %s in chat %s into the answer (%s); sending the "
                            "answer as a new message", message_id, target.chat_id, exc)
                if before_resend is not None:
                    await before_resend()
                await self.send(target, reply.text, header=reply.label, progress=progress, buttons=reply.buttons)
                return False
        self.sent += 1
        await progress.part_done(1, len(chunks))
        for index, chunk in enumerate(chunks[1:], start=1):
            await self._send_chunk(target, chunk, None, progress, markup if index == len(chunks) - 1 else None)
            await progress.part_done(index + 1, len(chunks))
        return True

    async def edit(self, target: Target, message_id: int, text: str, *, header: str = "") -> bool:
        """Replace a message's text (first chunk only); False if Telegram refused."""
        chunks = render(text, header)
        if not chunks:
            return False
        chunk = chunks[0]
        try:
            return await self._edit_outcome(target, message_id, self._call(target, lambda: self.bot.edit_message_text(
                text=chunk.text, chat_id=target.chat_id, message_id=message_id,
                entities=_entities(chunk), parse_mode=None,
            ), idempotent=True))
        except RetryAfter as exc:  # still flooded after the retries
            log.warning("telegram: editing message %s in chat %s failed: %s", message_id, target.chat_id, exc)
            return False

    async def edit_buttons(self, target: Target, message_id: int, buttons: tuple[Button, ...]) -> bool:
        """Replace the buttons under a message of ours (none: take them off); False if Telegram refused
        (logged; "not modified" counts as done). Idempotent, so retried after network errors."""
        try:
            return await self._edit_outcome(target, message_id, self._call(
                target, lambda: self.bot.edit_message_reply_markup(
                    chat_id=target.chat_id, message_id=message_id, reply_markup=keyboard(buttons)), idempotent=True))
        except RetryAfter as exc:
            log.warning("telegram: changing the buttons of message %s in chat %s failed: %s", message_id,
                        target.chat_id, exc)
            return False

    async def answer_press(self, query_id: str, text: str, *, alert: bool = False) -> bool:
        """Answer a button press (``answerCallbackQuery``: the client's spinner stops, ``text`` shows as a
        toast, or a dialog with ``alert``). Best effort: False (logged) when Telegram refused (a query
        answered already or too old) or could not be reached."""
        try:
            await self.bot.answer_callback_query(query_id, text=text[:200], show_alert=alert)
        except TelegramError as exc:
            log.info("telegram: answering button press %s failed (%s); its command was stored all the same",
                     query_id, exc)
            return False
        return True

    @staticmethod
    async def _edit_outcome(target: Target, message_id: int, edit: Awaitable[object]) -> bool:
        """Await an edit: True if the message shows the text (also "not modified"), False if refused
        (logged). RetryAfter propagates to the caller."""
        try:
            await edit
        except RetryAfter:
            raise
        except BadRequest as exc:
            if "not modified" in exc.message.lower():
                return True
            log.warning("telegram: editing message %s in chat %s failed: %s", message_id, target.chat_id, exc.message)
            return False
        except TelegramError as exc:
            log.warning("telegram: editing message %s in chat %s failed: %s", message_id, target.chat_id, exc)
            return False
        return True

    async def post_draft(self, target: Target, text: str, *, header: str = "") -> Message:
        """The first message of a streamed answer: ``text``'s first chunk (a streamed preview is cut at
        the limit; the final answer continues in more messages). Resent only when it cannot have been
        posted; raises :class:`SendFailed` (:class:`DeliveryUnknown`: it may have been posted)."""
        chunk = (render(text, header) or render("…", header))[0]
        quote = target.reply_to if target.chat_id < 0 else None
        return await self._send_chunk(target, chunk, quote)

    async def edit_if_idle(self, target: Target, message_id: int, text: str, *, reserve: int = 0,
                           header: str = "") -> bool | None:
        """A low-priority edit (a status line): made only if the chat's budget can spare a token
        right now (nobody waiting, ``reserve`` tokens left for others), never waiting or retrying.

        None: skipped for lack of budget (try again later); True: the message shows ``text``;
        False: Telegram refused (logged).
        """
        chunks = render(text, header)
        if not chunks:
            return False
        if not self.flood.try_acquire(target.chat_id, reserve):
            return None
        chunk = chunks[0]
        try:
            return await self._edit_outcome(target, message_id, self.bot.edit_message_text(
                text=chunk.text, chat_id=target.chat_id, message_id=message_id,
                entities=_entities(chunk), parse_mode=None))
        except RetryAfter as exc:
            self.flood.pause(target.chat_id, retry_after_seconds(exc))
            self.retried_429 += 1
            return None

    # -- flood control and retries ---------------------------------------------------

    async def _call(self, target: Target, make: Callable[[], Awaitable[T]], *, idempotent: bool = False,
                    progress: SendProgress | None = None) -> T:
        """One API call under flood control, retried after 429s and after the network errors
        :func:`proves_not_sent` allows (any network error when ``idempotent``). ``progress`` is told
        (``leaving``) when the request starts to be written, not before: while it waits for a pooled
        connection nothing has left (:mod:`bot.channels.telegram.departure`)."""
        attempt = 0
        while True:
            attempt += 1
            await self.flood.acquire(target.chat_id)
            try:
                with departing(progress) as departure:  # "sending" is marked as the request starts to leave
                    result = await _never_left(make, departure)
            except TelegramError as exc:
                if departure is not None:
                    departure.reraise()  # the mark could not be stored: nothing left
                self._reached(exc)
                if progress is not None and not _uncertain(exc):
                    await progress.nothing_posted()  # Telegram answered: this request posted nothing
                if isinstance(exc, RetryAfter):
                    seconds = retry_after_seconds(exc)
                    self.flood.pause(target.chat_id, seconds)
                    self.retried_429 += 1
                    if attempt > self.max_retries:
                        log.error("telegram: chat %s still flood-limited after %d attempts; giving up on this "
                                  "message", target.chat_id, attempt)
                        raise
                    log.warning("telegram: flood control on chat %s: waiting %.1f s, then retrying (attempt %d)",
                                target.chat_id, seconds, attempt + 1)
                    continue
                if not isinstance(exc, NetworkError) or isinstance(exc, BadRequest):
                    raise
                # a network error (TimedOut included)
                if not (idempotent or proves_not_sent(exc)):
                    raise  # it may have arrived: resending could post it twice (see the module docstring)
                if attempt > self.max_retries:
                    raise
                delay = min(self.retry_delay_s * 2 ** (attempt - 1), 5.0)
                unreachable = network_failure(exc)
                if unreachable:
                    log.warning("telegram: network failure sending to chat %s: cannot reach the Telegram Bot API "
                                "(%s); retrying in %.1f s", target.chat_id, unreachable, delay)
                else:
                    log.warning("telegram: network error sending to chat %s (%s); retrying in %.1f s",
                                target.chat_id, exc, delay)
                await asyncio.sleep(delay)
                continue
            if self.reach is not None:
                self.reach.reached()
            if progress is not None:
                progress.in_flight = False
                progress.posted += 1
            return result

    def _reached(self, exc: TelegramError) -> None:
        """Tell :attr:`reach` what a failed request says about the Bot API."""
        if self.reach is None:
            return
        unreachable = network_failure(exc)
        if unreachable:
            self.reach.lost(unreachable)
        elif answered(exc):
            self.reach.reached()

    # -- typing ----------------------------------------------------------------------

    async def typing(self, target: Target) -> None:
        """Show "typing…" in the target's topic (best effort, never raises)."""
        if self.flood.paused_for(target.chat_id) > 0:
            return
        try:
            await self.bot.send_chat_action(chat_id=target.chat_id, action=ChatAction.TYPING,
                                            message_thread_id=target.topic)
        except TelegramError as exc:
            log.debug("telegram: typing action in chat %s failed: %s", target.chat_id, exc)

    def keep_typing(self, target: Target, interval: float = TYPING_REFRESH_S,
                    after: float = 0.0) -> AbstractAsyncContextManager[None]:
        """Show typing in ``target`` once the block has run ``after`` s, until it ends (refreshed every ``interval``
        s); a block that ends sooner shows none."""
        return repeating(lambda: self.typing(target), interval, f"typing {target.chat_id}/{target.topic}", after=after)
