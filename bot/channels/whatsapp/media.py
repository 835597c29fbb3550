"""Media through the Graph API: downloading what users send, uploading spoken replies.

Download (:meth:`WhatsAppMedia.fetch`, the channel's
:class:`board.media.understand.MediaFetcher`): ``GET /{version}/{media-id}`` with the bearer
token answers ``url``, ``mime_type``, ``sha256`` (hex) and ``file_size``, declared to the sink
(a file over the cap is refused before a byte moves); then ``GET url`` streams the bytes into
the sink chunk by chunk (never the whole file in memory). The bearer token is sent per request,
never as a default that follows redirects: to the lookup (the Graph API's host; a redirect there
is not followed) and to the download url the lookup named, which must be https on
:data:`TOKEN_HOSTS` (Meta serves it from ``lookaside.fbsbx.com``) or the Graph API's own host.
Redirects of the download are followed here (at most :data:`MAX_REDIRECTS`, never by aiohttp),
each only to https on :data:`REDIRECT_HOSTS` (that, or Meta's media CDN) or the Graph API's host;
the token goes along only while the hops stay on the origin the lookup named, and never again
once one left it. A redirect elsewhere (another site, a host inside the network), a 3xx without
a ``Location`` or too many hops is logged at ERROR and not fetched. The
url lives minutes, so every try asks for a fresh one. A 404 (or Meta's "object does not
exist", code 100) is :attr:`Problem.EXPIRED`; a network failure, a timeout or a 5xx is
retried once when no byte was written yet, then is :attr:`Problem.UNAVAILABLE`; a refused
token is logged for the operator (the sender only hears that it could not be downloaded).

Upload (:meth:`WhatsAppMedia.send_voice`): ``POST /{phone-number-id}/media`` (multipart:
``file`` as ``audio/ogg``, ``type``, ``messaging_product=whatsapp``) answers a media id, then an
``audio`` message naming it goes to the user through :meth:`.outbound.GraphClient.send_message`
(the same recipient rules and retries as text).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn
from urllib.parse import urljoin, urlsplit

import aiohttp

from board.media.attachment import Attachment
from board.media.blobs import BlobSink
from board.media.problems import MediaProblem, Problem
from board.workspace.quoting import plain_line
from bot.channels.whatsapp.attachments import CHANNEL, normalized_sha256
from bot.channels.whatsapp.config import WhatsAppSection
from bot.channels.whatsapp.outbound import GraphClient, GraphError, error_of
from bot.intake.delivery import SendProgress

__all__ = ["CHUNK_BYTES", "MAX_REDIRECTS", "REDIRECT_HOSTS", "TOKEN_HOSTS", "WhatsAppMedia", "trusted_url"]

log = logging.getLogger("sabha.whatsapp")

CHUNK_BYTES = 64 * 1024
RETRY_AFTER_S = 1.0
#: One download's socket deadlines (the whole download is bounded by media.fetch_timeout_s).
DOWNLOAD_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)
#: Redirects a download follows at most.
MAX_REDIRECTS = 3
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: Where the token may go with the download url the lookup names (https, with subdomains): Meta's
#: Cloud API answers ``https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=...`` (its
#: "Retrieve media URL" reference); no other host has been seen there, so no other gets the token.
TOKEN_HOSTS = ("fbsbx.com",)
#: Where a redirect of the download may lead (https, with subdomains; the token does not go along):
#: the lookaside host itself, or Meta's media CDN (fbcdn.net), where Meta's signed file urls live.
REDIRECT_HOSTS = ("fbsbx.com", "fbcdn.net")
_GONE = 100  # "Unsupported get request. Object with ID ... does not exist"
_TOKEN = 190


class _Transient(Exception):
    """A try that may work again (network, timeout, 5xx)."""


class WhatsAppMedia:
    """See the module docstring."""

    def __init__(self, graph: GraphClient, settings: WhatsAppSection,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.graph = graph
        self.base = f"{settings.graph_base_url}/{settings.api_version}"
        self.sleep = sleep
        self.downloads = 0
        self.uploads = 0

    # -- download ---------------------------------------------------------------------

    async def fetch(self, attachment: Attachment, sink: BlobSink) -> None:
        """Stream ``attachment``'s bytes into ``sink`` (see the module docstring)."""
        source = attachment.source
        if source is None or source.channel != CHANNEL or not source.id:
            raise MediaProblem(Problem.UNAVAILABLE, f"{attachment.label} cannot be fetched from WhatsApp")
        for attempt in (1, 2):
            try:
                await self._fetch_once(source.id, attachment.label, sink)
                self.downloads += 1
                return
            except _Transient as exc:
                log.warning("whatsapp: downloading media %s failed (try %d): %s", source.id, attempt, exc)
                if attempt == 2 or sink.size > 0:  # bytes already written cannot be taken back: no retry
                    break
                await self.sleep(RETRY_AFTER_S)
        raise MediaProblem(Problem.UNAVAILABLE, f"{attachment.label} could not be downloaded from WhatsApp right "
                                                "now; please send it again in a while")

    def _untrusted(self, media_id: str, url: str, label: str, what: str) -> MediaProblem:
        log.error("whatsapp: the %s for media %s named %s, not the Graph API's host or %s; not fetched, the "
                  "token is not sent there", what, media_id, plain_line(urlsplit(url).netloc, 80),
                  ", ".join(REDIRECT_HOSTS if what.endswith("redirect") else TOKEN_HOSTS))
        return MediaProblem(Problem.UNAVAILABLE, f"{label} could not be downloaded from WhatsApp")

    def _session(self) -> aiohttp.ClientSession:
        if self.graph.session is None:
            raise _Transient("the WhatsApp channel is not started")
        return self.graph.session

    async def _fetch_once(self, media_id: str, label: str, sink: BlobSink) -> None:
        info = await self._lookup(media_id, label)
        url = info.get("url")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise _Transient("the media lookup answered no download url")
        if not trusted_url(url, self.base, hop=False):  # the token goes with the download: only to Meta's own host
            raise self._untrusted(media_id, url, label, "media lookup's download url")
        size = info.get("file_size")
        sink.expect(size=int(size) if isinstance(size, int | str) and str(size).isdigit() else None,
                    sha256=normalized_sha256(info.get("sha256") if isinstance(info.get("sha256"), str) else None),
                    mime=info.get("mime_type") if isinstance(info.get("mime_type"), str) else None)
        try:
            await self._download(media_id, url, label, sink)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _Transient(f"the download broke off: {type(exc).__name__}: {exc}") from exc

    async def _download(self, media_id: str, url: str, label: str, sink: BlobSink) -> None:
        """GET ``url`` into ``sink``, following at most :data:`MAX_REDIRECTS` redirects, each to a trusted host;
        the token goes only to the origin the lookup named, and never again once a hop left it."""
        graph = self._session()
        token = graph.headers.get("Authorization")
        named = _origin(url)
        # the channel's connection pool, without its default headers (the token): sent per request below
        async with aiohttp.ClientSession(connector=graph.connector, connector_owner=False) as session:
            for _ in range(MAX_REDIRECTS + 1):
                token = token if _origin(url) == named else None
                headers = {"Authorization": token} if token else None
                async with session.get(url, timeout=DOWNLOAD_TIMEOUT, allow_redirects=False, headers=headers) as resp:
                    if 300 <= resp.status < 400:
                        url = self._next_hop(media_id, url, resp, label)
                        continue
                    if resp.status in (404, 410):
                        raise MediaProblem(Problem.EXPIRED, _expired(label))
                    if resp.status >= 400:
                        self._refused(media_id, GraphError(resp.status, None, f"HTTP {resp.status}", ""), label)
                    async for chunk in resp.content.iter_chunked(CHUNK_BYTES):
                        sink.write(chunk)
                    return
        log.error("whatsapp: the download of media %s was redirected more than %d times; given up", media_id,
                  MAX_REDIRECTS)
        raise MediaProblem(Problem.UNAVAILABLE, f"{label} could not be downloaded from WhatsApp")

    def _next_hop(self, media_id: str, url: str, resp: aiohttp.ClientResponse, label: str) -> str:
        """Where a 3xx of the download leads (a trusted host only); a 3xx that is no redirect is refused."""
        location = resp.headers.get("Location")
        if resp.status not in _REDIRECTS or not location:
            log.error("whatsapp: the download of media %s answered HTTP %d without a redirect to follow; its body "
                      "is not the file, not stored", media_id, resp.status)
            raise MediaProblem(Problem.UNAVAILABLE, f"{label} could not be downloaded from WhatsApp")
        target = urljoin(url, location)
        if not trusted_url(target, self.base, hop=True):
            raise self._untrusted(media_id, target, label, "download's redirect")
        return target

    async def _lookup(self, media_id: str, label: str) -> dict[str, Any]:
        """``GET /{version}/{media-id}``: the url and what the file is."""
        try:
            async with self._session().get(f"{self.base}/{media_id}", allow_redirects=False) as resp:
                try:
                    body = await resp.json(content_type=None)
                except ValueError:
                    body = None
                status = resp.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _Transient(f"the media lookup failed: {type(exc).__name__}: {exc}") from exc
        if 300 <= status < 400:  # the token went to the Graph API only; where it points is not followed
            log.error("whatsapp: the media lookup of %s answered a redirect (HTTP %d); not followed", media_id, status)
            raise MediaProblem(Problem.UNAVAILABLE, f"{label} could not be downloaded from WhatsApp")
        if status < 400 and isinstance(body, dict):
            return body
        error = error_of(status, body)
        if status == 404 or (status == 400 and error.code == _GONE):
            raise MediaProblem(Problem.EXPIRED, _expired(label))
        self._refused(media_id, error, label)

    def _refused(self, media_id: str, error: GraphError, label: str) -> NoReturn:
        """A refusal: transient (5xx, 429) or said to the sender (the operator's part logged)."""
        if error.http_status >= 500 or error.http_status == 429:
            raise _Transient(str(error))
        if error.http_status in (401, 403) or error.code == _TOKEN:
            log.error("whatsapp: the Graph API refused the access token downloading media %s (%s); check "
                      "whatsapp.access_token", media_id, error)
        else:
            log.warning("whatsapp: the Graph API refused media %s: %s", media_id, error)
        raise MediaProblem(Problem.UNAVAILABLE, f"{label} could not be downloaded from WhatsApp; "
                                                "please send it again")

    # -- upload: a spoken reply ---------------------------------------------------------

    async def upload(self, data: bytes, mime: str = "audio/ogg", filename: str = "reply.ogg") -> str:
        """``POST /{phone-number-id}/media``: the uploaded file's media id (RuntimeError when refused)."""
        form = aiohttp.FormData()
        form.add_field("messaging_product", "whatsapp")
        form.add_field("type", mime)
        form.add_field("file", data, filename=filename, content_type=mime)
        if self.graph.session is None:
            raise RuntimeError("the WhatsApp channel is not started")
        async with self.graph.session.post(f"{self.graph.number_url}/media", data=form) as resp:
            try:
                body = await resp.json(content_type=None)
            except ValueError:
                body = None
            if resp.status >= 400 or not isinstance(body, dict) or not body.get("id"):
                raise RuntimeError(f"the upload was refused: {error_of(resp.status, body)}")
        self.uploads += 1
        return str(body["id"])

    async def send_voice(self, user: str, data: bytes, *, reply_to: str | None = None) -> str:
        """Upload ``data`` (OGG/Opus) and send it to ``user`` as an audio message; its wamid."""
        media_id = await self.upload(data)
        return await self.graph.send_message(user, {"type": "audio", "audio": {"id": media_id}},
                                             reply_to=reply_to, progress=SendProgress())


def trusted_url(url: str, graph_base: str, *, hop: bool) -> bool:
    """True for a download url the lookup may name (``hop`` False: https on :data:`TOKEN_HOSTS`) or a
    redirect of it may lead to (``hop`` True: https on :data:`REDIRECT_HOSTS`), with their subdomains; or
    the Graph API's own origin (a local stand-in in tests). No userinfo (it would go along as a password)."""
    try:
        where, graph = urlsplit(url), urlsplit(graph_base)
        if where.username is not None or where.password is not None or not where.hostname:
            return False
        if _origin(url) == _origin(graph_base) and graph.hostname:
            return True
        where.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:  # a port out of range, a malformed host
        return False
    host = where.hostname.lower()
    hosts = REDIRECT_HOSTS if hop else TOKEN_HOSTS
    return where.scheme == "https" and any(host == h or host.endswith("." + h) for h in hosts)


def _origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``, the default port filled in: what decides where the token may go."""
    where = urlsplit(url)
    port = where.port or {"https": 443, "http": 80}.get(where.scheme)
    return where.scheme, (where.hostname or "").lower(), port


def _expired(label: str) -> str:
    return f"{label} is no longer available on WhatsApp (it expired or was removed); please send it again"
