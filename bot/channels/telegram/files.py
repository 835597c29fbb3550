"""Downloading what a Telegram message carries: ``getFile``, then the file, into the blob store.

:class:`TelegramFiles` is the channel's :class:`board.media.understand.MediaFetcher` work, run in
the conversation's lane (never at receipt). It asks ``getFile`` for a fresh ``file_path`` on
every try (Telegram guarantees a link for an hour), refuses a file over the cap before any
byte moves (the size the update declared is checked by the media service; the size ``getFile``
declares here), then streams the file into the sink.

Streaming. PTB's own downloads (``File.download_to_drive`` / ``download_to_memory``) read the
whole body into memory first (``BaseRequest.retrieve`` returns bytes). :class:`FileRequest` is
the channel's PTB request (same httpx pool, timeouts and proxy) with one more method,
:meth:`FileRequest.stream`, that passes the body on chunk by chunk, so a download holds one
chunk in memory whatever the file's size, and one over the cap stops at the cap.

Failures become :class:`board.media.problems.MediaProblem` sentences for the sender: a
``file_id`` Telegram no longer knows ("wrong file_id", "invalid file_id") or a 404 on the file
is ``EXPIRED``; "file is too big" (over the 20 MB bots may download) is ``TOO_LARGE``; anything
on the network (refused, timed out, cut off, 5xx) is ``UNAVAILABLE``. No httpx or PTB error
leaves this module.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import httpx
from telegram import Bot
from telegram.error import BadRequest, TelegramError
from telegram.request import HTTPXRequest

from board.media.attachment import Attachment
from board.media.blobs import BlobSink
from board.media.problems import MediaProblem, Problem
from bot.channels.telegram.connections import cheap_idle_checks

__all__ = ["BOT_DOWNLOAD_LIMIT", "FileRequest", "TelegramFiles", "file_base_url"]

log = logging.getLogger("sabha.telegram.files")

BOT_DOWNLOAD_LIMIT = 20 * 1024 * 1024  # bots may download files up to 20 MB
#: A download may pause this long between chunks (PTB's 5 s read timeout is for small answers);
#: the whole download is held to ``media.fetch_timeout_s`` by the media service.
DOWNLOAD_TIMEOUT = httpx.Timeout(connect=10.0, read=30.0, write=10.0, pool=30.0)


def file_base_url(api_base_url: str) -> str:
    """Where files are downloaded for the Bot API at ``api_base_url`` (``https://host/bot`` ->
    ``https://host/file/bot``; a ``{token}`` template keeps its placeholder)."""
    if api_base_url.endswith("/bot"):
        return api_base_url[: -len("/bot")] + "/file/bot"
    return api_base_url.replace("/bot{token}", "/file/bot{token}")


class FileRequest(HTTPXRequest):
    """PTB's httpx request plus a streamed GET (see the module docstring); its pool checks idle connections
    cheaply (:mod:`bot.channels.telegram.connections`)."""

    def _build_client(self) -> httpx.AsyncClient:
        client = super()._build_client()
        cheap_idle_checks(client)
        return client

    async def stream(self, url: str, write: Callable[[bytes], None]) -> int:
        """GET ``url`` and hand each chunk of the body to ``write``; the HTTP status (the body of
        a non-200 answer is not read)."""
        if self._client.is_closed:  # PTB rebuilds a closed client the same way before a request
            self._client = self._build_client()
        async with self._client.stream("GET", url, headers={"User-Agent": self.USER_AGENT},
                                       timeout=DOWNLOAD_TIMEOUT) as response:
            if response.status_code != 200:
                return response.status_code
            async for chunk in response.aiter_bytes():
                write(chunk)
            return 200


class TelegramFiles:
    """Fetches a Telegram attachment's bytes through ``bot`` and ``request`` (see the module docstring)."""

    def __init__(self, bot: Bot, request: FileRequest) -> None:
        self.bot = bot
        self.request = request

    async def fetch(self, attachment: Attachment, sink: BlobSink) -> None:
        """Stream ``attachment``'s file into ``sink``; raises :class:`MediaProblem`."""
        ref = attachment.source
        label = attachment.label
        if ref is None or ref.channel != "telegram":
            raise MediaProblem(Problem.UNAVAILABLE, f"{label} did not come from Telegram")
        url = await self._locate(ref.id, label, sink)
        try:
            status = await self.request.stream(url, sink.write)
        except httpx.HTTPError as exc:
            log.warning("telegram: downloading %s failed: %s", label, self._masked(_name(exc)))
            raise MediaProblem(Problem.UNAVAILABLE, f"{label} could not be downloaded from Telegram right now (the "
                                                    "connection failed); please send it again in a while") from None
        if status == 404:
            raise MediaProblem(Problem.EXPIRED, f"Telegram no longer has {label}; please send it again")
        if status != 200:
            log.warning("telegram: downloading %s answered HTTP %d", label, status)
            raise MediaProblem(Problem.UNAVAILABLE, f"{label} could not be downloaded from Telegram right now "
                                                    f"(HTTP {status}); please send it again in a while")

    def _masked(self, text: str) -> str:
        """``text`` without the bot token (file URLs carry it)."""
        return text.replace(self.bot.token, "<token>") if self.bot.token else text

    async def _locate(self, file_id: str, label: str, sink: BlobSink) -> str:
        """``getFile``: the file's download URL (a fresh one each try); its declared size is
        checked against the cap before anything is downloaded."""
        try:
            found = await self.bot.get_file(file_id)
        except BadRequest as exc:
            text = exc.message.lower()
            if "too big" in text:
                raise MediaProblem(Problem.TOO_LARGE, f"{label} is larger than the 20 MB Telegram lets bots "
                                                      "download; send a smaller file") from None
            if "file_id" in text or "file id" in text or "not found" in text:
                raise MediaProblem(Problem.EXPIRED, f"Telegram no longer has {label} (its file id is unknown or "
                                                    "expired); please send it again") from None
            log.warning("telegram: getFile for %s was refused: %s", label, exc.message)
            raise MediaProblem(Problem.UNAVAILABLE, f"Telegram would not hand over {label} right now; "
                                                    "please send it again in a while") from None
        except TelegramError as exc:
            log.warning("telegram: getFile for %s failed: %s", label, self._masked(str(exc)))
            raise MediaProblem(Problem.UNAVAILABLE, f"{label} could not be downloaded from Telegram right now "
                                                    "(Telegram did not answer); please send it again in a while"
                               ) from None
        if found.file_size is not None:
            sink.expect(size=found.file_size)
        if not found.file_path:
            raise MediaProblem(Problem.UNAVAILABLE, f"Telegram gave no download link for {label}; "
                                                    "please send it again")
        return found.file_path  # PTB prefixed it with the bot's base_file_url


def _name(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
