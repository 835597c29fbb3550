"""A local fake of Slack's Socket Mode (and the Web API methods around it) for tests.

:class:`SocketModeServer` is the WebSocket side: ``GET /link`` upgrades; every new connection gets
Slack's ``hello``; :meth:`SocketModeServer.send` sends an envelope (``events_api``, ``interactive``,
``slash_commands``) to the newest connection and records it; every text frame a client sends back is
an acknowledgement (``{"envelope_id": ...}``), kept in :attr:`SocketModeServer.acks`.
:meth:`SocketModeServer.redeliver` sends an unacknowledged envelope again with ``retry_attempt`` + 1 and
``retry_reason: timeout``, as Slack does; :meth:`SocketModeServer.refresh` sends the ``disconnect``
envelope Slack sends before it closes a socket (``refresh_requested``); :meth:`SocketModeServer.drop`
closes every socket without a word (a network cut). Shapes are those of python-slack-sdk's own mock
server (``tests/data/slack/socket_mode_envelopes.json``).

:class:`FakeSlack` is ``slack``'s fake Web API (tests/support/fakes/slack_api.py) with it, composed by
subclassing: ``apps.connections.open`` (the ``xapp-`` token only; answers ``ws://127.0.0.1:<port>/link``),
the granted scopes on ``auth.test`` (``x-oauth-scopes``, as Slack sends them), ``chat.postEphemeral``, and
files (``files.info`` and the private download URL). :class:`SlackFormPoster` posts signed form bodies
(interactivity ``payload=``, slash commands) the way Slack does; :func:`block_actions` and
:func:`slash_command` build them from bolt-python's test bodies (``tests/data/slack/``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from aiohttp import ClientError, ClientSession, ClientTimeout, WSMsgType, web

from tests.support.fakes.slack_api import BOT_ID, BOT_USER, SIGNING_SECRET, TEAM, TOKEN, ApiCall, FakeSlackAPI, sign

__all__ = ["ALL_SCOPES", "APP_TOKEN", "BOT_TOKEN", "FIXTURES", "FakeSlack", "SentEnvelope", "SlackFile",
           "SlackFormPoster", "SocketModeServer", "block_actions", "fixture", "slash_command"]

BOT_TOKEN = TOKEN
APP_TOKEN = "xapp-1-A111-333-sabhatest"
FIXTURES = Path(__file__).resolve().parents[2] / "data" / "slack"
ALL_SCOPES = ("chat:write", "channels:history", "groups:history", "im:history", "app_mentions:read", "users:read",
              "files:read", "commands")


def fixture(name: str) -> dict[str, Any]:
    """A payload file of ``tests/data/slack`` (each names the project it was copied from)."""
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


@dataclass
class SentEnvelope:
    """An envelope the fake sent (once per send, redeliveries included)."""

    envelope_id: str
    type: str
    payload: dict[str, Any]
    retry_attempt: int


@dataclass
class SocketModeServer:
    """The WebSocket side of Socket Mode (see the module docstring)."""

    app_id: str = "A111"
    sockets: list[web.WebSocketResponse] = field(default_factory=list)
    sent: list[SentEnvelope] = field(default_factory=list)
    acks: dict[str, int] = field(default_factory=dict)  # envelope id -> acknowledgements seen
    connections: int = 0
    refusing: bool = False  # True: new connections are refused (503), as while Slack's socket servers are away
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/link", self._link)

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait(self, predicate: Any, timeout: float = 120) -> None:
        """Until ``predicate()`` holds (checked on every connection, envelope and acknowledgement)."""
        async def until() -> None:
            async with self._changed:
                await self._changed.wait_for(predicate)

        await asyncio.wait_for(until(), timeout)

    async def wait_connections(self, n: int, timeout: float = 120) -> None:
        """Until ``n`` connections have been opened in all (and one is open)."""
        await self.wait(lambda: self.connections >= n and any(not s.closed for s in self.sockets), timeout)

    async def wait_ack(self, envelope_id: str, timeout: float = 120) -> None:
        await self.wait(lambda: self.acks.get(envelope_id, 0) > 0, timeout)

    async def _link(self, request: web.Request) -> web.StreamResponse:
        if self.refusing:
            return web.Response(status=503, text="socket mode is unavailable")
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.sockets.append(ws)
        self.connections += 1
        hello = fixture("socket_mode_envelopes.json")["hello"]
        await ws.send_str(json.dumps({**hello, "num_connections": self.connections}))
        await self._notify()
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            with_id = json.loads(msg.data)
            envelope_id = with_id.get("envelope_id") if isinstance(with_id, dict) else None
            if envelope_id:
                self.acks[envelope_id] = self.acks.get(envelope_id, 0) + 1
                await self._notify()
        await self._notify()
        return ws

    def _open(self) -> web.WebSocketResponse:
        open_ = [s for s in self.sockets if not s.closed]
        if not open_:
            raise RuntimeError("no Socket Mode connection is open")
        return open_[-1]

    async def send(self, kind: str, payload: dict[str, Any], *, envelope_id: str | None = None,
                   retry_attempt: int = 0, retry_reason: str = "") -> str:
        """Send one envelope on the newest open connection; its id."""
        envelope_id = envelope_id or str(uuid.uuid4())
        body: dict[str, Any] = {"envelope_id": envelope_id, "payload": payload, "type": kind,
                                "accepts_response_payload": kind != "events_api"}
        if kind == "events_api":
            body |= {"retry_attempt": retry_attempt, "retry_reason": retry_reason}
        await self._open().send_str(json.dumps(body))
        self.sent.append(SentEnvelope(envelope_id, kind, payload, retry_attempt))
        await self._notify()
        return envelope_id

    async def redeliver(self, envelope_id: str) -> str:
        """Send an envelope again as Slack does when it saw no acknowledgement."""
        last = [e for e in self.sent if e.envelope_id == envelope_id][-1]
        return await self.send(last.type, last.payload, envelope_id=envelope_id,
                               retry_attempt=last.retry_attempt + 1, retry_reason="timeout")

    async def refresh(self, reason: str = "refresh_requested") -> None:
        """Slack's ``disconnect`` envelope on the open connection (then the client reconnects)."""
        disconnect = fixture("socket_mode_envelopes.json")["disconnect"]
        await self._open().send_str(json.dumps({**disconnect, "reason": reason}))

    async def drop(self) -> None:
        """Close every open socket without a word (a network cut)."""
        for ws in list(self.sockets):
            if not ws.closed:
                await ws.close()
        await self._notify()


@dataclass
class SlackFile:
    """A file a person shared: its ``files.info`` object and its bytes (served at ``url_private_download``)."""

    id: str
    name: str
    mimetype: str
    data: bytes
    filetype: str = "text"

    def info(self, base: str) -> dict[str, Any]:
        url = f"{base}/files-pri/T0TEAM-{self.id}/download/{self.name}"
        return {"id": self.id, "created": int(time.time()), "timestamp": int(time.time()), "name": self.name,
                "title": self.name, "mimetype": self.mimetype, "filetype": self.filetype, "pretty_type": "Plain Text",
                "user": "U0OWNER", "mode": "hosted", "editable": True, "is_external": False, "size": len(self.data),
                "url_private": url.replace("/download/", "/"), "url_private_download": url}


class FakeSlack(FakeSlackAPI):
    """The fake Web API (:class:`FakeSlackAPI`) with Socket Mode (``/link``, ``apps.connections.open`` for the
    ``xapp-`` token), the granted scopes on ``auth.test`` (``x-oauth-scopes``), ``chat.postEphemeral``
    (kept in :attr:`ephemerals`) and files: ``files.info`` and the private download URL, which answers the
    bytes only with the bot token as a bearer (without it Slack answers its HTML sign-in page, with 200)."""

    name = "FakeSlack"

    def __init__(self, *, token: str = TOKEN, app_token: str = APP_TOKEN, users: dict[str, str] | None = None,
                 scopes: tuple[str, ...] = ALL_SCOPES) -> None:
        super().__init__(token=token, users=users)
        self.app_token = app_token
        self.scopes = scopes
        self.socket = SocketModeServer()
        self.ephemerals: list[dict[str, Any]] = []
        self.files: dict[str, SlackFile] = {}
        self.downloads: list[tuple[str, str | None]] = []  # (file id, Authorization)
        self.sign_in_page = False  # True: every download answers the sign-in page (a token Slack no longer takes)
        self._tickets = itertools.count(1)

    def routes(self, app: web.Application) -> None:
        self.socket.add_routes(app)
        app.router.add_post("/api/apps.connections.open", self._connections_open)
        app.router.add_get("/files-pri/{file}/download/{name}", self._download)
        super().routes(app)

    @property
    def api_base_url(self) -> str:
        return self.base_url

    def add_file(self, name: str, data: bytes, mimetype: str = "text/plain") -> SlackFile:
        """A file to share in a post (its id ``F...``)."""
        shared = SlackFile(f"F{len(self.files) + 1:07d}", name, mimetype, data)
        self.files[shared.id] = shared
        return shared

    async def _connections_open(self, request: web.Request) -> web.Response:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        self.calls.append(ApiCall("apps.connections.open", {}, time.monotonic(), 200))
        if token != self.app_token:
            error = "not_allowed_token_type" if token.startswith("xoxb-") else "invalid_auth"
            return web.json_response({"ok": False, "error": error})
        return web.json_response({"ok": True, "url": f"ws://127.0.0.1:{self.port}/link?ticket={next(self._tickets)}"})

    def _answer(self, method: str, args: Mapping[str, Any], body: dict[str, Any]) -> web.Response:
        response = super()._answer(method, args, body)
        if method == "auth.test" and body.get("ok"):
            response.headers["x-oauth-scopes"] = ",".join(self.scopes)
        return response

    def _chat_postEphemeral(self, args: Mapping[str, Any]) -> dict[str, Any]:
        self.ephemerals.append(dict(args))
        return {"ok": True, "message_ts": f"{int(time.time())}.{next(self._tickets):06d}"}

    def _files_info(self, args: Mapping[str, Any]) -> dict[str, Any]:
        shared = self.files.get(str(args.get("file", "")))
        if shared is None:
            return {"ok": False, "error": "file_not_found"}
        return {"ok": True, "file": shared.info(f"http://127.0.0.1:{self.port}"), "comments": [],
                "response_metadata": {"next_cursor": ""}}

    async def _download(self, request: web.Request) -> web.StreamResponse:
        file_id = request.match_info["file"].removeprefix("T0TEAM-")
        auth = request.headers.get("Authorization")
        self.downloads.append((file_id, auth))
        shared = self.files.get(file_id)
        if auth != f"Bearer {self.token}" or self.sign_in_page:
            return web.Response(text=SIGN_IN_PAGE, content_type="text/html")
        if shared is None:
            return web.Response(status=404, text="not found")
        return web.Response(body=shared.data, content_type=shared.mimetype)


class SlackFormPoster:
    """Posts signed form bodies to an app's ``url`` as Slack posts interactivity payloads and slash commands."""

    def __init__(self, url: str, secret: str = SIGNING_SECRET) -> None:
        self.url = url
        self.secret = secret
        self.http: ClientSession | None = None

    async def __aenter__(self) -> SlackFormPoster:
        self.http = ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.http is not None:
            await self.http.close()

    async def post(self, fields: Mapping[str, str]) -> tuple[int, str]:
        """Post ``fields`` form-encoded and signed; (status, body) or (0, why) when no answer came within 3 s."""
        assert self.http is not None, "use `async with SlackFormPoster(...)`"
        data = urlencode(fields).encode()
        headers = {**sign(data, self.secret), "Content-Type": "application/x-www-form-urlencoded"}
        try:
            async with self.http.post(self.url, data=data, headers=headers,
                                      timeout=ClientTimeout(total=3.0)) as response:
                return response.status, await response.text()
        except (TimeoutError, ClientError, OSError) as exc:
            return 0, f"{type(exc).__name__}: {exc}"

    async def press(self, payload: Mapping[str, Any]) -> tuple[int, str]:
        """A ``block_actions`` (or other interactivity) payload, as ``payload=<json>``."""
        return await self.post({"payload": json.dumps(payload)})


def block_actions(user: str, channel: str, message: Mapping[str, Any], value: str, label: str,
                  action_id: str = "sabha:0") -> dict[str, Any]:
    """A press of the button ``value`` on ``message`` (as the fake recorded it: ts, thread_ts, text, blocks): the
    shape of bolt-python's block_actions test body (tests/data/slack/block_actions.json), made for this press."""
    body = fixture("block_actions.json")["body"]
    body = json.loads(json.dumps(body))
    body["user"] = {**body["user"], "id": user, "username": user.lower(), "name": user.lower()}
    body["container"] = {"type": "message", "message_ts": message["ts"], "channel_id": channel, "is_ephemeral": False}
    body["channel"] = {"id": channel, "name": "board"}
    body["message"] = {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, **message}
    body["actions"] = [{**body["actions"][0], "action_id": action_id, "block_id": "sabha-buttons", "value": value,
                        "text": {"type": "plain_text", "text": label, "emoji": True},
                        "action_ts": f"{time.time():.6f}"}]
    return dict(body)


def slash_command(user: str, channel: str, text: str, command: str = "/board") -> dict[str, str]:
    """``/board <text>`` from ``user`` in ``channel``: bolt-python's slash command test body
    (tests/data/slack/slash_command.json), made for this command."""
    fields = {k: v[0] for k, v in parse_qs(fixture("slash_command.json")["form"]).items()}
    fields.update({"user_id": user, "user_name": user.lower(), "channel_id": channel, "command": command,
                   "text": text, "trigger_id": f"{int(time.time())}.{next(_triggers)}.abc", "team_id": TEAM})
    return fields


_triggers = itertools.count(1)
SIGN_IN_PAGE = "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>"
