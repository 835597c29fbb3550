"""A fake WhatsApp Cloud API (Graph API) on 127.0.0.1 that records what it receives.

``POST /{version}/{phone_number_id}/messages`` answers a text send with Meta's success
shape (``{"messaging_product": "whatsapp", "contacts": [...], "messages": [{"id": "wamid..."}]}``)
and a read receipt with ``{"success": true}``. :meth:`FakeGraphAPI.fail_next` makes the next
sends answer with Meta's error body for a code (``{"error": {"message", "type", "code",
"error_data": {"messaging_product", "details"}, "fbtrace_id"}}``), optionally only for one
recipient. Requests without the bearer token get Meta's 401 (code 190). ``GET
/{version}/{phone_number_id}`` answers with the number's fields (what the channel's
reachability probe reads); :meth:`FakeGraphAPI.restart` brings a stopped fake back on its port.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.local_server import LocalServer, random_id

__all__ = ["ERROR_TITLES", "FakeGraphAPI", "SentText"]

#: Meta's titles for the codes the tests inject (Cloud API error codes).
ERROR_TITLES = {
    1: "API Unknown",
    2: "API Service",
    4: "API Too Many Calls",
    100: "Invalid parameter",
    190: "Access token has expired",
    368: "Temporarily blocked for policies violations",
    80007: "Rate limit issues",
    130429: "Rate limit hit",
    131000: "Something went wrong",
    131016: "Service unavailable",
    131026: "Message Undeliverable",
    131047: "Re-engagement message",
    131048: "Spam rate limit hit",
    131056: "(Business Account, Consumer Account) pair rate limit hit",
    131062: "Business-initiated calling is not available",
}


@dataclass(frozen=True)
class SentText:
    """A text message the channel sent."""

    to: str | None
    recipient: str | None
    body: str
    context_id: str | None
    wamid: str
    payload: dict[str, Any]

    @property
    def user(self) -> str:
        """Whoever it went to (phone number or business-scoped user id)."""
        return self.to or self.recipient or ""


@dataclass
class _Failure:
    code: int
    user: str | None
    http_status: int


@dataclass
class FakeGraphAPI(LocalServer):
    """See the module docstring."""

    token: str = "test-access-token"
    phone_number_id: str = "106540352242922"
    version: str = "v23.0"
    latency: float = 0.0
    sent: list[SentText] = field(default_factory=list)
    reads: list[dict[str, Any]] = field(default_factory=list)
    refused: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (code, payload)
    requests: int = 0
    probes: int = 0
    _failures: list[_Failure] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    name = "FakeGraphAPI"

    def __post_init__(self) -> None:
        super().__init__()

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{version}/{number}/messages", self._messages)
        app.router.add_get("/{version}/{number}", self._number)

    @property
    def base_url(self) -> str:
        """For ``whatsapp.graph_base_url``."""
        return f"http://127.0.0.1:{self.port}"

    def fail_next(self, code: int, times: int = 1, *, user: str | None = None, http_status: int = 400) -> None:
        """The next ``times`` text sends (to ``user``, or anyone) answer with Meta's error ``code``."""
        self._failures.extend(_Failure(code, user, http_status) for _ in range(times))

    def texts_to(self, user: str) -> list[str]:
        """Bodies of the texts sent to ``user``."""
        return [s.body for s in self.sent if s.user == user]

    @staticmethod
    def error_body(code: int, details: str | None = None) -> dict[str, Any]:
        """Meta's error answer for ``code``."""
        title = ERROR_TITLES.get(code, "Unknown error")
        return {"error": {"message": f"({'#'}{code}) {title}", "type": "OAuthException", "code": code,
                          "error_data": {"messaging_product": "whatsapp", "details": details or title},
                          "fbtrace_id": random_id(22)}}

    async def _number(self, request: web.Request) -> web.Response:
        self.probes += 1
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response(self.error_body(190, "Error validating access token"), status=401)
        if request.match_info["number"] != self.phone_number_id:
            return web.json_response(self.error_body(100, "Unsupported get request"), status=400)
        return web.json_response({"verified_name": "Test Business", "display_phone_number": "+1 555-000-9999",
                                  "id": self.phone_number_id, "quality_rating": "GREEN"})

    async def _messages(self, request: web.Request) -> web.Response:
        self.requests += 1
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response(self.error_body(190, "Error validating access token"), status=401)
        if request.match_info["version"] != self.version or request.match_info["number"] != self.phone_number_id:
            return web.json_response(self.error_body(100, "Unsupported post request"), status=400)
        payload = await request.json()
        if self.latency:
            await asyncio.sleep(self.latency)
        if payload.get("status") == "read":
            self.reads.append(payload)
            return web.json_response({"success": True})
        if payload.get("type") != "text" or not (payload.get("to") or payload.get("recipient")):
            return web.json_response(self.error_body(100, "to or recipient and a text are required"), status=400)
        user = payload.get("to") or payload.get("recipient")
        for i, failure in enumerate(self._failures):
            if failure.user is None or failure.user == user:
                del self._failures[i]
                self.refused.append((failure.code, payload))
                return web.json_response(self.error_body(failure.code), status=failure.http_status)
        wamid = f"wamid.OUT{next(self._ids):06d}{random_id(8)}"
        context = payload.get("context") or {}
        self.sent.append(SentText(payload.get("to"), payload.get("recipient"), payload["text"]["body"],
                                  context.get("message_id"), wamid, payload))
        contact = {"input": user, "wa_id": user} if payload.get("to") else {"input": user, "user_id": user}
        return web.json_response({"messaging_product": "whatsapp", "contacts": [contact],
                                  "messages": [{"id": wamid}]})
