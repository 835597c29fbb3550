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

:class:`FakeSlackSocket` is a whole local server with it: the WebSocket plus the Web API methods
Socket Mode and ``sabha doctor`` call, under ``/api/`` (:attr:`FakeSlackSocket.api_base_url` for
``slack.api_base_url``): ``apps.connections.open`` (the ``xapp-`` token only; answers
``ws://127.0.0.1:<port>/link``) and ``auth.test`` (the bot token only; the granted scopes in the
``x-oauth-scopes`` header, as Slack sends them). A wrong token gets Slack's ``invalid_auth``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

from tests.support.fakes.local_server import LocalServer

__all__ = [
    "APP_TOKEN",
    "BOT_TOKEN",
    "FIXTURES",
    "FakeSlackSocket",
    "SentEnvelope",
    "SocketModeServer",
    "fixture",
]

BOT_TOKEN = "xoxb-111-222-sabhatest"
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

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
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
class FakeSlackSocket(LocalServer):
    """Socket Mode + ``apps.connections.open`` + ``auth.test`` on one local server."""

    bot_token: str = BOT_TOKEN
    app_token: str = APP_TOKEN
    scopes: tuple[str, ...] = ALL_SCOPES
    team: str = "Sabha Test"
    bot_user: str = "sabha"
    bot_user_id: str = "U0SABHA"
    socket: SocketModeServer = field(default_factory=SocketModeServer)
    calls: list[tuple[str, str | None]] = field(default_factory=list)  # (method, Authorization scheme+kind)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    name = "FakeSlackSocket"

    def __post_init__(self) -> None:
        super().__init__()

    def routes(self, app: web.Application) -> None:
        self.socket.add_routes(app)
        app.router.add_post("/api/apps.connections.open", self._connections_open)
        app.router.add_post("/api/auth.test", self._auth_test)

    @property
    def api_base_url(self) -> str:
        """For ``slack.api_base_url``."""
        return f"http://127.0.0.1:{self.port}/api"

    def _token(self, request: web.Request) -> str | None:
        auth = request.headers.get("Authorization", "")
        return auth.removeprefix("Bearer ").strip() or None

    async def _connections_open(self, request: web.Request) -> web.Response:
        token = self._token(request)
        self.calls.append(("apps.connections.open", (token or "")[:5]))
        if token != self.app_token:
            error = "not_allowed_token_type" if token and token.startswith("xoxb-") else "invalid_auth"
            return web.json_response({"ok": False, "error": error})
        return web.json_response({"ok": True, "url": f"ws://127.0.0.1:{self.port}/link?ticket={next(self._ids)}"})

    async def _auth_test(self, request: web.Request) -> web.Response:
        token = self._token(request)
        self.calls.append(("auth.test", (token or "")[:5]))
        if token != self.bot_token:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        return web.json_response(
            {"ok": True, "url": "https://sabha-test.slack.com/", "team": self.team, "user": self.bot_user,
             "team_id": "T111", "user_id": self.bot_user_id, "bot_id": "B111", "is_enterprise_install": False},
            headers={"x-oauth-scopes": ",".join(self.scopes), "x-accepted-oauth-scopes": ""})
