"""A local fake of the Telegram Bot API for tests.

Owns: an aiohttp server on ``127.0.0.1:<port 0>`` that speaks enough of the Bot API for
python-telegram-bot v22 (PTB) to run unmodified against it, a recorder of every call,
hooks that queue incoming updates (served by ``getUpdates`` long polling or posted to a
webhook), and failure injection that answers with Telegram's real error envelopes.

Usage::

    async with FakeTelegramAPI() as fake:
        app = ApplicationBuilder().token("123:ABC").base_url(fake.base_url).build()
        ...
        fake.push_text(chat_id=-1001, user_id=42, text="hi", thread_id=fake.add_topic(-1001))
        [params] = await fake.wait_for_call("sendMessage")

Realism notes (what the real server does, and so does this fake):

* PTB v22 posts ``application/x-www-form-urlencoded`` (``multipart/form-data`` when
  uploading): strings verbatim, everything else JSON-encoded (``"123"``, ``"[{...}]"``).
  The fake also accepts a JSON body and query parameters. Method names are matched
  case-insensitively, as Telegram does.
* ``getUpdates`` keeps an update until a later call confirms it with
  ``offset > update_id``; ``timeout`` long-polls, capped at :attr:`long_poll_cap` seconds.
  A newer ``getUpdates`` ends a waiting one with 409 "terminated by other getUpdates
  request"; ``getUpdates`` while a webhook is set is a 409 too.
* Messages in a forum's *General* topic carry no ``message_thread_id``. Messages in any
  other topic carry ``message_thread_id`` + ``is_topic_message: true`` and, unless they
  reply to something else, ``reply_to_message`` = the topic's ``forum_topic_created``
  service message (switch off with ``topic_root_reply=False``).
* Topic ids are message ids (the id of the topic's service message), so they come from
  the same per-chat counter as message ids.
* In a forum, ``sendMessage`` to an unknown thread -- including the General topic's
  id 1 -- fails with 400 "message thread not found" (``strict_threads``); so does
  ``sendChatAction``, except that it accepts 1 (reported to be how General shows typing).
* ``sendMessage`` rejects empty text and text over 4096 UTF-16 code units;
  ``editMessageText`` with unchanged content gives 400 "message is not modified".
* Unknown methods answer ``{"ok": true, "result": true}`` and are recorded.
* :meth:`FakeTelegramAPI.drop_next` does a call's work and then hangs up without an
  answer (the client gets a network error for a message that was posted).
* Files: :meth:`FakeTelegramAPI.add_file` stores bytes under a ``file_id``; ``getFile``
  answers ``{file_id, file_unique_id, file_size, file_path}`` and the bytes are served at
  ``/file/bot<token>/<file_path>`` (PTB's ``base_file_url`` is :attr:`base_file_url`), in
  chunks, slowed by :attr:`download_delay` per chunk. An unknown (or forgotten) ``file_id``
  gets Telegram's 400 "wrong file_id or the file is temporarily unavailable"; a file over
  20 MB gets 400 "file is too big" (bots may download at most 20 MB); a path nobody was
  given is a 404. ``sendVoice`` (multipart, the OGG/Opus bytes in ``voice``) is recorded in
  :attr:`sent_voices`. Update builders for every kind of media message are
  :meth:`build_media_update` with :func:`photo`, :func:`voice`, :func:`document` ...
  (shapes as the Bot API documents them).
* Several bots: :meth:`FakeTelegramAPI.add_bot` makes another token valid (a role's own bot), with its own
  ``getMe`` identity; every sent message records the token that sent it (:attr:`SentMessage.token`) and is
  ``from`` that bot. A token neither the main one nor added is refused with 401 "Unauthorized" (when ``token``
  is set), as Telegram refuses a revoked token. ``sendChatAction`` calls are kept in :attr:`FakeTelegramAPI.actions`.
* Buttons: ``sendMessage`` keeps ``reply_markup`` on the message; ``editMessageReplyMarkup``
  replaces it (400 "message is not modified" when it is the same; recorded in
  :attr:`FakeTelegramAPI.edited_markups`). :meth:`FakeTelegramAPI.push_press` queues a
  ``callback_query`` update as Telegram sends one when a user presses an inline button (its
  ``message`` is the message as it is now, its ``data`` the button's ``callback_data``).
  ``answerCallbackQuery`` is recorded in :attr:`FakeTelegramAPI.answered_presses`; answering an
  unknown query, or one a second time, is Telegram's 400 "query is too old and response timeout
  expired or query ID is invalid".
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from aiohttp import ClientSession, web

from tests.support.fakes.local_server import PortKeeper, serve_kept

JSONDict = dict[str, Any]

#: The token of the request being handled (a task's context: aiohttp handles each request in its own task)
_TOKEN: ContextVar[str] = ContextVar("fake_telegram_token", default="")

#: Parameters Telegram defines as strings; form values for these are never JSON-decoded,
#: so a message text like ``"123"`` or ``"true"`` stays a string.
STRING_PARAMS = frozenset(
    {
        "text",
        "caption",
        "name",
        "title",
        "description",
        "short_description",
        "parse_mode",
        "caption_parse_mode",
        "action",
        "url",
        "secret_token",
        "ip_address",
        "icon_custom_emoji_id",
        "language_code",
        "inline_message_id",
        "callback_query_id",
        "business_connection_id",
        "message_effect_id",
        "custom_title",
        "emoji",
        "query",
        "switch_pm_text",
        "switch_pm_parameter",
    }
)

DEFAULT_TOPIC_ICON_COLOR = 7322096  # 0x6FB9F0, the first of Telegram's allowed colours
MAX_MESSAGE_UTF16 = 4096
MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024  # what bots may download
WRONG_FILE_ID = "Bad Request: wrong file_id or the file is temporarily unavailable"
FILE_TOO_BIG = "Bad Request: file is too big"
DOWNLOAD_CHUNK = 64 * 1024

_HTTP_DEFAULT_DESCRIPTIONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden: bot was blocked by the user",
    404: "Not Found",
    409: "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running",
    500: "Internal Server Error",
    502: "Bad Gateway",
}

_COMMAND_RE = re.compile(r"^/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,64})?")
_MENTION_RE = re.compile(r"(?<![\w@])@[A-Za-z][A-Za-z0-9_]{3,31}\b")


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (Telegram's unit for lengths and offsets)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _as_chat_id(value: Any) -> int | str:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return value
    return value


def _as_int(value: Any) -> int | None:
    if value is None or value == "":
        return None
    return int(value)


class ApiError(Exception):
    """An error answer of the Bot API: ``{"ok": false, "error_code", "description"...}``."""

    def __init__(self, status: int, description: str, parameters: JSONDict | None = None):
        super().__init__(description)
        self.status = status
        self.description = description
        self.parameters = parameters

    def envelope(self) -> JSONDict:
        body: JSONDict = {"ok": False, "error_code": self.status, "description": self.description}
        if self.parameters:
            body["parameters"] = dict(self.parameters)
        return body

    def response(self) -> web.Response:
        return web.json_response(self.envelope(), status=self.status)


@dataclass(frozen=True)
class SentMessage:
    """One successful ``sendMessage`` (or ``editMessageText``) as the fake saw it.

    ``message_thread_id`` is what the caller *sent* (``None`` when the parameter was
    omitted); ``result`` is the Message object returned, where Telegram may have put the
    message into a thread anyway (a reply lands in the replied message's topic).
    """

    chat_id: int | str
    message_id: int
    text: str
    message_thread_id: int | None
    entities: list[JSONDict] | None
    parse_mode: str | None
    reply_parameters: JSONDict | None
    reply_markup: JSONDict | None
    params: JSONDict = field(repr=False)
    result: JSONDict = field(repr=False)
    token: str = ""  # the bot token that sent it


@dataclass
class FakeFile:
    """A file the fake serves: ``size`` is what ``getFile`` and updates declare (default: the
    real length; set it to lie)."""

    file_id: str
    file_unique_id: str
    data: bytes
    file_path: str
    size: int

    def ref(self) -> JSONDict:
        """The three fields every file object of an update carries."""
        return {"file_id": self.file_id, "file_unique_id": self.file_unique_id, "file_size": self.size}


@dataclass(frozen=True)
class SentVoice:
    """One successful ``sendVoice``: where it went and the bytes uploaded."""

    chat_id: int | str
    message_id: int
    message_thread_id: int | None
    data: bytes
    content_type: str | None
    params: JSONDict = field(repr=False)


def photo(*files: FakeFile, side: int = 90) -> JSONDict:
    """A ``photo`` field: one PhotoSize per file, smallest first (as Telegram sends them)."""
    return {"photo": [{**f.ref(), "width": side * (i + 1), "height": side * (i + 1) * 3 // 4}
                      for i, f in enumerate(files)]}


def voice(file: FakeFile, duration: int = 3, mime_type: str = "audio/ogg") -> JSONDict:
    """A ``voice`` field: a voice note recorded in the app."""
    return {"voice": {**file.ref(), "duration": duration, "mime_type": mime_type}}


def audio(file: FakeFile, duration: int = 60, file_name: str = "song.mp3", mime_type: str = "audio/mpeg") -> JSONDict:
    """An ``audio`` field: a music file."""
    return {"audio": {**file.ref(), "duration": duration, "file_name": file_name, "mime_type": mime_type,
                      "performer": "Someone", "title": "A song"}}


def document(file: FakeFile, file_name: str = "notes.txt", mime_type: str | None = "text/plain") -> JSONDict:
    """A ``document`` field: a file sent as a file."""
    doc: JSONDict = {**file.ref(), "file_name": file_name}
    if mime_type is not None:
        doc["mime_type"] = mime_type
    return {"document": doc}


def video(file: FakeFile, duration: int = 5) -> JSONDict:
    """A ``video`` field."""
    return {"video": {**file.ref(), "width": 640, "height": 360, "duration": duration, "mime_type": "video/mp4",
                      "file_name": "clip.mp4"}}


def video_note(file: FakeFile, duration: int = 4) -> JSONDict:
    """A ``video_note`` field: a round video message."""
    return {"video_note": {**file.ref(), "length": 240, "duration": duration}}


def animation(file: FakeFile) -> JSONDict:
    """An ``animation`` (a GIF as MPEG-4); Telegram also sends it as ``document``, for old clients."""
    body = {**file.ref(), "width": 320, "height": 240, "duration": 2, "file_name": "funny.mp4",
            "mime_type": "video/mp4"}
    return {"animation": body, "document": {k: body[k] for k in ("file_id", "file_unique_id", "file_size",
                                                                  "file_name", "mime_type")}}


def sticker(file: FakeFile, *, animated: bool = False, is_video: bool = False, emoji: str = "👍") -> JSONDict:
    """A ``sticker`` field: static WebP, animated (TGS) or video (WebM)."""
    return {"sticker": {**file.ref(), "type": "regular", "width": 512, "height": 512, "emoji": emoji,
                        "set_name": "SomeSet", "is_animated": animated, "is_video": is_video}}


def location(latitude: float, longitude: float) -> JSONDict:
    """A ``location`` field."""
    return {"location": {"latitude": latitude, "longitude": longitude}}


def venue(latitude: float, longitude: float, title: str, address: str) -> JSONDict:
    """A ``venue`` message: Telegram sends ``location`` beside it."""
    where = {"latitude": latitude, "longitude": longitude}
    return {"venue": {"location": where, "title": title, "address": address}, "location": where}


def contact(phone_number: str, first_name: str, last_name: str | None = None, user_id: int | None = None) -> JSONDict:
    """A ``contact`` field: a shared contact card."""
    card: JSONDict = {"phone_number": phone_number, "first_name": first_name}
    if last_name:
        card["last_name"] = last_name
    if user_id is not None:
        card["user_id"] = user_id
    return {"contact": card}


class FakeTelegramAPI:
    """A fake Telegram Bot API server for tests; see the module docstring.

    Args:
        token: when set, requests whose URL carries another token get 401 "Unauthorized"
            (PTB raises ``telegram.error.InvalidToken``). ``None`` accepts any token.
        bot_id, bot_username, bot_first_name: the identity ``getMe`` reports.
        default_is_forum: whether an unconfigured supergroup (negative chat id) is a forum.
        can_manage_topics: whether the bot may create topics (else ``createForumTopic``
            fails with 400 "not enough rights to create a topic").
        long_poll_cap: the most seconds ``getUpdates`` waits, whatever ``timeout`` asks.
        strict_threads: reject unknown ``message_thread_id`` in forum chats.
        topic_root_reply: give topic messages Telegram's implicit ``reply_to_message``.
    """

    def __init__(
        self,
        *,
        token: str | None = None,
        bot_id: int = 7000000001,
        bot_username: str = "sabha_test_bot",
        bot_first_name: str = "Sabha Test Bot",
        default_is_forum: bool = True,
        can_manage_topics: bool = True,
        long_poll_cap: float = 1.0,
        strict_threads: bool = True,
        topic_root_reply: bool = True,
    ) -> None:
        self.token = token
        self.bot_user: JSONDict = {
            "id": bot_id,
            "is_bot": True,
            "first_name": bot_first_name,
            "username": bot_username,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }
        self.default_is_forum = default_is_forum
        self.can_manage_topics = can_manage_topics
        self.long_poll_cap = long_poll_cap
        self.strict_threads = strict_threads
        self.topic_root_reply = topic_root_reply

        # --- records a test inspects ---
        self.calls: list[tuple[str, JSONDict]] = []
        self.call_times: list[float] = []  # time.monotonic() per entry of `calls`
        self.sent_messages: list[SentMessage] = []
        self.edited_messages: list[SentMessage] = []
        self.created_topics: list[JSONDict] = []  # ForumTopic dicts plus "chat_id"
        self.commands: dict[tuple[str, str], list[JSONDict]] = {}  # (scope json, lang)
        self.webhook: JSONDict | None = None  # the last setWebhook params while set
        self.in_flight: Counter[str] = Counter()
        self.max_in_flight: Counter[str] = Counter()
        self.sent_voices: list[SentVoice] = []
        self.downloads: list[str] = []  # file paths whose download began
        self.download_delay = 0.0  # seconds slept before each chunk of a download
        self.files: dict[str, FakeFile] = {}
        self.answered_presses: list[JSONDict] = []  # answerCallbackQuery params, in order
        self.edited_markups: list[JSONDict] = []  # editMessageReplyMarkup params that changed a message
        self.presses: dict[str, JSONDict] = {}  # callback query id -> the query pushed
        self.bots: dict[str, JSONDict] = {}  # another valid token -> its bot user (add_bot)
        self.actions: list[JSONDict] = []  # sendChatAction params (plus "token"), in order
        self._press_ids = itertools.count(9_000_001)

        # --- state ---
        self.chats: dict[int | str, JSONDict] = {}
        self.topics: dict[int | str, dict[int, str]] = {}  # chat -> {thread id: name}
        self.messages: dict[tuple[int | str, int], JSONDict] = {}
        self.members: dict[tuple[int | str, int], JSONDict] = {}
        self.delays: dict[str, float] = {}  # lower-case method -> seconds
        self.held: Counter[str] = Counter()  # lower-case method -> requests done but their answer held (hold())
        self._holds: dict[str, tuple[asyncio.Event, str | None]] = {}  # method -> gate, the text it holds
        self._failures: dict[str, list[ApiError]] = {}
        self._drops: dict[str, int] = {}
        self._pending_updates: list[JSONDict] = []
        self._update_ids = itertools.count(500_000_001)
        self._message_ids: dict[int | str, itertools.count[int]] = {}
        self._poll_generation = 0
        self._updates_event = asyncio.Event()
        self._changed = asyncio.Event()
        self._closing = False

        self._runner: web.AppRunner | None = None
        self.port: int | None = None
        self._keeper = PortKeeper()
        self._methods = {
            "getme": self._get_me,
            "getupdates": self._get_updates,
            "deletewebhook": self._delete_webhook,
            "setwebhook": self._set_webhook,
            "getwebhookinfo": self._get_webhook_info,
            "setmycommands": self._set_my_commands,
            "getmycommands": self._get_my_commands,
            "deletemycommands": self._delete_my_commands,
            "getchat": self._get_chat,
            "createforumtopic": self._create_forum_topic,
            "editforumtopic": self._edit_forum_topic,
            "deleteforumtopic": self._delete_forum_topic,
            "sendmessage": self._send_message,
            "editmessagetext": self._edit_message_text,
            "sendchataction": self._send_chat_action,
            "getchatmember": self._get_chat_member,
            "getchatadministrators": self._get_chat_administrators,
            "getfile": self._get_file,
            "sendvoice": self._send_voice,
            "answercallbackquery": self._answer_callback_query,
            "editmessagereplymarkup": self._edit_message_reply_markup,
        }
        self._file_ids = itertools.count(1)

    # ------------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/bot`` -- pass to ``ApplicationBuilder().base_url()``."""
        if self.port is None:
            raise RuntimeError("FakeTelegramAPI is not started; call `await fake.start()`")
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        """``http://127.0.0.1:PORT/file/bot`` -- PTB's ``base_file_url``."""
        return self.base_url.replace("/bot", "/file/bot")

    @property
    def bot_id(self) -> int:
        return int(self.bot_user["id"])

    async def start(self) -> str:
        """Serve on 127.0.0.1 on a free port (after :meth:`stop`: the port it had); return :attr:`base_url`."""
        if self._runner is not None:
            return self.base_url
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        self._closing = False
        self._runner, self.port = await serve_kept(app, self._keeper, handle_signals=False, shutdown_timeout=1.0)
        return self.base_url

    async def restart(self) -> str:
        """Serve again on the port it had before :meth:`stop` (the Bot API comes back); return :attr:`base_url`."""
        assert self.port is not None, "restart() is for a fake that was started and stopped"
        return await self.start()

    async def stop(self) -> None:
        """Wake any long poll and shut the server down; its port stays taken (connections are refused) for
        :meth:`restart` until :meth:`release_port` (:class:`.local_server.PortKeeper`)."""
        self._closing = True
        self._pulse_updates()
        self._pulse()
        for method in list(self._holds):
            self.release(method)
        if self._runner is not None:
            runner, self._runner = self._runner, None
            self._keeper.keep()
            await runner.cleanup()

    def release_port(self) -> None:
        """Free the port a stopped fake keeps."""
        self._keeper.release()

    async def __aenter__(self) -> FakeTelegramAPI:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
        self.release_port()

    # ------------------------------------------------------------------ configuration

    def set_chat(
        self,
        chat_id: int | str,
        *,
        chat_type: str = "supergroup",
        title: str = "Sabha Board",
        is_forum: bool = True,
        first_name: str = "Owner",
        username: str | None = None,
    ) -> JSONDict:
        """Declare a chat (what ``getChat`` and message objects report for it)."""
        chat: JSONDict = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = first_name
        else:
            chat["title"] = title
            if is_forum and chat_type == "supergroup":
                chat["is_forum"] = True
        if username:
            chat["username"] = username
        self.chats[chat_id] = chat
        return chat

    def add_topic(self, chat_id: int | str, name: str = "Topic") -> int:
        """Create a topic directly (no API call recorded); return its message_thread_id."""
        chat = self._chat(chat_id)
        if not chat.get("is_forum"):
            self.set_chat(chat_id, title=chat.get("title", "Sabha Board"), is_forum=True)
        thread_id = self._next_message_id(chat_id)
        self.topics.setdefault(chat_id, {})[thread_id] = name
        return thread_id

    def add_bot(self, token: str, *, bot_id: int, username: str, first_name: str) -> JSONDict:
        """Make ``token`` a valid bot of its own (``getMe`` answers its identity; its messages are ``from`` it)."""
        user = {**self.bot_user, "id": bot_id, "username": username, "first_name": first_name}
        self.bots[token] = user
        return user

    def sent_by(self, token: str) -> list[SentMessage]:
        """The messages sent with ``token``."""
        return [m for m in self.sent_messages if m.token == token]

    def deny_topic_creation(self, deny: bool = True) -> None:
        """Make ``createForumTopic`` fail with 400 "not enough rights to create a topic"."""
        self.can_manage_topics = not deny

    def set_member(self, chat_id: int | str, user_id: int, status: str = "member") -> None:
        """Set what ``getChatMember`` reports for a user.

        ``status``: "creator", "administrator", "member", "left" or "kicked".
        """
        user = {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"}
        self.members[(chat_id, user_id)] = self._member(user, status)

    def hold(self, method: str, *, containing: str | None = None) -> None:
        """From now on a ``method`` call is carried out (a ``createForumTopic`` makes its topic) but its answer
        waits (counted in :attr:`held`, by lower-case method) until :meth:`release`: a test can kill the daemon
        after Telegram acted and before the daemon heard, on a busy machine too. With ``containing``, only calls
        whose ``text`` carries it are held (the others are answered at once)."""
        self._holds.setdefault(method.lower(), (asyncio.Event(), containing))

    def release(self, method: str) -> None:
        """Let the held answers to ``method`` (and all later ones) go."""
        held = self._holds.pop(method.lower(), None)
        if held is not None:
            held[0].set()

    def set_delay(self, method: str, seconds: float) -> None:
        """Delay every answer to ``method`` (e.g. "sendMessage") by ``seconds``."""
        self.delays[method.lower()] = seconds

    def fail_next(
        self,
        method: str,
        status: int = 429,
        description: str | None = None,
        retry_after: int | None = None,
        *,
        times: int = 1,
        parameters: JSONDict | None = None,
    ) -> None:
        """Make the next ``times`` calls of ``method`` fail with Telegram's error envelope.

        ``status=429`` gives ``{"ok": false, "error_code": 429, "description": "Too Many
        Requests: retry after N", "parameters": {"retry_after": N}}`` (N defaults to 1),
        which PTB raises as ``telegram.error.RetryAfter``.
        """
        params = dict(parameters or {})
        if status == 429:
            retry_after = 1 if retry_after is None else retry_after
            description = description or f"Too Many Requests: retry after {retry_after}"
        if retry_after is not None:
            params["retry_after"] = retry_after
        if description is None:
            description = _HTTP_DEFAULT_DESCRIPTIONS.get(status, "Internal Server Error")
        queue = self._failures.setdefault(method.lower(), [])
        queue.extend(ApiError(status, description, params or None) for _ in range(times))

    def drop_next(self, method: str, *, times: int = 1) -> None:
        """Carry out the next ``times`` calls of ``method`` (a ``sendMessage`` posts its message),
        then close the connection without an answer, as when the response is lost on the way
        back: the client sees a network error although Telegram did the work."""
        self._drops[method.lower()] = self._drops.get(method.lower(), 0) + times

    def fail_next_parse_error(
        self,
        method: str = "sendMessage",
        detail: str = "can't find end of the entity starting at byte offset 12",
        *,
        times: int = 1,
    ) -> None:
        """The next ``method`` call fails with 400 "Bad Request: can't parse entities: ..."."""
        self.fail_next(method, 400, f"Bad Request: can't parse entities: {detail}", times=times)

    def add_file(self, data: bytes, *, name: str = "file.bin", size: int | None = None) -> FakeFile:
        """Store ``data`` as a file the bot may ``getFile`` and download (``size``: what Telegram
        declares for it, when it should differ from the real length)."""
        n = next(self._file_ids)
        file_id = f"AgACAgQAAxkBAAI{n:06d}FakeFileId"
        item = FakeFile(file_id=file_id, file_unique_id=f"AQAD{n:04d}uq", data=data,
                        file_path=f"documents/file_{n}_{name}", size=len(data) if size is None else size)
        self.files[file_id] = item
        return item

    def forget_file(self, file_id: str) -> None:
        """Telegram no longer knows ``file_id`` (getFile: 400 wrong file_id; its path: 404)."""
        self.files.pop(file_id, None)

    def build_media_update(self, chat_id: int | str, user_id: int, media: JSONDict, caption: str | None = None,
                           **kwargs: Any) -> JSONDict:
        """Like :meth:`build_text_update`, for a message carrying ``media`` (the fields of
        :func:`photo`, :func:`voice`, :func:`document` ...) and an optional ``caption`` instead of text."""
        update = self.build_text_update(chat_id, user_id, "", **kwargs)
        msg = update["message"]
        del msg["text"]
        msg.update(media)
        if caption is not None:
            msg["caption"] = caption
        return update

    def push_media(self, chat_id: int | str, user_id: int, media: JSONDict, caption: str | None = None,
                   **kwargs: Any) -> JSONDict:
        """:meth:`build_media_update` + :meth:`push_update`."""
        return self.push_update(self.build_media_update(chat_id, user_id, media, caption, **kwargs))

    def clear_records(self) -> None:
        """Forget recorded calls and messages (state such as chats and topics is kept)."""
        self.calls.clear()
        self.call_times.clear()
        self.sent_messages.clear()
        self.edited_messages.clear()
        self.created_topics.clear()
        self.max_in_flight.clear()
        self.sent_voices.clear()
        self.downloads.clear()
        self.answered_presses.clear()
        self.edited_markups.clear()

    # ------------------------------------------------------------------ incoming updates

    def push_update(self, update: JSONDict) -> JSONDict:
        """Queue a raw Update dict for ``getUpdates``; assigns ``update_id`` if missing."""
        update = dict(update)
        if "update_id" not in update:
            update["update_id"] = next(self._update_ids)
        else:
            uid = int(update["update_id"])
            self._update_ids = itertools.count(max(uid + 1, next(self._update_ids)))
        for key in ("message", "edited_message", "channel_post"):
            msg = update.get(key)
            if isinstance(msg, dict) and "chat" in msg and "message_id" in msg:
                self.messages[(msg["chat"]["id"], msg["message_id"])] = msg
        self._pending_updates.append(update)
        self._pulse_updates()
        return update

    def build_text_update(
        self,
        chat_id: int | str,
        user_id: int,
        text: str,
        thread_id: int | None = None,
        is_forum: bool = True,
        chat_type: str | None = None,
        *,
        first_name: str = "Test",
        username: str | None = "tester",
        chat_title: str = "Sabha Board",
        reply_to_message_id: int | None = None,
        update_id: int | None = None,
    ) -> JSONDict:
        """Build (without queueing) a realistic text-message Update dict, ``update_id``
        included, ready for ``Update.de_json(data, bot)`` or :meth:`deliver_webhook`.

        ``chat_type`` defaults to "private" for a positive ``chat_id`` and "supergroup"
        otherwise. With ``thread_id`` in a forum the message gets ``message_thread_id`` and
        ``is_topic_message: true``; without it (the General topic) it gets neither -- except
        that a reply (``reply_to_message_id``) in a supergroup outside a topic gets the reply
        chain's root as ``message_thread_id`` without ``is_topic_message``, as Telegram does.
        In a non-forum group ``thread_id`` means a reply thread: ``message_thread_id`` only.
        A leading ``/command`` gets a ``bot_command`` entity, ``@name`` a ``mention``.
        """
        if chat_type is None:
            chat_type = "private" if isinstance(chat_id, int) and chat_id > 0 else "supergroup"
        known = self.chats.get(chat_id)
        forum = is_forum and chat_type == "supergroup"
        if known is None or known.get("type") != chat_type or bool(known.get("is_forum")) != forum:
            chat = self.set_chat(
                chat_id,
                chat_type=chat_type,
                title=chat_title,
                is_forum=forum,
                first_name=first_name,
                username=username if chat_type == "private" else None,
            )
        else:
            chat = known
        sender: JSONDict = {
            "id": user_id,
            "is_bot": False,
            "first_name": first_name,
            "language_code": "en",
        }
        if username:
            sender["username"] = username
        msg: JSONDict = {
            "message_id": self._next_message_id(chat_id),
            "from": sender,
            "chat": dict(chat),
            "date": int(time.time()),
            "text": text,
        }
        entities = self._auto_entities(text)
        if entities:
            msg["entities"] = entities
        if thread_id is not None and chat_type != "private":
            msg["message_thread_id"] = thread_id
            if forum:
                msg["is_topic_message"] = True
                self.topics.setdefault(chat_id, {}).setdefault(thread_id, f"Topic {thread_id}")
        elif reply_to_message_id is not None and chat_type == "supergroup":
            # A reply outside any topic (e.g. in a forum's General topic) carries the reply
            # chain's root as message_thread_id, but no is_topic_message.
            target = self.messages.get((chat_id, reply_to_message_id)) or {}
            msg["message_thread_id"] = target.get("message_thread_id", reply_to_message_id)
        if reply_to_message_id is not None:
            target = self.messages.get((chat_id, reply_to_message_id))
            msg["reply_to_message"] = self._strip(target) if target else {
                "message_id": reply_to_message_id,
                "chat": dict(chat),
                "date": int(time.time()),
            }
        elif thread_id is not None and forum and self.topic_root_reply:
            msg["reply_to_message"] = self._topic_root(chat_id, thread_id, sender)
        if update_id is None:
            update_id = next(self._update_ids)
        return {"update_id": update_id, "message": msg}

    def push_text(self, chat_id: int | str, user_id: int, text: str, **kwargs: Any) -> JSONDict:
        """:meth:`build_text_update` (``kwargs`` are its options) + :meth:`push_update`; returns the queued Update."""
        return self.push_update(self.build_text_update(chat_id, user_id, text, **kwargs))

    def buttons_of(self, chat_id: int | str, message_id: int) -> list[tuple[str, str]]:
        """(label, callback_data) of the inline buttons a message shows now."""
        message = self.messages.get((chat_id, message_id)) or {}
        rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
        return [(b.get("text", ""), b.get("callback_data", "")) for row in rows for b in row]

    def build_press(self, chat_id: int | str, message_id: int, user_id: int, label: str | None = None, *,
                    data: str | None = None, first_name: str = "Test", username: str | None = "tester",
                    query_id: str | None = None) -> JSONDict:
        """A ``callback_query`` update: ``user_id`` pressed the button labelled ``label`` under our
        message ``message_id`` (or one whose ``callback_data`` is ``data``: a stale client's button)."""
        message = self.messages.get((chat_id, message_id))
        if message is None:
            raise KeyError(f"no message {message_id} in chat {chat_id}")
        if data is None:
            found = [d for text, d in self.buttons_of(chat_id, message_id) if text == label]
            if not found:
                raise KeyError(f"message {message_id} has no button {label!r}: {self.buttons_of(chat_id, message_id)}")
            data = found[0]
        sender: JSONDict = {"id": user_id, "is_bot": False, "first_name": first_name, "language_code": "en"}
        if username:
            sender["username"] = username
        query: JSONDict = {"id": query_id or str(next(self._press_ids)), "from": sender, "message": dict(message),
                           "chat_instance": f"-{abs(hash(chat_id)) % 10**18}", "data": data}
        self.presses[query["id"]] = query
        return {"update_id": next(self._update_ids), "callback_query": query}

    def push_press(self, chat_id: int | str, message_id: int, user_id: int, label: str | None = None,
                   **kwargs: Any) -> JSONDict:
        """:meth:`build_press` + :meth:`push_update`; returns the queued Update."""
        return self.push_update(self.build_press(chat_id, message_id, user_id, label, **kwargs))

    @property
    def pending_updates(self) -> list[JSONDict]:
        """Updates not yet confirmed by a ``getUpdates`` offset."""
        return list(self._pending_updates)

    async def deliver_webhook(
        self, url: str, update: JSONDict, secret_token: str | None = None
    ) -> tuple[int, str]:
        """POST ``update`` as JSON to a local webhook ``url`` like Telegram does, with the
        ``X-Telegram-Bot-Api-Secret-Token`` header when given; return (status, body)."""
        host = urlsplit(url).hostname
        if host not in {"127.0.0.1", "localhost", "::1"}:
            raise ValueError(f"deliver_webhook only posts to local servers, not {host!r}")
        if "update_id" not in update:
            update = {"update_id": next(self._update_ids), **update}
        headers = {"X-Telegram-Bot-Api-Secret-Token": secret_token} if secret_token else {}
        async with ClientSession() as session, session.post(url, json=update, headers=headers) as resp:
            return resp.status, await resp.text()

    # ------------------------------------------------------------------ waiting helpers

    def calls_to(self, method: str) -> list[JSONDict]:
        """The params of every recorded call of ``method`` (case-insensitive)."""
        name = method.lower()
        return [params for m, params in self.calls if m.lower() == name]

    def sent_to(self, chat_id: int | str, *thread_id: int | None) -> list[SentMessage]:
        """Sent messages for a chat; ``sent_to(chat, None)`` = those sent without a
        ``message_thread_id``, ``sent_to(chat, 7)`` = those sent to thread 7."""
        return [
            m
            for m in self.sent_messages
            if m.chat_id == chat_id and (not thread_id or m.message_thread_id == thread_id[0])
        ]

    async def wait_for_call(
        self, method: str, count: int = 1, timeout: float = 60.0
    ) -> list[JSONDict]:
        """Wait until ``method`` was called ``count`` times; return those calls' params."""
        await self._wait_until(lambda: len(self.calls_to(method)) >= count, timeout,
                               lambda: f"{count} call(s) of {method}")
        return self.calls_to(method)

    async def wait_for_messages(self, count: int = 1, timeout: float = 60.0) -> list[SentMessage]:
        """Wait until ``count`` messages were sent successfully; return all sent messages."""
        await self._wait_until(lambda: len(self.sent_messages) >= count, timeout,
                               lambda: f"{count} sent message(s)")
        return list(self.sent_messages)

    async def wait_until(self, predicate: Any, what: str, timeout: float = 60.0) -> None:
        """Wait until ``predicate()`` holds (checked whenever a call arrives or ends)."""
        await self._wait_until(predicate, timeout, lambda: what)

    async def _wait_until(self, predicate: Any, timeout: float, what: Any) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            event = self._changed
            if predicate():
                return
            remaining = deadline - loop.time()
            if remaining <= 0:
                seen = [m for m, _ in self.calls]
                raise AssertionError(
                    f"timed out after {timeout}s waiting for {what()}; calls seen: {seen}"
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), remaining)

    def _pulse(self) -> None:
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    def _pulse_updates(self) -> None:
        event, self._updates_event = self._updates_event, asyncio.Event()
        event.set()

    # ------------------------------------------------------------------ HTTP plumbing

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        try:
            params = await self._read_params(request)
        except ValueError as exc:
            return ApiError(400, f"Bad Request: can't parse request: {exc}").response()
        self.calls.append((method, params))
        self.call_times.append(time.monotonic())
        self._pulse()
        token = request.match_info["token"]
        if self.token is not None and token != self.token and token not in self.bots:
            return ApiError(401, "Unauthorized").response()
        _TOKEN.set(token)
        name = method.lower()
        self.in_flight[name] += 1
        self.max_in_flight[name] = max(self.max_in_flight[name], self.in_flight[name])
        try:
            delay = self.delays.get(name)
            if delay:
                await asyncio.sleep(delay)
            failures = self._failures.get(name)
            if failures:
                raise failures.pop(0)
            handler = self._methods.get(name)
            result: Any = True if handler is None else await handler(params)
            gate, containing = self._holds.get(name, (None, None))
            if containing is not None and containing not in str(params.get("text") or ""):
                gate = None
            if gate is not None:  # done; its answer waits for release()
                self.held[name] += 1
                self._pulse()
                try:
                    await gate.wait()
                finally:
                    self.held[name] -= 1
            if self._drops.get(name):
                self._drops[name] -= 1
                assert request.transport is not None
                request.transport.close()  # done, but the answer never reaches the client
            return web.json_response({"ok": True, "result": result})
        except ApiError as err:
            return err.response()
        finally:
            self.in_flight[name] -= 1
            self._pulse()

    @staticmethod
    async def _read_params(request: web.Request) -> JSONDict:
        params: JSONDict = {k: _decode_value(k, v) for k, v in request.query.items()}
        ctype = request.content_type
        if ctype == "application/json":
            body = await request.read()
            if body.strip():
                data = json.loads(body)
                if not isinstance(data, dict):
                    raise ValueError("JSON body must be an object")
                params.update(data)
        elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            form = await request.post()
            for key, value in form.items():
                if isinstance(value, web.FileField):
                    params[key] = {
                        "filename": value.filename,
                        "content_type": value.content_type,
                        "data": value.file.read(),
                    }
                else:
                    params[key] = _decode_value(key, value)
        return params

    # ------------------------------------------------------------------ object builders

    def _chat(self, chat_id: int | str) -> JSONDict:
        chat = self.chats.get(chat_id)
        if chat is None:
            if isinstance(chat_id, int) and chat_id > 0:
                chat = self.set_chat(chat_id, chat_type="private")
            else:
                chat = self.set_chat(chat_id, is_forum=self.default_is_forum)
        return chat

    def _next_message_id(self, chat_id: int | str) -> int:
        counter = self._message_ids.setdefault(chat_id, itertools.count(101))
        return next(counter)

    def _topic_root(self, chat_id: int | str, thread_id: int, creator: JSONDict) -> JSONDict:
        name = self.topics.get(chat_id, {}).get(thread_id, f"Topic {thread_id}")
        return {
            "message_id": thread_id,
            "from": creator,
            "chat": dict(self._chat(chat_id)),
            "date": int(time.time()),
            "message_thread_id": thread_id,
            "is_topic_message": True,
            "forum_topic_created": {"name": name, "icon_color": DEFAULT_TOPIC_ICON_COLOR},
        }

    @staticmethod
    def _strip(message: JSONDict) -> JSONDict:
        """A message as nested in ``reply_to_message`` (Telegram does not nest further)."""
        return {k: v for k, v in message.items() if k != "reply_to_message"}

    @staticmethod
    def _auto_entities(text: str) -> list[JSONDict]:
        entities: list[JSONDict] = []
        command = _COMMAND_RE.match(text)
        if command:
            length = utf16_len(command.group())
            entities.append({"type": "bot_command", "offset": 0, "length": length})
        for match in _MENTION_RE.finditer(text):
            if command and match.start() < command.end():
                continue
            entities.append(
                {
                    "type": "mention",
                    "offset": utf16_len(text[: match.start()]),
                    "length": utf16_len(match.group()),
                }
            )
        return entities

    def _member(self, user: JSONDict, status: str) -> JSONDict:
        if status == "administrator":
            rights = dict.fromkeys(
                [
                    "can_manage_chat", "can_delete_messages", "can_manage_video_chats",
                    "can_restrict_members", "can_change_info", "can_invite_users", "can_post_stories",
                    "can_edit_stories", "can_delete_stories", "can_pin_messages",
                ],
                True,
            )
            rights.update(can_be_edited=False, is_anonymous=False, can_promote_members=False)
            rights["can_manage_topics"] = self.can_manage_topics
            return {"status": "administrator", "user": user, **rights}
        if status == "creator":
            return {"status": "creator", "user": user, "is_anonymous": False}
        if status == "kicked":
            return {"status": "kicked", "user": user, "until_date": 0}
        return {"status": status, "user": user}

    def _check_thread(self, chat_id: int | str, thread_id: int | None) -> None:
        if thread_id is None or not self.strict_threads:
            return
        chat = self._chat(chat_id)
        if chat.get("is_forum") and thread_id not in self.topics.get(chat_id, {}):
            raise ApiError(400, "Bad Request: message thread not found")

    # ------------------------------------------------------------------ methods

    async def _get_me(self, p: JSONDict) -> JSONDict:
        return dict(self.bots.get(_TOKEN.get(), self.bot_user))

    async def _get_updates(self, p: JSONDict) -> list[JSONDict]:
        if self.webhook is not None:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        offset = _as_int(p.get("offset"))
        limit = min(max(_as_int(p.get("limit")) or 100, 1), 100)
        timeout = max(float(p.get("timeout") or 0), 0.0)
        if offset is not None:
            if offset < 0:
                self._pending_updates = self._pending_updates[offset:]
            else:
                self._pending_updates = [
                    u for u in self._pending_updates if u["update_id"] >= offset
                ]
        self._poll_generation += 1
        generation = self._poll_generation
        self._pulse_updates()  # a waiting older poll must notice it was superseded
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(timeout, self.long_poll_cap)
        while True:
            event = self._updates_event
            if generation != self._poll_generation:
                raise ApiError(409, _HTTP_DEFAULT_DESCRIPTIONS[409])
            batch = self._pending_updates[:limit]
            remaining = deadline - loop.time()
            if batch or self._closing or remaining <= 0:
                return batch
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), remaining)

    async def _delete_webhook(self, p: JSONDict) -> bool:
        self.webhook = None
        if p.get("drop_pending_updates"):
            self._pending_updates.clear()
        return True

    async def _set_webhook(self, p: JSONDict) -> bool:
        if not str(p.get("url", "")):
            self.webhook = None
        else:
            self.webhook = dict(p)
        if p.get("drop_pending_updates"):
            self._pending_updates.clear()
        return True

    async def _get_webhook_info(self, p: JSONDict) -> JSONDict:
        info: JSONDict = {
            "url": (self.webhook or {}).get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": len(self._pending_updates),
        }
        if self.webhook and self.webhook.get("allowed_updates"):
            info["allowed_updates"] = self.webhook["allowed_updates"]
        return info

    @staticmethod
    def _commands_key(p: JSONDict) -> tuple[str, str]:
        scope = p.get("scope") or {"type": "default"}
        return json.dumps(scope, sort_keys=True), str(p.get("language_code") or "")

    async def _set_my_commands(self, p: JSONDict) -> bool:
        commands = p.get("commands")
        if not isinstance(commands, list):
            raise ApiError(400, "Bad Request: parameter \"commands\" is required")
        self.commands[self._commands_key(p)] = commands
        return True

    async def _get_my_commands(self, p: JSONDict) -> list[JSONDict]:
        return list(self.commands.get(self._commands_key(p), []))

    async def _delete_my_commands(self, p: JSONDict) -> bool:
        self.commands.pop(self._commands_key(p), None)
        return True

    async def _get_chat(self, p: JSONDict) -> JSONDict:
        chat = dict(self._chat(_as_chat_id(p.get("chat_id"))))
        chat.update(
            accent_color_id=0,
            max_reaction_count=11,
            accepted_gift_types={
                "unlimited_gifts": False,
                "limited_gifts": False,
                "unique_gifts": False,
                "premium_subscription": False,
                "gifts_from_channels": False,
            },
        )
        return chat

    async def _create_forum_topic(self, p: JSONDict) -> JSONDict:
        chat_id = _as_chat_id(p.get("chat_id"))
        chat = self._chat(chat_id)
        if not chat.get("is_forum"):
            raise ApiError(400, "Bad Request: the chat is not a forum")
        if not self.can_manage_topics:
            raise ApiError(400, "Bad Request: not enough rights to create a topic")
        name = str(p.get("name", ""))
        thread_id = self._next_message_id(chat_id)
        self.topics.setdefault(chat_id, {})[thread_id] = name
        topic: JSONDict = {
            "message_thread_id": thread_id,
            "name": name,
            "icon_color": _as_int(p.get("icon_color")) or DEFAULT_TOPIC_ICON_COLOR,
        }
        if p.get("icon_custom_emoji_id"):
            topic["icon_custom_emoji_id"] = p["icon_custom_emoji_id"]
        self.created_topics.append({**topic, "chat_id": chat_id})
        return topic

    async def _edit_forum_topic(self, p: JSONDict) -> bool:
        chat_id = _as_chat_id(p.get("chat_id"))
        thread_id = _as_int(p.get("message_thread_id"))
        topics = self.topics.get(chat_id, {})
        if thread_id not in topics:
            raise ApiError(400, "Bad Request: TOPIC_ID_INVALID")
        if p.get("name"):
            topics[thread_id] = str(p["name"])
        return True

    async def _delete_forum_topic(self, p: JSONDict) -> bool:
        chat_id = _as_chat_id(p.get("chat_id"))
        thread_id = _as_int(p.get("message_thread_id"))
        if self.topics.get(chat_id, {}).pop(thread_id, None) is None:  # type: ignore[arg-type]
            raise ApiError(400, "Bad Request: TOPIC_ID_INVALID")
        return True

    async def _send_message(self, p: JSONDict) -> JSONDict:
        if p.get("chat_id") in (None, ""):
            raise ApiError(400, "Bad Request: chat_id is empty")
        chat_id = _as_chat_id(p["chat_id"])
        text = str(p.get("text") or "")
        if not text.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if utf16_len(text) > MAX_MESSAGE_UTF16:
            raise ApiError(400, "Bad Request: message is too long")
        thread_id = _as_int(p.get("message_thread_id"))
        self._check_thread(chat_id, thread_id)
        chat = self._chat(chat_id)

        reply_parameters = p.get("reply_parameters")
        if reply_parameters is None and p.get("reply_to_message_id") is not None:
            reply_parameters = {
                "message_id": _as_int(p["reply_to_message_id"]),
                "allow_sending_without_reply": bool(p.get("allow_sending_without_reply")),
            }
        reply_to: JSONDict | None = None
        if reply_parameters:
            target_chat = _as_chat_id(reply_parameters.get("chat_id", chat_id))
            target = self.messages.get((target_chat, int(reply_parameters["message_id"])))
            if target is not None:
                reply_to = self._strip(target)
            elif not reply_parameters.get("allow_sending_without_reply"):
                raise ApiError(400, "Bad Request: message to be replied not found")

        message: JSONDict = {
            "message_id": self._next_message_id(chat_id),
            "from": dict(self.bots.get(_TOKEN.get(), self.bot_user)),
            "chat": dict(chat),
            "date": int(time.time()),
            "text": text,
        }
        entities = p.get("entities")
        if entities:
            message["entities"] = entities
        if thread_id is None and reply_to is not None and chat.get("type") == "supergroup":
            # Replies stay in the replied message's topic / reply chain without being asked.
            if reply_to.get("is_topic_message"):
                thread_id = reply_to["message_thread_id"]
            else:
                message["message_thread_id"] = reply_to.get(
                    "message_thread_id", reply_to["message_id"]
                )
        if thread_id is not None and chat.get("type") != "private":
            message["message_thread_id"] = thread_id
            if chat.get("is_forum"):
                message["is_topic_message"] = True
        if reply_to is not None:
            message["reply_to_message"] = reply_to
        elif thread_id is not None and chat.get("is_forum") and self.topic_root_reply:
            message["reply_to_message"] = self._topic_root(chat_id, thread_id, self.bot_user)
        if p.get("reply_markup"):
            message["reply_markup"] = p["reply_markup"]
        self.messages[(chat_id, message["message_id"])] = message
        self.sent_messages.append(self._record(chat_id, message, p, reply_parameters))
        return message

    def _record(
        self, chat_id: int | str, message: JSONDict, p: JSONDict, reply_parameters: Any
    ) -> SentMessage:
        return SentMessage(
            chat_id=chat_id,
            message_id=message["message_id"],
            text=message["text"],
            message_thread_id=_as_int(p.get("message_thread_id")),
            entities=p.get("entities"),
            parse_mode=p.get("parse_mode"),
            reply_parameters=reply_parameters,
            reply_markup=p.get("reply_markup"),
            params=p,
            result=message,
            token=_TOKEN.get(),
        )

    async def _edit_message_text(self, p: JSONDict) -> JSONDict | bool:
        if p.get("inline_message_id"):
            return True
        chat_id = _as_chat_id(p.get("chat_id"))
        message_id = _as_int(p.get("message_id"))
        message = self.messages.get((chat_id, message_id))  # type: ignore[arg-type]
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        if message.get("from", {}).get("id") != self.bot_id:
            raise ApiError(400, "Bad Request: message can't be edited")
        text = str(p.get("text") or "")
        if not text.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if utf16_len(text) > MAX_MESSAGE_UTF16:
            raise ApiError(400, "Bad Request: message is too long")
        entities = p.get("entities") or None
        if (
            message.get("text") == text
            and message.get("entities") == entities
            and message.get("reply_markup") == (p.get("reply_markup") or None)
        ):
            raise ApiError(
                400,
                "Bad Request: message is not modified: specified new message content and "
                "reply markup are exactly the same as a current content and reply markup "
                "of the message",
            )
        message["text"] = text
        message.pop("entities", None)
        if entities:
            message["entities"] = entities
        message["edit_date"] = int(time.time())
        self.edited_messages.append(
            self._record(chat_id, message, p, message.get("reply_to_message"))
        )
        return message

    async def _answer_callback_query(self, p: JSONDict) -> bool:
        query_id = str(p.get("callback_query_id") or "")
        if query_id not in self.presses or any(a.get("callback_query_id") == query_id for a in self.answered_presses):
            raise ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
        self.answered_presses.append(p)
        return True

    async def _edit_message_reply_markup(self, p: JSONDict) -> JSONDict | bool:
        chat_id = _as_chat_id(p.get("chat_id"))
        message_id = _as_int(p.get("message_id"))
        message = self.messages.get((chat_id, message_id))  # type: ignore[arg-type]
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        if message.get("from", {}).get("id") != self.bot_id:
            raise ApiError(400, "Bad Request: message can't be edited")
        markup = p.get("reply_markup") or None
        if message.get("reply_markup") == markup:
            raise ApiError(400, "Bad Request: message is not modified: specified new message content and reply "
                                "markup are exactly the same as a current content and reply markup of the message")
        if markup:
            message["reply_markup"] = markup
        else:
            message.pop("reply_markup", None)
        message["edit_date"] = int(time.time())
        self.edited_markups.append(p)
        return message

    async def _get_file(self, p: JSONDict) -> JSONDict:
        item = self.files.get(str(p.get("file_id") or ""))
        if item is None:
            raise ApiError(400, WRONG_FILE_ID)
        if item.size > MAX_DOWNLOAD_BYTES:
            raise ApiError(400, FILE_TOO_BIG)
        return {"file_id": item.file_id, "file_unique_id": item.file_unique_id, "file_size": item.size,
                "file_path": item.file_path}

    async def _download(self, request: web.Request) -> web.StreamResponse:
        """``GET /file/bot<token>/<file_path>``: the bytes, in chunks (slowed by :attr:`download_delay`)."""
        if self.token is not None and request.match_info["token"] != self.token:
            return web.json_response({"ok": False, "error_code": 404, "description": "Not Found"}, status=404)
        path = request.match_info["path"]
        item = next((f for f in self.files.values() if f.file_path == path), None)
        if item is None:
            return web.json_response({"ok": False, "error_code": 404, "description": "Not Found"}, status=404)
        self.downloads.append(path)
        self._pulse()
        response = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
        response.content_length = len(item.data)
        await response.prepare(request)
        for start in range(0, len(item.data), DOWNLOAD_CHUNK):
            if self.download_delay:
                await asyncio.sleep(self.download_delay)
            await response.write(item.data[start:start + DOWNLOAD_CHUNK])
        await response.write_eof()
        return response

    async def _send_voice(self, p: JSONDict) -> JSONDict:
        chat_id = _as_chat_id(p.get("chat_id"))
        upload = p.get("voice")
        if not isinstance(upload, dict) or not upload.get("data"):
            raise ApiError(400, "Bad Request: there is no voice in the request")
        thread_id = _as_int(p.get("message_thread_id"))
        self._check_thread(chat_id, thread_id)
        chat = self._chat(chat_id)
        message: JSONDict = {
            "message_id": self._next_message_id(chat_id),
            "from": dict(self.bot_user),
            "chat": dict(chat),
            "date": int(time.time()),
            "voice": {"file_id": f"AwACAgQAAxkBAAIsentvoice{len(self.sent_voices)}", "file_unique_id": "AgADsent",
                      "duration": _as_int(p.get("duration")) or 1, "mime_type": "audio/ogg",
                      "file_size": len(upload["data"])},
        }
        if thread_id is not None and chat.get("type") != "private":
            message["message_thread_id"] = thread_id
            if chat.get("is_forum"):
                message["is_topic_message"] = True
        self.messages[(chat_id, message["message_id"])] = message
        self.sent_voices.append(SentVoice(chat_id, message["message_id"], thread_id, upload["data"],
                                          upload.get("content_type"), p))
        return message

    async def _send_chat_action(self, p: JSONDict) -> bool:
        chat_id = _as_chat_id(p.get("chat_id"))
        thread_id = _as_int(p.get("message_thread_id"))
        if thread_id != 1:  # reportedly the General topic's typing needs thread 1
            self._check_thread(chat_id, thread_id)
        self.actions.append({**p, "token": _TOKEN.get()})
        return True

    async def _get_chat_member(self, p: JSONDict) -> JSONDict:
        chat_id = _as_chat_id(p.get("chat_id"))
        user_id = int(p["user_id"])
        if (chat_id, user_id) in self.members:
            return self.members[(chat_id, user_id)]
        if user_id == self.bot_id:
            group = self._chat(chat_id).get("type") != "private"
            return self._member(dict(self.bot_user), "administrator" if group else "member")
        user = {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"}
        return self._member(user, "member")

    async def _get_chat_administrators(self, p: JSONDict) -> list[JSONDict]:
        chat_id = _as_chat_id(p.get("chat_id"))
        admins = [self._member(dict(self.bot_user), "administrator")]
        admins += [
            m
            for (c, _), m in self.members.items()
            if c == chat_id and m["status"] in ("creator", "administrator")
        ]
        return admins


def _decode_value(key: str, value: str) -> Any:
    """Decode one form value the way PTB encoded it: strings verbatim, the rest as JSON."""
    if key in STRING_PARAMS:
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value
