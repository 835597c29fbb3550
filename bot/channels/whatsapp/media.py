"""Media through the Graph API: downloading what users send, uploading spoken replies.

Download (:meth:`WhatsAppMedia.fetch`, the channel's
:class:`board.media.understand.MediaFetcher`): ``GET /{version}/{media-id}`` with the bearer
token answers ``url``, ``mime_type``, ``sha256`` (hex) and ``file_size``, declared to the sink
(a file over the cap is refused before a byte moves); then ``GET url`` with the same bearer
token streams the bytes into the sink chunk by chunk (never the whole file in memory). The
download url, and every redirect from it (followed here, at most :data:`MAX_REDIRECTS`, never by
aiohttp), must be on Meta's own hosts (or the Graph API's host): the token goes with them, and a
redirect elsewhere (another site, a host inside the network) is not followed. The
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
from bot.channels.base import SendProgress
from bot.channels.whatsapp.attachments import CHANNEL, normalized_sha256
from bot.channels.whatsapp.config import WhatsAppSection
from bot.channels.whatsapp.outbound import GraphClient, GraphError, error_of

__all__ = ["CHUNK_BYTES", "MAX_REDIRECTS", "META_MEDIA_HOSTS", "WhatsAppMedia"]

log = logging.getLogger("sabha.whatsapp")

CHUNK_BYTES = 64 * 1024
RETRY_AFTER_S = 1.0
#: One download's socket deadlines (the whole download is bounded by media.fetch_timeout_s).
DOWNLOAD_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)
#: Redirects a download follows at most.
MAX_REDIRECTS = 3
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: Meta's hosts a download (or a redirect of it) may go to over https, with their subdomains.
META_MEDIA_HOSTS = ("fbsbx.com", "fbcdn.net", "facebook.com", "whatsapp.net")
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

    def _trusted(self, url: str) -> bool:
        """True for a download url (or a redirect) the access token may go to: https on Meta's own
        hosts (:data:`META_MEDIA_HOSTS`), or the Graph API's own scheme and host (a local stand-in in tests)."""
        where, graph = urlsplit(url), urlsplit(self.base)
        if (where.scheme, where.netloc) == (graph.scheme, graph.netloc):
            return True
        host = (where.hostname or "").lower()
        return where.scheme == "https" and any(host == h or host.endswith("." + h) for h in META_MEDIA_HOSTS)

    def _untrusted(self, media_id: str, url: str, label: str, what: str) -> MediaProblem:
        log.error("whatsapp: the %s for media %s named %s, not the Graph API's host or Meta's own hosts (%s); not "
                  "fetched, the token is not sent there", what, media_id, plain_line(urlsplit(url).netloc, 80),
                  ", ".join(META_MEDIA_HOSTS))
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
        if not self._trusted(url):  # the bearer token goes with the download: only to Meta's own hosts
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
        """GET ``url`` into ``sink``, following at most :data:`MAX_REDIRECTS` redirects, each to a trusted host."""
        for _ in range(MAX_REDIRECTS + 1):
            async with self._session().get(url, timeout=DOWNLOAD_TIMEOUT, allow_redirects=False) as resp:
                if resp.status in _REDIRECTS and resp.headers.get("Location"):
                    url = urljoin(url, resp.headers["Location"])
                    if not self._trusted(url):
                        raise self._untrusted(media_id, url, label, "download's redirect")
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

    async def _lookup(self, media_id: str, label: str) -> dict[str, Any]:
        """``GET /{version}/{media-id}``: the url and what the file is."""
        try:
            async with self._session().get(f"{self.base}/{media_id}") as resp:
                try:
                    body = await resp.json(content_type=None)
                except ValueError:
                    body = None
                status = resp.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _Transient(f"the media lookup failed: {type(exc).__name__}: {exc}") from exc
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


def _expired(label: str) -> str:
    return f"{label} is no longer available on WhatsApp (it expired or was removed); please send it again"
