"""Discord's REST surface for buttons, slash commands, attachments, the invite and ``sabha doctor``, as a fake.

:class:`DiscordExtras` holds the state and adds its routes to an aiohttp app (:meth:`DiscordExtras.install`), so it
serves alone (:class:`FakeDiscordRest`, a :class:`LocalServer` on 127.0.0.1) or inside the core fake Discord
(REST + gateway) beside that fake's own routes. What it answers, in Discord's shapes (API v10 docs):

* ``GET /users/@me``: the bot user (401 ``{"message": "401: Unauthorized", "code": 0}`` without ``Bot <token>``);
* ``GET /applications/@me``: the application, its ``flags`` (:attr:`DiscordExtras.app_flags`: the Message Content
  intent bits on by default);
* ``GET /guilds/{id}``: the server with its roles (@everyone's id is the server's), and
  ``GET /guilds/{id}/members/{user}``: the bot's member record and its roles (:meth:`DiscordExtras.grant`);
* ``PUT /applications/{app}/guilds/{guild}/commands``: a bulk overwrite of the server's slash commands (each call
  recorded in :attr:`DiscordExtras.overwrites`), ``GET`` of the same lists them;
* ``POST /interactions/{id}/{token}/callback``: an interaction's response, recorded in
  :attr:`DiscordExtras.responses` with the seconds since the interaction was dispatched
  (:meth:`DiscordExtras.dispatched`): the 3 s rule is checked by the tests from that; a second response to one
  interaction gets Discord's 400 (code 40060, "Interaction has already been acknowledged");
* ``POST /webhooks/{app}/{token}`` (a follow-up) and ``PATCH /webhooks/{app}/{token}/messages/@original``:
  recorded in :attr:`DiscordExtras.followups`;
* ``GET /attachments/{channel}/{id}/{name}``: an attachment's bytes, as Discord's CDN serves them
  (:meth:`DiscordExtras.add_file`: the url to put into a message's ``attachments[]``).
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.support.fakes.discord_api import APPLICATION_ID as CORE_APP_ID
from tests.support.fakes.discord_api import BOT_ID as CORE_BOT_ID
from tests.support.fakes.discord_api import GUILD_ID as CORE_GUILD_ID
from tests.support.fakes.discord_api import TOKEN, ChannelKind, FakeDiscord, SentMessage, snowflake
from tests.support.fakes.local_server import LocalServer

__all__ = ["APP_ID", "BOT_ID", "BOT_TOKEN", "GUILD_ID", "DiscordExtras", "FakeDiscordMore", "FakeDiscordRest",
           "Followup", "InteractionResponse", "served"]

BOT_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.fake.bot-token_for-tests"
BOT_ID = "1180000000000000001"
APP_ID = "1180000000000000002"
GUILD_ID = "1180000000000000003"
DATA = Path(__file__).resolve().parents[2] / "data" / "discord"
#: gateway_message_content (1 << 18)
MESSAGE_CONTENT = 1 << 18


@dataclass(frozen=True)
class InteractionResponse:
    """One ``POST /interactions/{id}/{token}/callback``."""

    interaction_id: str
    token: str
    type: int
    data: dict[str, Any]
    after_s: float | None  # seconds since the interaction was dispatched (None: not dispatched by the test)

    @property
    def ephemeral(self) -> bool:
        return bool(int(self.data.get("flags") or 0) & 64)


@dataclass(frozen=True)
class Followup:
    """A follow-up message (POST) or an edit of the original response (PATCH) through an interaction's webhook."""

    token: str
    method: str
    data: dict[str, Any]


@dataclass
class DiscordExtras:
    """See the module docstring."""

    token: str = BOT_TOKEN
    bot_id: str = BOT_ID
    application_id: str = APP_ID
    guild_id: str = GUILD_ID
    app_flags: int = MESSAGE_CONTENT
    bot_in_guild: bool = True
    everyone_permissions: int = 0
    bot_role_permissions: int = 0
    overwrites: list[list[dict[str, Any]]] = field(default_factory=list)
    responses: list[InteractionResponse] = field(default_factory=list)
    followups: list[Followup] = field(default_factory=list)
    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    downloads: int = 0
    expired_tokens: set[str] = field(default_factory=set)  # follow-ups with these tokens get Discord's 10015
    answered_again: int = 0  # responses refused because the interaction had one already (Discord's 40060)
    _dispatched: dict[str, float] = field(default_factory=dict)
    _kinds: dict[str, int] = field(default_factory=dict)  # interaction id -> its type (2: a command, 3: a button)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def install(self, app: web.Application, *, users_me: bool = True) -> None:
        """Add the routes of the module docstring (``users_me`` False: the host fake answers ``/users/@me``)."""
        r = app.router
        if users_me:
            r.add_get("/api/v10/users/@me", self._me)
        r.add_get("/api/v10/applications/@me", self._application)
        r.add_get("/api/v10/guilds/{guild}", self._guild)
        r.add_get("/api/v10/guilds/{guild}/members/{user}", self._member)
        r.add_put("/api/v10/applications/{app}/guilds/{guild}/commands", self._overwrite)
        r.add_get("/api/v10/applications/{app}/guilds/{guild}/commands", self._commands)
        r.add_post("/api/v10/interactions/{id}/{token}/callback", self._callback)
        r.add_post("/api/v10/webhooks/{app}/{token}", self._followup)
        r.add_patch("/api/v10/webhooks/{app}/{token}/messages/@original", self._followup)
        r.add_get("/attachments/{channel}/{id}/{name}", self._file)

    # -- what a test sets up --------------------------------------------------------------

    def grant(self, permissions: int, *, everyone: int = 0) -> None:
        """The bot's role gives ``permissions`` in the server, @everyone ``everyone``."""
        self.bot_role_permissions, self.everyone_permissions = permissions, everyone

    def add_file(self, base: str, data: bytes, name: str, content_type: str, channel_id: str = "1") -> dict[str, Any]:
        """Serve ``data``; the ``attachments[]`` item of a message that carries it (``base``: the fake's origin)."""
        file_id = str(1_180_000_000_000_100_000 + next(self._ids))
        self.files[file_id] = (data, content_type)
        url = f"{base}/attachments/{channel_id}/{file_id}/{name}"
        return {"id": file_id, "filename": name, "size": len(data), "url": url, "proxy_url": url,
                "content_type": content_type}

    def dispatched(self, interaction_id: str, kind: int = 3) -> None:
        """The test dispatched interaction ``interaction_id`` (of type ``kind``) now (its response is timed from
        here)."""
        self._dispatched[interaction_id] = time.monotonic()
        self._kinds[interaction_id] = kind

    async def wait_for(self, what: Any, timeout: float = 60.0) -> None:
        """Until ``what()`` is true (checked after every recorded request)."""
        async def until() -> None:
            while not what():
                self.changed.clear()
                await self.changed.wait()
        await asyncio.wait_for(until(), timeout)

    def response_to(self, interaction_id: str) -> InteractionResponse | None:
        return next((r for r in self.responses if r.interaction_id == interaction_id), None)

    # -- handlers -----------------------------------------------------------------------

    def _authorized(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bot {self.token}"

    def _note(self) -> None:
        self.changed.set()

    @staticmethod
    def _unauthorized() -> web.Response:
        return _json({"message": "401: Unauthorized", "code": 0}, status=401)

    async def _me(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        return _json({"id": self.bot_id, "username": "sabha-board", "discriminator": "0",
                                  "global_name": None, "avatar": None, "bot": True, "flags": 0})

    async def _application(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        return _json({"id": self.application_id, "name": "Sabha", "icon": None, "description": "",
                                  "bot_public": False, "bot_require_code_grant": False, "flags": self.app_flags,
                                  "bot": {"id": self.bot_id, "username": "sabha-board", "bot": True}})

    async def _guild(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        gid = request.match_info["guild"]
        if gid != self.guild_id or not self.bot_in_guild:
            return _json({"message": "Unknown Guild", "code": 10004}, status=404)
        roles = [{"id": gid, "name": "@everyone", "permissions": str(self.everyone_permissions), "position": 0},
                 {"id": "1180000000000000009", "name": "Sabha", "permissions": str(self.bot_role_permissions),
                  "position": 1, "managed": True}]
        return _json({"id": gid, "name": "Test Company", "owner_id": "1180000000000000777",
                                  "roles": roles})

    async def _member(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        if request.match_info["guild"] != self.guild_id or not self.bot_in_guild \
                or request.match_info["user"] != self.bot_id:
            return _json({"message": "Unknown Member", "code": 10007}, status=404)
        return _json({"user": {"id": self.bot_id, "username": "sabha-board", "bot": True},
                                  "roles": ["1180000000000000009"], "joined_at": "2026-11-29T10:00:00+00:00"})

    async def _overwrite(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        body = await request.json()
        stored = [{**c, "id": str(1_180_000_000_000_200_000 + i), "application_id": request.match_info["app"],
                   "guild_id": request.match_info["guild"], "version": "1", "type": c.get("type", 1)}
                  for i, c in enumerate(body)]
        self.overwrites.append(stored)
        self._note()
        return _json(stored)

    async def _commands(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._unauthorized()
        return _json(self.overwrites[-1] if self.overwrites else [])

    async def _callback(self, request: web.Request) -> web.Response:
        iid, token = request.match_info["id"], request.match_info["token"]
        if any(r.interaction_id == iid for r in self.responses):
            self.answered_again += 1
            self._note()
            return _json({"message": "Interaction has already been acknowledged.", "code": 40060},
                                     status=400)
        body = await _payload(request)
        sent = self._dispatched.get(iid)
        kind, data = int(body.get("type", 0)), dict(body.get("data") or {})
        self.responses.append(InteractionResponse(iid, token, kind, data,
                                                  None if sent is None else time.monotonic() - sent))
        self._note()
        # Discord's interaction callback response (``with_response=true``, which discord.py asks for)
        return _json({"interaction": {
            "id": iid, "type": self._kinds.get(iid, 3), "response_message_loading": kind == 5,
            "response_message_ephemeral": bool(int(data.get("flags") or 0) & 64)}, "resource": {"type": kind}})

    async def _followup(self, request: web.Request) -> web.Response:
        if request.match_info["token"] in self.expired_tokens:  # Discord forgets a token after 15 minutes
            self._note()
            return _json({"message": "Unknown Webhook", "code": 10015}, status=404)
        body = await _payload(request)
        self.followups.append(Followup(request.match_info["token"], request.method, body))
        self._note()
        return _json({"id": str(1_180_000_000_000_300_000 + next(self._ids)), "type": 0,
                                  "content": body.get("content", ""), "channel_id": "0", "author": {
                                      "id": self.bot_id, "username": "sabha-board", "bot": True},
                                  "attachments": [], "embeds": [], "mentions": [], "mention_roles": [],
                                  "pinned": False, "mention_everyone": False, "tts": False,
                                  "timestamp": "2026-11-29T10:00:00+00:00", "edited_timestamp": None, "flags": 0,
                                  "components": body.get("components", [])})

    async def _file(self, request: web.Request) -> web.StreamResponse:
        found = self.files.get(request.match_info["id"])
        if found is None:
            return web.Response(status=404, text="Not Found")
        data, content_type = found
        self.downloads += 1
        self._note()
        return web.Response(body=data, content_type=content_type)


def _json(data: Any, status: int = 200) -> web.Response:
    """A JSON answer with Discord's exact ``Content-Type: application/json`` (discord.py reads no other as JSON)."""
    return web.Response(body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"})


async def _payload(request: web.Request) -> dict[str, Any]:
    """A JSON body, or the ``payload_json`` part of a multipart one (discord.py sends files so)."""
    if request.content_type.startswith("multipart/"):
        form = await request.post()
        raw = form.get("payload_json")
        return json.loads(raw) if isinstance(raw, str) else {}
    if not request.can_read_body:
        return {}
    body = await request.json()
    return body if isinstance(body, dict) else {}


class FakeDiscordRest(LocalServer):
    """:class:`DiscordExtras` served alone (``sabha doctor``, ``sabha discord setup``)."""

    name = "fake Discord REST"

    def __init__(self, extras: DiscordExtras | None = None) -> None:
        super().__init__()
        self.extras = extras or DiscordExtras()

    def routes(self, app: web.Application) -> None:
        self.extras.install(app)

    @property
    def base_url(self) -> str:
        """For ``discord.api_base_url``."""
        return f"http://127.0.0.1:{self.port}/api/v10"


def served(base_url: str) -> str:
    """The origin of a fake's ``api_base_url`` (where its attachment urls live)."""
    return base_url.removesuffix("/api/v10")


class FakeDiscordMore(FakeDiscord):
    """The core fake Discord (REST + gateway, :mod:`tests.support.fakes.discord_api`) with :class:`DiscordExtras`:
    interactions (dispatched from Discord's documented payloads in tests/data/discord/, their responses and
    follow-ups recorded), slash command registration, threads opened without a message
    (``POST /channels/{id}/threads``), attachments served as Discord's CDN serves them."""

    name = "fake Discord (with interactions)"

    def __init__(self) -> None:
        super().__init__()
        self.extras = DiscordExtras(token=TOKEN, bot_id=CORE_BOT_ID, application_id=CORE_APP_ID,
                                    guild_id=CORE_GUILD_ID)
        self.extras.grant(discord_permissions_all())
        self.opened_threads: list[str] = []
        self.post_delay_s = 0.0  # every message post waits this long first (a Discord slow to take them)
        self.component_edits: list[str] = []  # ids of messages whose components were edited

    def routes(self, app: web.Application) -> None:
        self.extras.install(app, users_me=False)  # registered first: they win over the core fake's catch-all
        app.router.add_post("/api/v10/channels/{cid}/threads", self._open_thread)
        super().routes(app)

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        parts = request.match_info.get("tail", "").split("/")
        if self.post_delay_s and request.method == "POST" and len(parts) == 3 and parts[::2] == ["channels",
                                                                                                 "messages"]:
            await asyncio.sleep(self.post_delay_s)
        return await super()._rest(request)

    def _edit(self, cid: str, mid: str, body: dict[str, Any]) -> web.Response:
        """The core fake's edit, and a message's components replaced (a decision's buttons saying the verdict)."""
        if "components" in body:
            for sent in self.sent:
                if sent.id == mid and sent.channel_id == cid:
                    sent.payload = {**sent.payload, "components": body["components"]}
                    self.component_edits.append(mid)
        return super()._edit(cid, mid, body)

    async def _open_thread(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bot {self.token}":
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        parent = request.match_info["cid"]
        if parent not in self.channels:
            return _json({"message": "Unknown Channel", "code": 10003}, status=404)
        body = await request.json()
        tid = snowflake()
        thread = self.add_channel(tid, ChannelKind.PUBLIC_THREAD, name=str(body.get("name") or "thread"),
                                  parent_id=parent)
        self.opened_threads.append(tid)
        self.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        self._changed.set()
        return _json(thread, status=201)

    def file(self, data: bytes, name: str, content_type: str, channel_id: str) -> dict[str, Any]:
        """Serve ``data`` as an attachment of a message in ``channel_id``; its ``attachments[]`` item."""
        return self.extras.add_file(f"http://127.0.0.1:{self.port}", data, name, content_type, channel_id)

    def user_sends_files(self, channel_id: str, user_id: str, text: str, files: list[dict[str, Any]], *,
                         name: str = "user") -> dict[str, Any]:
        """A user's message with attachments (dispatched as ``MESSAGE_CREATE``)."""
        data = self.user_says(channel_id, user_id, text, name=name, dispatch=False)
        data["attachments"] = files
        self.dispatch("MESSAGE_CREATE", data)
        return data

    def press(self, message: SentMessage, label: str, user_id: str, *, name: str = "user") -> str:
        """``user_id`` presses the button ``label`` under the bot's ``message``: Discord's sample component
        interaction (tests/data/discord/interaction_component_example.json) with this world's ids, dispatched as
        ``INTERACTION_CREATE``; the interaction's id."""
        button = next(c for row in message.payload.get("components") or [] for c in row.get("components") or []
                      if c.get("label") == label)
        payload = _docs_sample("interaction_component_example.json")
        payload["message"] = message.payload
        payload["data"] = {"custom_id": button["custom_id"], "component_type": 2}
        return self._interact(payload, message.channel_id, user_id, name, kind=3)

    def slash(self, channel_id: str, user_id: str, command: str, options: dict[str, str], *,
              name: str = "user") -> str:
        """``user_id`` uses ``/command`` with ``options`` in ``channel_id``: Discord's sample slash command
        interaction (tests/data/discord/interaction_slash_example.json) with this world's ids; its id."""
        payload = _docs_sample("interaction_slash_example.json")
        payload["data"] = {**payload["data"], "name": command, "id": snowflake(),
                           "options": [{"type": 3, "name": k, "value": v} for k, v in options.items()]}
        return self._interact(payload, channel_id, user_id, name, kind=2)

    def _interact(self, payload: dict[str, Any], channel_id: str, user_id: str, name: str, *, kind: int) -> str:
        iid = snowflake()
        channel = self.channels[channel_id]
        payload.update(id=iid, token=f"interaction-token-{iid}", application_id=CORE_APP_ID, channel_id=channel_id,
                       guild_id=CORE_GUILD_ID, version=1, attachment_size_limit=26214400,
                       channel={k: channel[k] for k in ("id", "type", "name", "guild_id", "parent_id")
                                if channel.get(k) is not None})
        member = payload["member"]
        member["user"] = {**member["user"], "id": user_id, "username": name, "global_name": name}
        member["roles"] = []
        member.setdefault("flags", 0)  # sent by Discord since 2023 (the 2021 samples predate it; discord.py reads it)
        self.extras.dispatched(iid, kind)
        self.dispatch("INTERACTION_CREATE", payload)
        return iid


def discord_permissions_all() -> int:
    """Every permission (the bot's role in the fake server is an administrator's)."""
    return (1 << 50) - 1


def _docs_sample(name: str) -> dict[str, Any]:
    """The payload of a fixture copied from Discord's API docs (a fresh copy)."""
    loaded = json.loads((DATA / name).read_text(encoding="utf-8"))
    payload: dict[str, Any] = copy.deepcopy(loaded["payload"])
    return payload
