"""A fake Discord on 127.0.0.1: the REST API (``/api/v10``) and the gateway over WebSocket, for discord.py.

REST, as discord.py calls it: ``GET /users/@me`` (the token checked: 401 otherwise, which discord.py reports as a
refused login), ``GET /oauth2/applications/@me``, ``GET /gateway/bot`` (the gateway's ``ws://`` address on this
server), ``GET /channels/{id}``, ``POST /channels/{id}/messages`` (``nonce`` with ``enforce_nonce``: the message
already made with that nonce is answered instead of a second one), ``PATCH /channels/{id}/messages/{id}``,
``GET /channels/{id}/messages`` (``after``/``before``/``limit``, newest first, as Discord answers),
``POST /channels/{id}/messages/{id}/threads`` (the thread gets the message's id; a second one is refused with
160004), ``GET /guilds/{id}/threads/active`` (the server's threads), ``POST /users/@me/channels`` (one DM
channel per user), ``POST /channels/{id}/typing`` and
``POST /interactions/{id}/{token}/callback``. :meth:`FakeDiscord.rate_limit_next` answers the next matching
requests with Discord's 429 (``retry_after`` in the body, ``Retry-After`` and ``X-RateLimit-*`` headers).

The gateway (``/gateway``; ``encoding=json``, with or without ``compress=zlib-stream``: one zlib stream per
connection, each payload flushed with ``Z_SYNC_FLUSH``, as Discord sends it): ``HELLO`` with a heartbeat interval,
heartbeats answered with ``HEARTBEAT_ACK``, ``IDENTIFY`` answered with ``READY`` (a new session: ``session_id``,
``resume_gateway_url``) and a ``GUILD_CREATE`` with the server's channels, ``RESUME`` answered with the dispatches
after the client's sequence (and :attr:`FakeDiscord.replay_extra` before it, as an at-least-once replay) then
``RESUMED``, or ``INVALID_SESSION`` for an unknown session. Dispatches (``MESSAGE_CREATE``, ``THREAD_CREATE``,
``INTERACTION_CREATE``) are numbered per session and kept, so a session that resumes gets what it missed.

Tests drive it: :meth:`FakeDiscord.user_says` (a user's message: stored in the channel's history and dispatched),
:meth:`FakeDiscord.new_post` (a new forum post: its thread and first message),
:meth:`FakeDiscord.dispatch` (any payload), :meth:`FakeDiscord.drop` (the socket closed under the client),
:meth:`FakeDiscord.gateway_down` / :meth:`gateway_up` (new connections refused meanwhile; dispatches wait for the
resume), :meth:`FakeDiscord.new_session_only` (the next connection's RESUME is refused: a new session, nothing
replayed), :attr:`FakeDiscord.after_ready` (something done right after the next ``READY``: a message dispatched
while discord.py still waits for the server's ``GUILD_CREATE`` s, before its ``on_ready``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

from tests.support.fakes.local_server import LocalServer, random_id

__all__ = ["API", "BOT_ID", "GUILD_ID", "TOKEN", "ChannelKind", "FakeDiscord", "SentMessage", "snowflake"]

API = "/api/v10"
TOKEN = "fake-discord-bot-token"
BOT_ID = "1100000000000000001"
APPLICATION_ID = "1100000000000000002"
GUILD_ID = "1100000000000000003"
DISCORD_EPOCH_MS = 1420070400000
HEARTBEAT_MS = 41250
_counter = itertools.count(1)


def snowflake(at: float | None = None) -> str:
    """A fresh Discord id made at ``at`` (epoch seconds; now by default): ordered as Discord's are."""
    ms = int((time.time() if at is None else at) * 1000) - DISCORD_EPOCH_MS
    return str((ms << 22) | (next(_counter) % (1 << 22)))


class ChannelKind:
    """Discord's channel types the fake serves."""

    TEXT = 0
    DM = 1
    PUBLIC_THREAD = 11
    FORUM = 15


@dataclass
class SentMessage:
    """A message the bot posted, with its edits (the latest content is ``content``)."""

    id: str
    channel_id: str
    content: str
    payload: dict[str, Any]
    edits: list[str] = field(default_factory=list)
    reference: str | None = None
    request: dict[str, Any] = field(default_factory=dict)  # the body the bot sent (allowed_mentions, nonce...)


@dataclass
class _Session:
    id: str
    events: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)  # (seq, t, d)
    ws: web.WebSocketResponse | None = None
    zlib: Any = None  # the connection's compressor (zlib-stream), or None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # payloads leave in the order they were made


def _user(user_id: str, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {"id": user_id, "username": name, "discriminator": "0", "global_name": name, "avatar": None,
            "bot": bot, "public_flags": 0}


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """A JSON answer with Discord's exact ``Content-Type: application/json`` (discord.py reads no other as JSON)."""
    return web.Response(body=json.dumps(data).encode(), status=status,
                        headers={"Content-Type": "application/json", **(headers or {})})


def _stamp(message_id: str) -> str:
    ms = (int(message_id) >> 22) + DISCORD_EPOCH_MS
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat()


class FakeDiscord(LocalServer):
    """See the module docstring."""

    name = "fake Discord"

    def __init__(self, *, token: str = TOKEN) -> None:
        super().__init__()
        self.token = token
        self.channels: dict[str, dict[str, Any]] = {}
        self.history: dict[str, list[dict[str, Any]]] = {}  # channel id -> messages, oldest first
        self.sent: list[SentMessage] = []
        self.threads_started: list[str] = []
        self.interaction_callbacks: list[dict[str, Any]] = []
        self.requests: list[tuple[str, str]] = []  # (method, path)
        self.request_times: list[tuple[str, str, float, int]] = []  # (method, path, monotonic time, status)
        self.replay_extra = 0
        self.active_threads_asked = 0
        self.identifies = 0
        self.resumes = 0
        self.connections = 0
        self._sessions: dict[str, _Session] = {}
        self._live: _Session | None = None
        self._down = False
        self._no_resume = False
        self._limits: list[tuple[str, str, float]] = []  # (method, path part, retry_after)
        self._dms: dict[str, str] = {}
        self._nonces: dict[tuple[str, str], SentMessage] = {}
        self._changed = asyncio.Event()
        self._held: asyncio.Event | None = None  # set: posts go through again
        self.held = 0  # posts waiting at the fake now
        #: called once right after the next IDENTIFY's READY and GUILD_CREATE (dispatches made in it follow them)
        self.after_ready: Callable[[], object] | None = None
        self.add_channel(GUILD_ID, ChannelKind.TEXT, name="general")

    # -- the server's contents ---------------------------------------------------------

    def add_channel(self, channel_id: str, kind: int, *, name: str = "channel", parent_id: str | None = None,
                    guild: bool = True) -> dict[str, Any]:
        """A channel of the server (or a DM channel when ``guild`` is False)."""
        data: dict[str, Any] = {"id": channel_id, "type": kind, "name": name, "position": len(self.channels),
                                "permission_overwrites": [], "nsfw": False, "parent_id": parent_id,
                                "last_message_id": None, "rate_limit_per_user": 0, "flags": 0}
        if guild:
            data["guild_id"] = GUILD_ID
        if kind == ChannelKind.PUBLIC_THREAD:
            data.update(owner_id=BOT_ID, message_count=0, member_count=1, total_message_sent=0,
                        thread_metadata={"archived": False, "auto_archive_duration": 10080, "locked": False,
                                         "archive_timestamp": datetime.now(UTC).isoformat()})
        self.channels[channel_id] = data
        self.history.setdefault(channel_id, [])
        return data

    def user_says(self, channel_id: str, user_id: str, text: str, *, name: str = "user", dispatch: bool = True,
                  message_id: str | None = None, bot: bool = False) -> dict[str, Any]:
        """A user writes ``text`` in ``channel_id``: kept in its history and (unless ``dispatch`` is False: sent
        while nobody listened) dispatched as ``MESSAGE_CREATE``."""
        channel = self.channels[channel_id]
        mid = message_id or snowflake()
        data: dict[str, Any] = {"id": mid, "channel_id": channel_id, "author": _user(user_id, name, bot=bot),
                                "content": text, "timestamp": _stamp(mid), "edited_timestamp": None, "tts": False,
                                "mention_everyone": False, "mentions": [], "mention_roles": [], "attachments": [],
                                "embeds": [], "pinned": False, "type": 0, "flags": 0, "components": []}
        if "guild_id" in channel:
            data["guild_id"] = channel["guild_id"]
        self.history[channel_id].append(data)
        if dispatch:
            self.dispatch("MESSAGE_CREATE", data)
        return data

    def new_post(self, forum_id: str, user_id: str, text: str, *, name: str = "user",
                 dispatch: bool = True) -> str:
        """A user opens a post in forum ``forum_id``: a thread whose first message (with the thread's id, as on
        Discord) is ``text``; dispatched as ``THREAD_CREATE`` and ``MESSAGE_CREATE`` unless ``dispatch`` is False
        (made while nobody listened). The thread's id."""
        thread_id = snowflake()
        data = self.add_channel(thread_id, ChannelKind.PUBLIC_THREAD, name=text[:40], parent_id=forum_id)
        data["owner_id"] = user_id
        if dispatch:
            self.dispatch("THREAD_CREATE", {**data, "newly_created": True})
        self.user_says(thread_id, user_id, text, name=name, dispatch=dispatch, message_id=thread_id)
        return thread_id

    def dm_channel(self, user_id: str, channel_id: str | None = None) -> str:
        """The DM channel of ``user_id`` with the bot (made on first use; ``channel_id``: with that id)."""
        if user_id not in self._dms:
            cid = channel_id or snowflake()
            self._dms[user_id] = cid
            data = self.add_channel(cid, ChannelKind.DM, name="", guild=False)
            data["recipients"] = [_user(user_id, f"user{user_id[-4:]}")]
        return self._dms[user_id]

    def in_channel(self, channel_id: str) -> list[SentMessage]:
        """What the bot posted in ``channel_id``."""
        return [m for m in self.sent if m.channel_id == channel_id]

    # -- driving the gateway -------------------------------------------------------------

    def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send ``event`` on the live session (kept for a resume when no socket is open)."""
        session = self._live
        if session is None:
            return
        seq = len(session.events) + 1
        session.events.append((seq, event, data))
        if session.ws is not None and not session.ws.closed:
            asyncio.get_running_loop().create_task(self._send(session, {"op": 0, "s": seq, "t": event, "d": data}))

    async def drop(self) -> None:
        """Close the socket under the client (it resumes)."""
        session = self._live
        if session is not None and session.ws is not None:
            await session.ws.close(code=4000, message=b"dropped by the test")

    def gateway_down(self) -> None:
        """Refuse new gateway connections until :meth:`gateway_up`."""
        self._down = True

    def gateway_up(self) -> None:
        """Accept gateway connections again."""
        self._down = False

    def new_session_only(self) -> None:
        """Every RESUME is refused from now on (INVALID_SESSION): each connection identifies anew."""
        self._no_resume = True

    @property
    def connected(self) -> bool:
        """A client holds an identified session's socket."""
        s = self._live
        return s is not None and s.ws is not None and not s.ws.closed

    def hold_posts(self) -> None:
        """From now on a ``POST .../messages`` waits at the fake, posting nothing, until :meth:`release_posts`
        (then it is answered with a 500 and still posts nothing): a request that left and whose answer was lost."""
        self._held = asyncio.Event()

    def release_posts(self) -> None:
        """Let posts through again (the held ones get their 500)."""
        if self._held is not None:
            self._held.set()
            self._held = None

    def rate_limit_next(self, method: str, path_part: str, retry_after: float = 1.0) -> None:
        """The next ``method`` request whose path contains ``path_part`` gets Discord's 429."""
        self._limits.append((method, path_part, retry_after))

    # -- serving -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The server root."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """``discord.api_base_url``."""
        return self.url + API

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/gateway/", self._gateway)
        app.router.add_route("*", API + "/{tail:.*}", self._rest)

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        self.requests.append((request.method, path))
        if request.headers.get("Authorization") != f"Bot {self.token}":
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        for i, (method, part, retry) in enumerate(self._limits):
            if method == request.method and part in path:
                del self._limits[i]
                self.request_times.append((request.method, path, time.monotonic(), 429))
                return self._too_many(retry)
        self.request_times.append((request.method, path, time.monotonic(), 200))
        body: Any = None
        if request.can_read_body:
            with contextlib.suppress(ValueError):
                body = await request.json()
        held = self._held
        if held is not None and request.method == "POST" and path.endswith("/messages"):
            self.held += 1
            self._changed.set()
            try:
                await held.wait()
            finally:
                self.held -= 1
            return _json({"message": "500: Internal Server Error", "code": 0}, status=500)
        try:
            return await self._answer(request.method, path, body or {}, request)
        finally:
            self._changed.set()

    def _too_many(self, retry: float) -> web.Response:
        headers = {"Via": "1.1 google", "Retry-After": str(max(1, round(retry))), "X-RateLimit-Limit": "5",
                   "X-RateLimit-Remaining": "0", "X-RateLimit-Reset-After": f"{retry:.3f}",
                   "X-RateLimit-Bucket": "fake-bucket", "X-RateLimit-Scope": "user",
                   "X-RateLimit-Reset": f"{time.time() + retry:.3f}"}
        return _json({"message": "You are being rate limited.", "retry_after": retry, "global": False,
                                  "code": 0}, status=429, headers=headers)

    async def _answer(self, method: str, path: str, body: dict[str, Any], request: web.Request) -> web.Response:
        parts = path.strip("/").split("/")
        if (method, path) == ("GET", "/users/@me"):
            return _json(_user(BOT_ID, "Sabha", bot=True))
        if (method, path) == ("GET", "/oauth2/applications/@me"):
            return _json({"id": APPLICATION_ID, "name": "Sabha", "description": "", "icon": None,
                                      "bot_public": False, "bot_require_code_grant": False, "verify_key": "00",
                                      "owner": _user("1100000000000000009", "owner"), "flags": 0,
                                      "summary": "", "team": None})
        if (method, path) == ("GET", "/gateway/bot"):
            return _json({"url": f"ws://127.0.0.1:{self.port}/gateway", "shards": 1,
                                      "session_start_limit": {"total": 1000, "remaining": 999,
                                                              "reset_after": 0, "max_concurrency": 1}})
        if (method, path) == ("POST", "/users/@me/channels"):
            return _json(self.channels[self.dm_channel(str(body.get("recipient_id")))])
        if parts[0] == "interactions" and method == "POST":
            self.interaction_callbacks.append({"id": parts[1], "body": body})
            return web.Response(status=204)
        if parts[0] == "channels" and len(parts) >= 2:
            return self._channel(method, parts[1], parts[2:], body, request)
        if method == "GET" and parts[0] == "guilds" and parts[2:] == ["threads", "active"]:
            self.active_threads_asked += 1
            return _json({"threads": [c for c in self.channels.values() if c["type"] == ChannelKind.PUBLIC_THREAD
                                      and c.get("guild_id") == parts[1]], "members": []})
        return _json({"message": "404: Not Found", "code": 0}, status=404)

    def _channel(self, method: str, cid: str, rest: list[str], body: dict[str, Any],
                 request: web.Request) -> web.Response:
        channel = self.channels.get(cid)
        if channel is None:
            return _json({"message": "Unknown Channel", "code": 10003}, status=404)
        if not rest and method == "GET":
            return _json(channel)
        if rest == ["typing"]:
            return web.Response(status=204)
        if rest == ["messages"] and method == "POST":
            return _json(self._post(cid, body))
        return self._channel_more(method, cid, rest, body, request)

    def _channel_more(self, method: str, cid: str, rest: list[str], body: dict[str, Any],
                      request: web.Request) -> web.Response:
        if rest == ["messages"] and method == "GET":
            return _json(self._read_history(cid, request.query))
        if len(rest) == 2 and rest[0] == "messages" and method == "PATCH":
            return self._edit(cid, rest[1], body)
        if len(rest) == 3 and rest[0] == "messages" and rest[2] == "threads" and method == "POST":
            return self._start_thread(cid, rest[1], body)
        return _json({"message": "405: Method Not Allowed", "code": 0}, status=405)

    def _post(self, cid: str, body: dict[str, Any]) -> dict[str, Any]:
        nonce = body.get("nonce")
        if nonce is not None and body.get("enforce_nonce") and (cid, str(nonce)) in self._nonces:
            return self._nonces[(cid, str(nonce))].payload  # Discord: the message already made with this nonce
        mid = snowflake()
        reference = (body.get("message_reference") or {}).get("message_id")
        data: dict[str, Any] = {"id": mid, "channel_id": cid, "author": _user(BOT_ID, "Sabha", bot=True),
                                "content": body.get("content") or "", "timestamp": _stamp(mid),
                                "edited_timestamp": None, "tts": False, "mention_everyone": False, "mentions": [],
                                "mention_roles": [], "attachments": [], "embeds": [], "pinned": False,
                                "type": 19 if reference else 0, "flags": 0, "components": body.get("components", [])}
        if nonce is not None:
            data["nonce"] = nonce
        if "guild_id" in self.channels[cid]:
            data["guild_id"] = self.channels[cid]["guild_id"]
        sent = SentMessage(mid, cid, data["content"], data, reference=str(reference) if reference else None,
                           request=body)
        self.sent.append(sent)
        if nonce is not None:
            self._nonces[(cid, str(nonce))] = sent
        self.history[cid].append(data)
        self.dispatch("MESSAGE_CREATE", data)  # Discord sends the bot its own messages too
        return data

    def _edit(self, cid: str, mid: str, body: dict[str, Any]) -> web.Response:
        for sent in self.sent:
            if sent.id == mid and sent.channel_id == cid:
                if "content" in body:
                    sent.edits.append(sent.content)
                    sent.content = body["content"] or ""
                    sent.payload = {**sent.payload, "content": sent.content,
                                    "edited_timestamp": datetime.now(UTC).isoformat()}
                return _json(sent.payload)
        return _json({"message": "Unknown Message", "code": 10008}, status=404)

    def _read_history(self, cid: str, query: Any) -> list[dict[str, Any]]:
        messages = self.history[cid]
        limit = int(query.get("limit", 50))
        if "after" in query:
            after = int(query["after"])
            newer = [m for m in messages if int(m["id"]) > after][:limit]
            return list(reversed(newer))
        if "before" in query:
            before = int(query["before"])
            messages = [m for m in messages if int(m["id"]) < before]
        return list(reversed(messages[-limit:]))

    def _start_thread(self, cid: str, mid: str, body: dict[str, Any]) -> web.Response:
        if mid in self.channels:
            return _json({"message": "A thread has already been created for this message",
                                      "code": 160004}, status=400)
        thread = self.add_channel(mid, ChannelKind.PUBLIC_THREAD, name=str(body.get("name") or "thread"),
                                  parent_id=cid)
        self.threads_started.append(mid)
        self.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        return _json(thread, status=201)

    async def wait_for(self, predicate: Any, what: str, timeout: float = 120.0) -> None:
        """Wait until ``predicate()`` holds (woken by each REST request)."""
        async def loop() -> None:
            while not predicate():
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), 0.2)

        try:
            await asyncio.wait_for(loop(), timeout)
        except TimeoutError:
            raise AssertionError(f"the fake Discord did not see {what} within {timeout} s") from None

    # -- the gateway ---------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        if self._down:
            return web.Response(status=503, text="gateway down (test)")
        ws = web.WebSocketResponse(autoping=True, max_msg_size=0)
        await ws.prepare(request)
        self.connections += 1
        compress = request.query.get("compress") == "zlib-stream"
        conn = _Session(id="", ws=ws, zlib=zlib.compressobj() if compress else None)
        await self._send(conn, {"op": 10, "d": {"heartbeat_interval": HEARTBEAT_MS}})
        session: _Session | None = None
        try:
            async for msg in ws:
                if msg.type is not WSMsgType.TEXT:
                    continue
                payload = json.loads(msg.data)
                op = payload.get("op")
                if op == 1:
                    await self._send(conn, {"op": 11})
                elif op == 2:
                    session = await self._identify(conn, payload.get("d") or {})
                elif op == 6:
                    session = await self._resume(conn, payload.get("d") or {})
        finally:
            if session is not None and session.ws is ws:
                session.ws = None
        return ws

    async def _identify(self, conn: _Session, data: dict[str, Any]) -> _Session | None:
        if data.get("token") != self.token:
            assert conn.ws is not None
            await conn.ws.close(code=4004, message=b"Authentication failed.")
            return None
        self.identifies += 1
        session = _Session(id=random_id(32), ws=conn.ws, zlib=conn.zlib)
        self._sessions[session.id] = session
        self._live = session
        ready = {"v": 10, "user": _user(BOT_ID, "Sabha", bot=True), "guilds": [{"id": GUILD_ID, "unavailable": True}],
                 "session_id": session.id, "resume_gateway_url": f"ws://127.0.0.1:{self.port}/gateway",
                 "application": {"id": APPLICATION_ID, "flags": 0}, "private_channels": [], "relationships": []}
        self._record_and_send(session, "READY", ready)
        self._record_and_send(session, "GUILD_CREATE", self._guild())
        after, self.after_ready = self.after_ready, None
        if after is not None:
            after()
        return session

    def _guild(self) -> dict[str, Any]:
        channels = [c for c in self.channels.values() if c.get("guild_id") and c["type"] != ChannelKind.PUBLIC_THREAD]
        threads = [c for c in self.channels.values() if c["type"] == ChannelKind.PUBLIC_THREAD]
        return {"id": GUILD_ID, "name": "The company", "icon": None, "owner_id": "1100000000000000009",
                "afk_timeout": 300, "verification_level": 0, "default_message_notifications": 0,
                "explicit_content_filter": 0, "roles": [{"id": GUILD_ID, "name": "@everyone", "permissions": "0",
                                                         "position": 0, "color": 0, "hoist": False, "managed": False,
                                                         "mentionable": False, "flags": 0}],
                "emojis": [], "stickers": [], "features": [], "mfa_level": 0, "system_channel_flags": 0,
                "premium_tier": 0, "preferred_locale": "en-US", "nsfw_level": 0, "member_count": 3,
                "large": False, "unavailable": False, "joined_at": datetime.now(UTC).isoformat(),
                "members": [], "voice_states": [], "presences": [], "channels": channels, "threads": threads,
                "stage_instances": [], "guild_scheduled_events": [], "soundboard_sounds": []}

    def _record_and_send(self, session: _Session, event: str, data: dict[str, Any]) -> None:
        seq = len(session.events) + 1
        session.events.append((seq, event, data))
        asyncio.get_running_loop().create_task(self._send(session, {"op": 0, "s": seq, "t": event, "d": data}))

    async def _resume(self, conn: _Session, data: dict[str, Any]) -> _Session | None:
        session = self._sessions.get(str(data.get("session_id")))
        if session is None or self._no_resume or data.get("token") != self.token:
            await self._send(conn, {"op": 9, "d": False})
            return None
        self.resumes += 1
        session.ws, session.zlib = conn.ws, conn.zlib
        self._live = session
        seq = int(data.get("seq") or 0)
        for s, event, d in session.events:
            if s > seq - self.replay_extra and event not in ("READY", "GUILD_CREATE"):
                await self._send(session, {"op": 0, "s": s, "t": event, "d": d})
        await self._send(session, {"op": 0, "s": len(session.events), "t": "RESUMED", "d": {}})
        return session

    async def _send(self, session: _Session, payload: dict[str, Any]) -> None:
        """One payload on ``session``'s socket (compressed on a zlib-stream connection), in the order made."""
        text = json.dumps(payload)
        async with session.lock:
            ws = session.ws
            if ws is None or ws.closed:
                return
            with contextlib.suppress(ConnectionError, RuntimeError):
                if session.zlib is not None:
                    await ws.send_bytes(session.zlib.compress(text.encode()) + session.zlib.flush(zlib.Z_SYNC_FLUSH))
                else:
                    await ws.send_str(text)

    async def stop(self) -> None:
        for session in self._sessions.values():
            if session.ws is not None:
                with contextlib.suppress(Exception):
                    await session.ws.close()
        await super().stop()
