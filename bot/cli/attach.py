"""Files from the terminal: ``sabha ask --file PATH`` and ``/attach PATH`` in ``sabha chat``.

The terminal is a channel like the others as far as media goes: :func:`local_attachment`
builds the :class:`~board.media.attachment.Attachment` a channel's parser would (its source
is the file's absolute path on the ``console`` channel; its kind from the type: sound is a
voice note (OGG/Opus) or an audio file, pictures are images, anything else a document), and
:class:`LocalFiles` is the terminal's :class:`~board.media.understand.MediaFetcher`: it
streams the file into the blob store in chunks. The board then reads the file in
the front door (``Board.handle`` with this fetcher) and answers as it does for a file sent on Telegram or WhatsApp
(:func:`ask_with_files`).

A path that cannot be sent (missing, a folder, unreadable, over the size limit) is a
:class:`~bot.cli.common.UserError` before anything is asked: nothing is spent on it.

``/attach PATH`` alone keeps the file for the next message; ``/attach PATH text`` sends the
text with it at once (:class:`Attaching`). A path with spaces is quoted (``/attach "my
deck.pdf" what is weak?``) or given alone.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from board.media.attachment import Attachment, MediaKind, MediaRef
from bot.cli.common import UserError

if TYPE_CHECKING:
    from board.app import Board
    from board.envelope import Envelope, Reply
    from board.media.blobs import BlobSink
    from board.routing.router import Route

__all__ = ["ATTACH_HELP", "CHANNEL", "Attaching", "LocalFiles", "ask_with_files", "describe", "kind_and_mime",
           "local_attachment"]

#: The terminal's channel name (the envelopes of ``sabha ask`` and ``sabha chat`` carry it).
CHANNEL = "console"
CHUNK = 256 * 1024
ATTACH_HELP = "/attach PATH [message]: send a file (document, picture, voice note) with your next message"

#: Magic numbers that name a type whatever the file is called.
_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"%PDF-", 0, "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
    (b"WAVE", 8, "audio/wav"),
    (b"OggS", 0, "audio/ogg"),
    (b"fLaC", 0, "audio/flac"),
    (b"ID3", 0, "audio/mpeg"),
)
_ZIP = b"PK\x03\x04"  # DOCX and XLSX are zip files: their name says which


def _sniff(head: bytes) -> str | None:
    for magic, at, mime in _MAGIC:
        if head[at:at + len(magic)] == magic:
            return mime
    if head[4:8] == b"ftyp":
        return "audio/mp4" if head[8:11] in (b"M4A", b"M4B") else "video/mp4"
    return None


def kind_and_mime(path: Path, head: bytes) -> tuple[MediaKind, str]:
    """What a file is, from its first bytes and then its name: (kind, mime type)."""
    guessed = mimetypes.guess_type(path.name)[0]
    sniffed = _sniff(head)
    if sniffed is None and head.startswith(_ZIP):
        mime = guessed or "application/zip"
    elif sniffed is not None:
        mime = sniffed
    elif guessed is not None:
        mime = guessed
    else:
        mime = "text/plain" if _texty(head) else "application/octet-stream"
    if mime == "audio/ogg" or path.suffix.lower() == ".opus":
        return MediaKind.VOICE, mime  # OGG/Opus: what a voice note is
    if mime.startswith("audio/"):
        return MediaKind.AUDIO, mime
    if mime.startswith("image/"):
        return MediaKind.IMAGE, mime
    if mime.startswith("video/"):
        return MediaKind.VIDEO, mime
    return MediaKind.DOCUMENT, mime


def _texty(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3  # a character cut at the end of the sample
    return True


def _size(n: int) -> str:
    """As the blob store says sizes (``5 KB``, ``1.2 MB``)."""
    if n < 1024:
        return f"{n} bytes"
    return f"{n / (1024 * 1024):.1f} MB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KB"


def local_attachment(text: str, limit_for: Callable[[str, MediaKind], int]) -> Attachment:
    """The attachment for the file at ``text`` (``~`` expanded, relative to the current folder);
    :class:`UserError` saying what to do when it cannot be sent. ``limit_for(channel, kind)``:
    the byte cap (the board's ``media`` settings)."""
    path = Path(text).expanduser().absolute()
    if not path.exists():
        raise UserError(f"no file {path}: check the path (relative paths start in {Path.cwd()})")
    if path.is_dir():
        raise UserError(f"{path} is a folder, not a file: attach the files in it one by one")
    try:
        with path.open("rb") as handle:
            head = handle.read(64)
        size = path.stat().st_size
    except OSError as exc:
        raise UserError(f"{path} cannot be read ({exc.strerror or exc}): check its permissions") from None
    kind, mime = kind_and_mime(path, head)
    limit = limit_for(CHANNEL, kind)
    if size > limit:
        raise UserError(f"{path.name} is {_size(size)}; the limit for a {kind.value} from the terminal is "
                        f"{_size(limit)} (media.max_bytes): send a smaller file or the part that matters")
    if size == 0:
        raise UserError(f"{path} is empty: there is nothing in it to read")
    return Attachment(kind=kind, mime=mime, size=size, name=path.name, source=MediaRef(channel=CHANNEL, id=str(path)))


def describe(attachment: Attachment) -> str:
    """``notes.txt (document, text/plain, 1.2 kB)``: what is attached, for the person at the terminal."""
    size = f", {_size(attachment.size)}" if attachment.size is not None else ""
    return f"{attachment.label} ({attachment.kind.value}, {attachment.mime}{size})"


class LocalFiles:
    """The terminal's :class:`~board.media.understand.MediaFetcher`: a local file, streamed in chunks."""

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        """Copy the file at ``attachment.source.id`` into ``sink`` (a file changed or gone since it
        was attached is told as unavailable)."""
        from board.media.problems import MediaProblem, Problem

        if attachment.source is None or attachment.source.channel != CHANNEL:
            raise MediaProblem(Problem.UNAVAILABLE, f"{attachment.label} is not a file on this computer")
        sink.expect(size=attachment.size, mime=attachment.mime)
        try:
            handle = await asyncio.to_thread(open, attachment.source.id, "rb")
        except OSError as exc:
            raise MediaProblem(Problem.UNAVAILABLE, f"{attachment.label} cannot be read any more "
                                                    f"({exc.strerror or exc})") from None
        with handle:
            while chunk := await asyncio.to_thread(handle.read, CHUNK):
                sink.write(chunk)


async def ask_with_files(board: Board, envelope: Envelope, attachments: tuple[Attachment, ...],
                         route: Route | None = None) -> Reply:
    """The board's answer to ``envelope`` with ``attachments``: read through the media service
    (as a channel's files are), then answered. ``route``: made of this envelope a moment ago."""
    if not attachments:
        return await (board.handle(envelope) if route is None else board.handle(envelope, route=route))
    return await board.handle(replace(envelope, attachments=attachments), route=route, fetcher=LocalFiles(),
                              read_files=True)


@dataclass
class Attaching:
    """``/attach`` in the terminal chat: the files kept for the next message."""

    limit_for: Callable[[str, MediaKind], int]
    pending: list[Attachment] = field(default_factory=list)

    def line(self, text: str) -> tuple[str | None, str | None]:
        """(what to tell the person, the message to send now or None) for a typed line. A line that
        is not ``/attach`` is sent as it is (with the files kept for it)."""
        command, _, rest = text.partition(" ")
        if command.lower() != "/attach":
            return None, text
        rest = rest.strip()
        if not rest:
            kept = ", ".join(a.label for a in self.pending) or "nothing yet"
            return f"usage: {ATTACH_HELP} (attached for the next message: {kept})", None
        path, message = _split(rest)
        try:
            attachment = local_attachment(path, self.limit_for)
        except UserError as exc:
            return f"error: {exc}", None
        self.pending.append(attachment)
        if message:
            return f"attached {describe(attachment)}", message
        return f"attached {describe(attachment)}: it goes with your next message", None

    def take(self) -> tuple[Attachment, ...]:
        """The kept files, handed to the message being sent (and no longer kept)."""
        taken, self.pending = tuple(self.pending), []
        return taken


def _split(rest: str) -> tuple[str, str]:
    """(path, message) of what follows ``/attach``: the whole of it when that is a file, else a
    quoted path (``"my deck.pdf"``) or the first word, and the rest."""
    if os.path.exists(os.path.expanduser(rest)):
        return rest, ""
    if rest[0] in "'\"":
        end = rest.find(rest[0], 1)
        if end > 0:
            return rest[1:end], rest[end + 1:].strip()
    path, _, message = rest.partition(" ")
    return path, message.strip()
