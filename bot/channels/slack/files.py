"""Files people share in Slack: references at receipt, bytes in the conversation's lane.

At receipt (:meth:`SlackFiles.attachments`, the channel's attachments hook) each entry of a post's ``files[]``
becomes an :class:`board.media.attachment.Attachment` *reference* (the file id, its name, mimetype and size as
Slack declared them), stored with the message by the intake; nothing is downloaded, so receipt stays as fast as
for text. In the lane (:meth:`SlackFiles.fetch`, the channel's ``fetch_media``), ``files.info`` gives a fresh
``url_private_download`` and the declared size (a file over the media cap is refused before a byte moves), then
the bytes are streamed into the media store's sink with the bot token as a bearer (Slack's private URLs need
it). The token goes only to Slack's own file host (``files.slack.com``) or the host of ``slack.api_base_url``;
a URL elsewhere is not fetched. Slack answers a private URL without a valid token with its HTML sign-in page
(200): a text/html answer for a file that is not HTML is refused as unreadable, never passed on as the file.

Failures are :class:`board.media.problems.MediaProblem` sentences for the sender: ``file_not_found`` /
``file_deleted`` / a 404 -> expired; too big -> too large; the network or a 5xx -> unavailable (may work later).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError

from board.media.attachment import Attachment, MediaKind, MediaRef, safe_mime
from board.media.blobs import BlobSink
from board.media.problems import MediaProblem, Problem
from bot.channels.slack.inbound import SlackMessage
from bot.channels.slack.outbound import SlackWeb

__all__ = ["CHANNEL", "FILE_HOSTS", "SlackFiles", "kind_of"]

log = logging.getLogger("sabha.slack.files")

CHANNEL = "slack"
#: Where the bot token may go with a file URL (https, with subdomains), besides the Web API's own host.
FILE_HOSTS = ("files.slack.com",)
CHUNK_BYTES = 64 * 1024
_GONE = frozenset({"file_not_found", "file_deleted"})


def kind_of(mime: str | None, name: str | None) -> MediaKind:
    """What a shared file is, by its mimetype (Slack's ``mimetype``)."""
    mime = (mime or "").lower()
    if mime.startswith("image/"):
        return MediaKind.IMAGE
    if mime.startswith("audio/"):
        return MediaKind.AUDIO
    if mime.startswith("video/"):
        return MediaKind.VIDEO
    return MediaKind.DOCUMENT


class SlackFiles:
    """See the module docstring."""

    def __init__(self, web: SlackWeb) -> None:
        self.web = web
        self.downloads = 0

    def attachments(self, message: SlackMessage) -> tuple[Attachment, ...]:
        """The references of a post's ``files``."""
        found: list[Attachment] = []
        for shared in message.files:
            file_id = str(shared.get("id") or "")
            if not file_id or shared.get("mode") == "tombstone":
                continue
            mime = safe_mime(str(shared.get("mimetype") or "")) or None
            name = str(shared.get("name") or shared.get("title") or "") or None
            size = shared.get("size")
            found.append(Attachment(kind=kind_of(mime, name), mime=mime, name=name,
                                    size=int(size) if isinstance(size, int) else None,
                                    source=MediaRef(channel=CHANNEL, id=file_id)))
        return tuple(found)

    async def fetch(self, attachment: Attachment, sink: BlobSink) -> None:
        """Stream ``attachment``'s bytes into ``sink`` (see the module docstring)."""
        source = attachment.source
        if source is None or source.channel != CHANNEL or not source.id:
            raise MediaProblem(Problem.UNAVAILABLE, f"{attachment.label} cannot be fetched from Slack")
        info = await self._info(source.id, attachment.label)
        url = str(info.get("url_private_download") or info.get("url_private") or "")
        if not self._trusted(url):
            log.error("slack: file %s names a download URL on %s, not Slack's file host; not fetched, the token is "
                      "not sent there", source.id, urlsplit(url).netloc[:80])
            raise MediaProblem(Problem.UNAVAILABLE, f"{attachment.label} could not be downloaded from Slack")
        size = info.get("size")
        sink.expect(size=int(size) if isinstance(size, int) else None,
                    mime=str(info.get("mimetype") or "") or None)
        try:
            await self._download(url, attachment, sink)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise MediaProblem(Problem.UNAVAILABLE, f"{attachment.label} could not be downloaded from Slack right "
                                                    "now; please share it again in a while") from exc
        self.downloads += 1

    async def _info(self, file_id: str, label: str) -> Mapping[str, Any]:
        client = self.web.client
        if client is None:
            raise MediaProblem(Problem.UNAVAILABLE, f"{label} cannot be fetched: the Slack channel is not started")
        try:
            response = await client.files_info(file=file_id)
        except SlackApiError as exc:
            error = str(exc.response.get("error", "error"))
            if error in _GONE:
                raise MediaProblem(Problem.EXPIRED, f"{label} is no longer in Slack (it was deleted)") from exc
            if error == "missing_scope":
                log.error("slack: files.info refused: the bot token lacks files:read (add it and reinstall the app; "
                          "`sabha doctor` names missing scopes)")
            raise MediaProblem(Problem.UNAVAILABLE, f"{label} could not be read from Slack ({error})") from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise MediaProblem(Problem.UNAVAILABLE, f"{label} could not be fetched from Slack right now; please "
                                                    "share it again in a while") from exc
        shared = response.get("file")
        if not isinstance(shared, dict):
            raise MediaProblem(Problem.UNAVAILABLE, f"{label}: Slack's files.info named no file")
        return shared

    def _trusted(self, url: str) -> bool:
        parts, api = urlsplit(url), urlsplit(self.web.api_base_url)
        if not parts.hostname:
            return False
        if (parts.scheme, parts.netloc) == (api.scheme, api.netloc):
            return True
        return parts.scheme == "https" and any(parts.hostname == h or parts.hostname.endswith("." + h)
                                               for h in FILE_HOSTS)

    async def _download(self, url: str, attachment: Attachment, sink: BlobSink) -> None:
        session = self.web.session
        client = self.web.client
        if session is None or client is None or client.token is None:
            raise MediaProblem(Problem.UNAVAILABLE, f"{attachment.label} cannot be fetched: the channel is stopped")
        headers = {"Authorization": f"Bearer {client.token}"}
        async with session.get(url, headers=headers, allow_redirects=False,
                               timeout=aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=60)) as resp:
            if resp.status == 404:
                raise MediaProblem(Problem.EXPIRED, f"{attachment.label} is no longer in Slack")
            if resp.status != 200:
                raise aiohttp.ClientResponseError(resp.request_info, resp.history, status=resp.status,
                                                  message=f"HTTP {resp.status}")
            served = (resp.content_type or "").lower()
            if served == "text/html" and (attachment.mime or "") != "text/html":
                log.error("slack: the download of %s answered an HTML page (Slack's sign-in page: the token was "
                          "refused?)", attachment.label)
                raise MediaProblem(Problem.UNREADABLE, f"{attachment.label} could not be downloaded from Slack")
            async for chunk in resp.content.iter_chunked(CHUNK_BYTES):
                sink.write(chunk)
