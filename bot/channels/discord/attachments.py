"""What a Discord message carries besides text: its ``attachments[]`` as references at receipt, their bytes
fetched in the conversation's lane (:class:`DiscordMedia`, the channel's ``FetchesMedia``).

**At receipt** (:func:`attachments_of`) each item of a message's ``attachments[]`` (Discord's attachment object:
``id``, ``filename``, ``content_type``, ``size``, ``url``; a voice message has ``duration_secs``) becomes an
:class:`board.media.attachment.Attachment` *reference*: nothing is downloaded, so storing the message stays as
fast as for text. Its source is ``MediaRef(channel="discord", id=<the url>, unique_id=<the attachment id>)``; what
it is follows its declared ``content_type`` (a picture, a sound, a video, else a document); a message flagged as a
voice message (flag 8192) makes its audio a voice note. The file name and type are outside strings: cut here,
quoted by the media service before a model reads them.

**In the lane** (:meth:`DiscordMedia.fetch_media`) the bytes are streamed from the url into the media pipeline's
sink (:class:`board.media.blobs.BlobSink`, which holds the caps: a declared size over ``media.max_bytes`` is
refused before a byte moves, and so is a download that runs past it). The url must be Discord's CDN
(``https`` on :data:`CDN_HOSTS`) or the origin of ``discord.api_base_url`` (a local stand-in in tests); anything
else is refused and logged, never fetched. No credential goes with the download (Discord's CDN urls are signed;
the bot token stays with the API), and a redirect is not followed. A 403/404 (the signed url expired, the
message was deleted) says the file is no longer available; a network error or a 5xx is tried once more when no
byte was written yet, then is "could not be downloaded right now". Each says what happened in a line the sender
reads; the message itself is answered all the same (nothing lost).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from board.media.attachment import Attachment, MediaKind, MediaRef, safe_mime
from board.media.blobs import BlobSink
from board.media.problems import MediaProblem, Problem
from board.workspace.quoting import plain_line

__all__ = ["CDN_HOSTS", "CHANNEL", "DiscordMedia", "attachments_of", "trusted_url"]

log = logging.getLogger("sabha.discord")

CHANNEL = "discord"
#: Where Discord serves attachments (https, these hosts exactly).
CDN_HOSTS = ("cdn.discordapp.com", "media.discordapp.net")
#: A message flag: it is a voice message (its one attachment is the recording).
VOICE_MESSAGE_FLAG = 1 << 13
CHUNK_BYTES = 64 * 1024
RETRY_AFTER_S = 1.0
_NAME_CHARS = 200
#: One download's socket deadlines (the whole download is bounded by media.fetch_timeout_s).
DOWNLOAD_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)


def _kind(mime: str | None, voice: bool) -> MediaKind:
    top = (mime or "").split("/", 1)[0]
    if top == "image":
        return MediaKind.IMAGE
    if top == "audio":
        return MediaKind.VOICE if voice else MediaKind.AUDIO
    if top == "video":
        return MediaKind.VIDEO
    return MediaKind.DOCUMENT


def attachments_of(items: Sequence[Any], *, flags: int = 0) -> tuple[Attachment, ...]:
    """The references of a message's ``attachments[]`` (dicts in Discord's shape, or discord.py's ``Attachment``
    objects); an item without an id or an http(s) url is skipped (logged)."""
    voice = bool(flags & VOICE_MESSAGE_FLAG)
    found = []
    for item in items:
        data = item if isinstance(item, dict) else _as_dict(item)
        url, file_id = str(data.get("url") or ""), str(data.get("id") or "")
        if not file_id or not url.startswith(("https://", "http://")):
            log.warning("discord: an attachment without an id or url was left out (%s)",
                        plain_line(str(data.get("filename") or "?"), 80))
            continue
        mime = safe_mime(data.get("content_type") if isinstance(data.get("content_type"), str) else None)
        size = data.get("size")
        duration = data.get("duration_secs")
        name = plain_line(str(data.get("filename") or ""), _NAME_CHARS) or None
        found.append(Attachment(kind=_kind(mime, voice), mime=mime, size=int(size) if isinstance(size, int) else None,
                                name=None if voice else name,
                                duration_s=float(duration) if isinstance(duration, int | float) else None,
                                source=MediaRef(channel=CHANNEL, id=url, unique_id=file_id)))
    return tuple(found)


def _as_dict(item: Any) -> dict[str, Any]:
    """discord.py's ``Attachment`` as the JSON it was read from (its documented attributes)."""
    return {"id": getattr(item, "id", None), "filename": getattr(item, "filename", None),
            "content_type": getattr(item, "content_type", None), "size": getattr(item, "size", None),
            "url": getattr(item, "url", None), "duration_secs": getattr(item, "duration", None)}


def trusted_url(url: str, api_base_url: str) -> bool:
    """True for an attachment url on Discord's CDN (https, :data:`CDN_HOSTS`) or on the origin of the configured
    API (a local stand-in); never with userinfo."""
    try:
        where, api = urlsplit(url), urlsplit(api_base_url)
        if where.username is not None or where.password is not None or not where.hostname:
            return False
        if (where.scheme, where.hostname, where.port) == (api.scheme, api.hostname, api.port):
            return True
    except ValueError:  # a port out of range, a malformed host
        return False
    return where.scheme == "https" and where.hostname.lower() in CDN_HOSTS


class _Transient(Exception):
    """A try that may work again (network, timeout, 5xx)."""


class DiscordMedia:
    """Downloads attachments (see the module docstring)."""

    def __init__(self, api_base_url: str, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.api_base_url = api_base_url
        self.sleep = sleep
        self.downloads = 0

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        """Stream ``attachment``'s bytes into ``sink``; :class:`MediaProblem` says what went wrong."""
        source = attachment.source
        if source is None or source.channel != CHANNEL or not source.id:
            raise MediaProblem(Problem.UNAVAILABLE, f"{attachment.label} cannot be fetched from Discord")
        if not trusted_url(source.id, self.api_base_url):
            log.error("discord: attachment %s names %s, not Discord's CDN (%s); not fetched", source.unique_id,
                      plain_line(urlsplit(source.id).netloc, 80), ", ".join(CDN_HOSTS))
            raise MediaProblem(Problem.UNAVAILABLE, f"{attachment.label} could not be downloaded from Discord")
        sink.expect(size=attachment.size, mime=attachment.mime)
        for attempt in (1, 2):
            try:
                await self._download(source.id, attachment.label, sink)
                self.downloads += 1
                return
            except _Transient as exc:
                log.warning("discord: downloading attachment %s failed (try %d): %s", source.unique_id, attempt, exc)
                if attempt == 2 or sink.size > 0:  # bytes already written cannot be taken back: no retry
                    break
                await self.sleep(RETRY_AFTER_S)
        raise MediaProblem(Problem.UNAVAILABLE, f"{attachment.label} could not be downloaded from Discord right "
                                                "now; please send it again in a while")

    async def _download(self, url: str, label: str, sink: BlobSink) -> None:
        try:
            async with aiohttp.ClientSession(timeout=DOWNLOAD_TIMEOUT) as session, \
                    session.get(url, allow_redirects=False) as resp:
                if resp.status in (403, 404, 410):
                    raise MediaProblem(Problem.EXPIRED, f"{label} is no longer available on Discord (the link "
                                                        "expired or the message was deleted); please send it again")
                if resp.status >= 500 or resp.status == 429:
                    raise _Transient(f"HTTP {resp.status}")
                if resp.status != 200:
                    log.error("discord: the download of %s answered HTTP %d (a redirect is not followed); not stored",
                              plain_line(label, 80), resp.status)
                    raise MediaProblem(Problem.UNAVAILABLE, f"{label} could not be downloaded from Discord")
                async for chunk in resp.content.iter_chunked(CHUNK_BYTES):
                    sink.write(chunk)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _Transient(f"{type(exc).__name__}: {exc}") from exc
