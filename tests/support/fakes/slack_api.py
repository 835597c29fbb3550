"""A fake Slack: the Web API on 127.0.0.1 (what slack_sdk's ``AsyncWebClient`` calls) and the Events API's side
that posts signed events to an app (:class:`SlackEventPoster`), the way Slack does.

Web API (``/api/<method>``, JSON, form or query arguments, ``Authorization: Bearer <token>``; a wrong token gets
``{"ok": false, "error": "invalid_auth"}`` as Slack answers): ``auth.test`` (who the app is),
``chat.postMessage`` (a message gets a fresh ``ts``; ``thread_ts`` kept), ``chat.update`` (the app's own
message; ``message_not_found`` otherwise), ``users.info`` (a user's profile). :meth:`FakeSlackAPI.rate_limit`
makes the next calls of a method answer 429 with ``Retry-After`` (Slack's rate tiers); each call records when it
came, so a test sees the wait. :meth:`FakeSlackAPI.hold` keeps the next calls of a method waiting until
:meth:`release` (a kill mid-answer). Every message is kept with its text as it stands (:meth:`texts`) and
every version it had.

Events: :func:`message_event` / :func:`event_callback` build the payloads (shapes of Slack's docs and of the
python-slack-sdk / bolt-python test data, tests/data/slack/); :class:`SlackEventPoster` signs a body with the
signing secret (``v0:<timestamp>:<body>``, HMAC-SHA256, ``X-Slack-Signature`` and
``X-Slack-Request-Timestamp``) and posts it; :meth:`SlackEventPoster.deliver` acts as Slack does when an app
does not acknowledge within 3 s: tries again with ``X-Slack-Retry-Num`` 1, 2, 3 and ``X-Slack-Retry-Reason``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientError, ClientSession, ClientTimeout, web

from tests.support.fakes.local_server import LocalServer

__all__ = ["BOT_ID", "BOT_USER", "SIGNING_SECRET", "TEAM", "TOKEN", "ApiCall", "FakeSlackAPI", "FakeSlackMessage",
           "SlackEventPoster", "event_callback", "message_event", "sign"]

TOKEN = "xoxb-1111-2222-fake"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # the secret of Slack's own signing example
BOT_USER = "U0APPBOT"
BOT_ID = "B0APPBOT"
TEAM = "T0TEAM"


@dataclass
class FakeSlackMessage:
    """One message the app posted: where, its ts, and its text as each version had it."""

    channel: str
    ts: str
    thread_ts: str | None
    versions: list[str]
    blocks: Any = None

    @property
    def text(self) -> str:
        return self.versions[-1]


@dataclass(frozen=True)
class ApiCall:
    """One Web API call as it arrived."""

    method: str
    args: Mapping[str, Any]
    at: float  # time.monotonic() when it arrived
    status: int


@dataclass
class _Hold:
    event: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: int = 0


class FakeSlackAPI(LocalServer):
    """See the module docstring."""

    name = "FakeSlackAPI"

    def __init__(self, *, token: str = TOKEN, users: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.token = token
        self.users = dict(users or {})  # user id -> display name
        self.messages: list[FakeSlackMessage] = []
        self.calls: list[ApiCall] = []
        self._by_ts: dict[tuple[str, str], FakeSlackMessage] = {}
        self._ts = itertools.count(1)
        self._limits: dict[str, list[float]] = {}
        self._holds: dict[str, _Hold] = {}

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/api/{method}", self._handle)

    @property
    def base_url(self) -> str:
        """For ``slack.api_base_url``."""
        return f"http://127.0.0.1:{self.port}/api"

    # -- test controls -----------------------------------------------------------------

    def rate_limit(self, method: str, times: int = 1, retry_after: float = 1.0) -> None:
        """The next ``times`` calls of ``method`` answer 429 with ``Retry-After: retry_after``."""
        self._limits.setdefault(method, []).extend([retry_after] * times)

    def hold(self, method: str) -> None:
        """Calls of ``method`` wait (unanswered) until :meth:`release`."""
        self._holds[method] = _Hold()

    def release(self, method: str) -> None:
        hold = self._holds.pop(method, None)
        if hold is not None:
            hold.event.set()

    def waiting(self, method: str) -> int:
        """How many calls of ``method`` wait at a hold."""
        hold = self._holds.get(method)
        return hold.waiting if hold is not None else 0

    def texts(self, channel: str | None = None, thread_ts: str | None = None) -> list[str]:
        """The texts of the messages as they stand, in the order posted (in ``channel`` / ``thread_ts``)."""
        return [m.text for m in self.messages if (channel is None or m.channel == channel)
                and (thread_ts is None or m.thread_ts == thread_ts)]

    def calls_of(self, method: str) -> list[ApiCall]:
        return [c for c in self.calls if c.method == method]

    # -- the API -----------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        args = await _arguments(request)
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return self._answer(method, args, {"ok": False, "error": "invalid_auth"})
        hold = self._holds.get(method)
        if hold is not None:
            hold.waiting += 1
            try:
                await hold.event.wait()
            finally:
                hold.waiting -= 1
        limits = self._limits.get(method)
        if limits:
            retry_after = limits.pop(0)
            self.calls.append(ApiCall(method, args, time.monotonic(), 429))
            return web.json_response({"ok": False, "error": "ratelimited"}, status=429,
                                     headers={"Retry-After": f"{retry_after:g}"})
        answer = getattr(self, "_" + method.replace(".", "_"), None)
        if answer is None:
            return self._answer(method, args, {"ok": False, "error": "unknown_method"})
        return self._answer(method, args, answer(args))

    def _answer(self, method: str, args: Mapping[str, Any], body: dict[str, Any]) -> web.Response:
        self.calls.append(ApiCall(method, args, time.monotonic(), 200))
        return web.json_response(body)

    def _auth_test(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": "https://fake.slack.com/", "team": "Fake Team", "user": "sabha",
                "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID, "is_enterprise_install": False}

    def _chat_postMessage(self, args: Mapping[str, Any]) -> dict[str, Any]:
        channel, text = str(args.get("channel", "")), str(args.get("text", ""))
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        ts = f"{int(time.time())}.{next(self._ts):06d}"
        thread = args.get("thread_ts")
        message = FakeSlackMessage(channel, ts, str(thread) if thread else None, [text], args.get("blocks"))
        self.messages.append(message)
        self._by_ts[(channel, ts)] = message
        return {"ok": True, "channel": channel, "ts": ts,
                "message": {"type": "message", "text": text, "user": BOT_USER, "bot_id": BOT_ID, "ts": ts}}

    def _chat_update(self, args: Mapping[str, Any]) -> dict[str, Any]:
        channel, ts = str(args.get("channel", "")), str(args.get("ts", ""))
        message = self._by_ts.get((channel, ts))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        message.versions.append(str(args.get("text", "")))
        if "blocks" in args:
            message.blocks = args["blocks"]
        return {"ok": True, "channel": channel, "ts": ts, "text": message.text}

    def _users_info(self, args: Mapping[str, Any]) -> dict[str, Any]:
        user = str(args.get("user", ""))
        if user not in self.users:
            return {"ok": False, "error": "user_not_found"}
        name = self.users[user]
        return {"ok": True, "user": {"id": user, "team_id": TEAM, "name": name.lower(), "real_name": name,
                                     "profile": {"display_name": name, "real_name": name}}}


async def _arguments(request: web.Request) -> dict[str, Any]:
    args: dict[str, Any] = dict(request.query)
    if request.can_read_body:
        if request.content_type == "application/json":
            body = await request.json()
            if isinstance(body, dict):
                args.update(body)
        else:
            args.update(dict(await request.post()))
    for key in ("blocks", "attachments"):
        if isinstance(args.get(key), str):
            args[key] = json.loads(args[key])
    return args


# -- the Events API side -----------------------------------------------------------------

_event_ids = itertools.count(1)


def message_event(channel: str, user: str, text: str, ts: str, *, thread_ts: str | None = None,
                  channel_type: str = "channel", kind: str = "message", **extra: Any) -> dict[str, Any]:
    """A ``message`` (or ``app_mention``) event as Slack sends it."""
    event: dict[str, Any] = {"type": kind, "channel": channel, "user": user, "text": text, "ts": ts,
                             "event_ts": ts, "team": TEAM, "client_msg_id": f"c{ts}",
                             "blocks": [{"type": "rich_text", "block_id": "b1", "elements": [
                                 {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}]}]}
    if kind == "message":
        event["channel_type"] = channel_type
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    event.update(extra)
    return event


def event_callback(event: Mapping[str, Any], *, event_id: str | None = None) -> dict[str, Any]:
    """The ``event_callback`` envelope Slack posts around ``event``."""
    return {"token": "legacy-verification-token", "team_id": TEAM, "context_team_id": TEAM,
            "api_app_id": "A0SABHA", "event": dict(event), "type": "event_callback",
            "event_id": event_id or f"Ev{next(_event_ids):08d}", "event_time": int(time.time()),
            "authorizations": [{"enterprise_id": None, "team_id": TEAM, "user_id": BOT_USER, "is_bot": True,
                                "is_enterprise_install": False}],
            "is_ext_shared_channel": False}


def sign(body: bytes, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    """Slack's signature headers for ``body``."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}",
            "Content-Type": "application/json"}


class SlackEventPoster:
    """Posts signed Events API requests to an app's ``url``; see the module docstring."""

    def __init__(self, url: str, secret: str = SIGNING_SECRET, *, ack_timeout_s: float = 3.0) -> None:
        self.url = url
        self.secret = secret
        self.ack_timeout_s = ack_timeout_s
        self.http: ClientSession | None = None
        self.acked: list[dict[str, Any]] = []
        self.unacked: list[dict[str, Any]] = []
        self.ack_s: list[float] = []  # how long each acknowledged request took

    async def __aenter__(self) -> SlackEventPoster:
        self.http = ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.http is not None:
            await self.http.close()
            self.http = None

    async def post(self, body: Mapping[str, Any] | bytes, *, retry: int | None = None, timestamp: int | None = None,
                   secret: str | None = None, raw: bool = False) -> tuple[int, str]:
        """Post ``body`` once (signed; ``retry``: as Slack's n-th retry); (status, text), (0, why) when no answer
        came within Slack's 3 s or the connection failed."""
        assert self.http is not None, "use `async with SlackEventPoster(...)`"
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = sign(data, secret or self.secret, timestamp)
        if retry is not None:
            headers.update({"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"})
        started = time.monotonic()
        try:
            async with self.http.post(self.url, data=data, headers=headers,
                                      timeout=ClientTimeout(total=self.ack_timeout_s)) as response:
                text = await response.text()
                if response.status == 200:
                    self.ack_s.append(time.monotonic() - started)
                return response.status, text
        except (TimeoutError, ClientError, OSError) as exc:
            return 0, f"{type(exc).__name__}: {exc}"

    async def deliver(self, body: Mapping[str, Any], *, tries: int = 4) -> bool:
        """Post ``body`` as Slack does: the first try, then retries 1..3 while it is not acknowledged (200).
        True when acknowledged; recorded in :attr:`acked` / :attr:`unacked`."""
        for attempt in range(tries):
            status, _ = await self.post(body, retry=attempt or None)
            if status == 200:
                self.acked.append(dict(body))
                return True
        self.unacked.append(dict(body))
        return False
