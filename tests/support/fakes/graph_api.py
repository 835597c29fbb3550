"""A fake WhatsApp Cloud API (Graph API) on 127.0.0.1 that records what it receives.

``POST /{version}/{phone_number_id}/messages`` answers a text send with Meta's success
shape (``{"messaging_product": "whatsapp", "contacts": [...], "messages": [{"id": "wamid..."}]}``)
and a read receipt with ``{"success": true}``. :meth:`FakeGraphAPI.fail_next` makes the next
sends answer with Meta's error body for a code (``{"error": {"message", "type", "code",
"error_data": {"messaging_product", "details"}, "fbtrace_id"}}``), optionally only for one
recipient. Requests without the bearer token get Meta's 401 (code 190). ``GET
/{version}/{phone_number_id}`` answers with the number's fields (what the channel's
reachability probe reads); :meth:`FakeGraphAPI.restart` brings a stopped fake back on its port.
An interactive reply-buttons message (``type: interactive``, ``interactive.type: button``) is
checked as Meta does (1 to 3 buttons, titles of at most 20 characters, a body of at most 1024;
131009 otherwise) and recorded like a text, its body as ``body`` and its buttons in ``buttons``.

Media, as the Cloud API serves it: :meth:`FakeGraphAPI.add_media` stores bytes under a media
id; ``GET /{version}/{media-id}`` (bearer checked) answers ``{"messaging_product", "url",
"mime_type", "sha256" (hex), "file_size" (a string, as Meta writes it), "id"}`` with a fresh
``url`` pointing back to the fake (``/whatsapp_business/attachments/?mid=...&hash=...``, one
hash per lookup); that url (bearer checked, 401 without) streams the bytes in chunks, slowly
when asked (``delay_s`` per chunk). An expired or unknown id answers 404 with Meta's error
body; a wrong declared ``sha256`` or ``file_size`` serves what a damaged file looks like;
:meth:`FakeGraphAPI.fail_media` makes the next lookups fail (a 5xx, a refused token).
``POST /{version}/{phone_number_id}/media`` (multipart: ``file``, ``type``,
``messaging_product``) records an upload and answers ``{"id": ...}``; an ``audio`` message
naming an uploaded id is recorded in :attr:`FakeGraphAPI.sent_audio`, a ``template`` message (sent
outside the 24-hour window) in :attr:`FakeGraphAPI.sent_templates`.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

from tests.support.fakes.local_server import LocalServer, random_id

__all__ = ["ERROR_TITLES", "FakeGraphAPI", "Media", "SentAudio", "SentText", "Upload"]

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
    131009: "Parameter value is not valid",
    131016: "Service unavailable",
    131026: "Message Undeliverable",
    131047: "Re-engagement message",
    131048: "Spam rate limit hit",
    131053: "Media upload error",
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
    buttons: tuple[tuple[str, str], ...] = ()  # (title, id) of an interactive message's reply buttons

    @property
    def user(self) -> str:
        """Whoever it went to (phone number or business-scoped user id)."""
        return self.to or self.recipient or ""


@dataclass(frozen=True)
class SentAudio:
    """An ``audio`` message the channel sent (a spoken reply)."""

    user: str
    media_id: str
    context_id: str | None
    wamid: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class SentTemplate:
    """A ``template`` message the channel sent (outside the 24-hour window)."""

    user: str
    name: str
    language: str
    parameters: list[str]  # the body's text parameters, in order
    wamid: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class Upload:
    """A file the channel uploaded with ``POST /{phone-number-id}/media``."""

    media_id: str
    type: str | None
    messaging_product: str | None
    filename: str | None
    content_type: str | None
    data: bytes


@dataclass
class Media:
    """A file the fake serves: ``sha256`` / ``size`` are what it *declares* (by default the true
    ones); ``delay_s`` sleeps before each ``chunk`` bytes; ``expired`` answers 404."""

    data: bytes
    mime: str
    sha256: str
    size: int
    delay_s: float = 0.0
    chunk: int = 64 * 1024
    expired: bool = False
    lookups: int = 0  # GET /{media-id}
    downloads: int = 0  # GET url started
    served: int = 0  # bytes sent, all downloads


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
    answer_latency: float = 0.0  # after a text is recorded as sent, before Graph's answer leaves (a slow way back)
    sent: list[SentText] = field(default_factory=list)
    reads: list[dict[str, Any]] = field(default_factory=list)
    refused: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (code, payload)
    requests: int = 0
    probes: int = 0
    media: dict[str, Media] = field(default_factory=dict)
    uploads: list[Upload] = field(default_factory=list)
    sent_audio: list[SentAudio] = field(default_factory=list)
    sent_templates: list[SentTemplate] = field(default_factory=list)
    media_requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Authorization)
    _failures: list[_Failure] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _urls: dict[str, str] = field(default_factory=dict)  # url hash -> media id
    _media_failures: list[int] = field(default_factory=list)  # HTTP statuses the next media lookups answer

    name = "FakeGraphAPI"

    def __post_init__(self) -> None:
        super().__init__()

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{version}/{number}/messages", self._messages)
        app.router.add_post("/{version}/{number}/media", self._upload)
        app.router.add_get("/{version}/{number}", self._number)
        app.router.add_get("/whatsapp_business/attachments/", self._download)

    @property
    def base_url(self) -> str:
        """For ``whatsapp.graph_base_url``."""
        return f"http://127.0.0.1:{self.port}"

    def fail_next(self, code: int, times: int = 1, *, user: str | None = None, http_status: int = 400) -> None:
        """The next ``times`` text sends (to ``user``, or anyone) answer with Meta's error ``code``."""
        self._failures.extend(_Failure(code, user, http_status) for _ in range(times))

    def add_media(self, data: bytes, mime: str, *, media_id: str | None = None, sha256: str | None = None,
                  size: int | None = None, delay_s: float = 0.0, chunk: int = 64 * 1024) -> str:
        """Serve ``data`` under a new media id (returned); ``sha256`` / ``size``: declare other values."""
        media_id = media_id or f"{next(self._ids) + 900_000_000_000_000}"
        self.media[media_id] = Media(data, mime, sha256 or hashlib.sha256(data).hexdigest(),
                                     len(data) if size is None else size, delay_s, chunk)
        return media_id

    def fail_media(self, http_status: int, times: int = 1) -> None:
        """The next ``times`` media lookups answer ``http_status`` (500: Meta's transient error; 401: token)."""
        self._media_failures.extend([http_status] * times)

    def expire(self, media_id: str) -> None:
        """``media_id`` is gone (Meta keeps inbound media for a limited time): 404 from now on."""
        self.media[media_id].expired = True

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
        if request.match_info["number"] != self.phone_number_id:
            return await self._media_info(request)
        self.probes += 1
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response(self.error_body(190, "Error validating access token"), status=401)
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
        if payload.get("type") == "template" and (payload.get("to") or payload.get("recipient")):
            return self._template_sent(payload, payload.get("to") or payload.get("recipient"))
        if payload.get("type") == "audio" and (payload.get("to") or payload.get("recipient")):
            return self._audio_sent(payload, payload.get("to") or payload.get("recipient"))
        buttons: tuple[tuple[str, str], ...] = ()
        if payload.get("type") == "interactive" and (payload.get("to") or payload.get("recipient")):
            problem, buttons = _reply_buttons(payload.get("interactive"))
            if problem:
                return web.json_response(self.error_body(131009, problem), status=400)
            payload = {**payload, "text": {"body": payload["interactive"]["body"]["text"]}}
        elif payload.get("type") != "text" or not (payload.get("to") or payload.get("recipient")):
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
                                  context.get("message_id"), wamid, payload, buttons))
        if self.answer_latency:
            await asyncio.sleep(self.answer_latency)
        contact = {"input": user, "wa_id": user} if payload.get("to") else {"input": user, "user_id": user}
        return web.json_response({"messaging_product": "whatsapp", "contacts": [contact],
                                  "messages": [{"id": wamid}]})

    # -- media ---------------------------------------------------------------------------

    def _missing(self, media_id: str) -> web.Response:
        body = self.error_body(100, f"Unsupported get request. Object with ID '{media_id}' does not exist, "
                                    "cannot be loaded due to missing permissions, or does not support this operation")
        return web.json_response(body, status=404)

    async def _media_info(self, request: web.Request) -> web.Response:
        """``GET /{version}/{media-id}``: where to download it (a fresh url each time)."""
        media_id = request.match_info["number"]
        self.media_requests.append((request.path, request.headers.get("Authorization")))
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response(self.error_body(190, "Error validating access token"), status=401)
        if self._media_failures:
            status = self._media_failures.pop(0)
            return web.json_response(self.error_body(190 if status == 401 else 131016), status=status)
        media = self.media.get(media_id)
        if media is None or media.expired:
            return self._missing(media_id)
        media.lookups += 1
        token = random_id(24)
        self._urls[token] = media_id
        url = f"{self.base_url}/whatsapp_business/attachments/?mid={media_id}&ext=1763840000&hash={token}"
        return web.json_response({"messaging_product": "whatsapp", "url": url, "mime_type": media.mime,
                                  "sha256": media.sha256, "file_size": str(media.size), "id": media_id})

    async def _download(self, request: web.Request) -> web.StreamResponse:
        """The media url: the bytes, streamed in chunks (bearer checked)."""
        self.media_requests.append((request.path_qs, request.headers.get("Authorization")))
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.Response(status=401, text="Unauthorized")
        media_id = self._urls.get(request.query.get("hash", ""))
        media = self.media.get(media_id or "")
        if media_id is None or media is None or media.expired or request.query.get("mid") != media_id:
            return web.Response(status=404, text="URL signature expired")
        media.downloads += 1
        resp = web.StreamResponse(headers={"Content-Type": media.mime, "Content-Length": str(len(media.data))})
        await resp.prepare(request)
        for start in range(0, len(media.data), media.chunk):
            if media.delay_s:
                await asyncio.sleep(media.delay_s)
            piece = media.data[start:start + media.chunk]
            await resp.write(piece)
            media.served += len(piece)
        await resp.write_eof()
        return resp

    async def _upload(self, request: web.Request) -> web.Response:
        """``POST /{version}/{phone-number-id}/media`` (multipart): record the file, answer its id."""
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response(self.error_body(190, "Error validating access token"), status=401)
        if request.match_info["number"] != self.phone_number_id:
            return web.json_response(self.error_body(100, "Unsupported post request"), status=400)
        fields: dict[str, str] = {}
        filename = content_type = None
        data = b""
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                continue
            if part.name == "file":
                filename, content_type = part.filename, part.headers.get("Content-Type")
                data = bytes(await part.read())
            elif part.name:
                fields[part.name] = await part.text()
        if not data or fields.get("messaging_product") != "whatsapp":
            return web.json_response(self.error_body(100, "file and messaging_product are required"), status=400)
        media_id = f"{next(self._ids) + 800_000_000_000_000}"
        self.uploads.append(Upload(media_id, fields.get("type"), fields.get("messaging_product"), filename,
                                   content_type, data))
        return web.json_response({"id": media_id})

    def _template_sent(self, payload: dict[str, Any], user: str) -> web.Response:
        template = payload.get("template") or {}
        if not template.get("name") or not (template.get("language") or {}).get("code"):
            return web.json_response(self.error_body(100, "template name and language code are required"),
                                     status=400)
        parameters = [str(p.get("text")) for c in template.get("components") or [] if c.get("type") == "body"
                      for p in c.get("parameters") or [] if p.get("type") == "text"]
        wamid = f"wamid.OUT{next(self._ids):06d}{random_id(8)}"
        self.sent_templates.append(SentTemplate(user, template["name"], template["language"]["code"], parameters,
                                                wamid, payload))
        return web.json_response({"messaging_product": "whatsapp", "contacts": [{"input": user, "wa_id": user}],
                                  "messages": [{"id": wamid}]})

    def _audio_sent(self, payload: dict[str, Any], user: str) -> web.Response:
        media_id = str((payload.get("audio") or {}).get("id") or "")
        if media_id not in {u.media_id for u in self.uploads}:
            return web.json_response(self.error_body(131053, f"media id {media_id!r} was not uploaded"),
                                     status=400)
        wamid = f"wamid.OUT{next(self._ids):06d}{random_id(8)}"
        context = payload.get("context") or {}
        self.sent_audio.append(SentAudio(user, media_id, context.get("message_id"), wamid, payload))
        return web.json_response({"messaging_product": "whatsapp", "contacts": [{"input": user, "wa_id": user}],
                                  "messages": [{"id": wamid}]})


def _reply_buttons(interactive: Any) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """(what Meta would refuse in an interactive reply-buttons message, or None; its (title, id) pairs):
    type ``button``, a body of 1 to 1024 characters, 1 to 3 buttons of type ``reply`` with a unique
    title of 1 to 20 characters and a unique id of 1 to 256 characters."""
    if not isinstance(interactive, dict) or interactive.get("type") != "button":
        return "interactive.type must be button (reply buttons)", ()
    body = (interactive.get("body") or {}).get("text")
    if not isinstance(body, str) or not 1 <= len(body) <= 1024:
        return "interactive.body.text must be 1 to 1024 characters", ()
    items = (interactive.get("action") or {}).get("buttons")
    if not isinstance(items, list) or not 1 <= len(items) <= 3:
        return "interactive.action.buttons must hold 1 to 3 buttons", ()
    pairs = []
    for item in items:
        reply = item.get("reply") if isinstance(item, dict) and item.get("type") == "reply" else None
        title, ident = (reply or {}).get("title"), (reply or {}).get("id")
        if not isinstance(title, str) or not 1 <= len(title) <= 20:
            return "a reply button's title must be 1 to 20 characters", ()
        if not isinstance(ident, str) or not 1 <= len(ident) <= 256:
            return "a reply button's id must be 1 to 256 characters", ()
        pairs.append((title, ident))
    if len({t for t, _ in pairs}) != len(pairs) or len({i for _, i in pairs}) != len(pairs):
        return "reply buttons must have unique titles and ids", ()
    return None, tuple(pairs)
