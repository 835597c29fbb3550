"""What is refused on what the service declared, before a byte is downloaded.

A channel's reference carries what the sender's app declared: the kind, the MIME type, the file
name and (Telegram at receipt; WhatsApp from the media lookup, checked by the sink) the size.
A file Sabha would refuse after downloading it is refused here instead, so it never reaches the
disk: a file over the kind's cap; a document whose declared type or name is a format no reader
here takes (an archive, a program, audio or video or a picture sent as a file, an old Office
file); a picture in a format the picture reader does not open (HEIC, TIFF, SVG ...). What is
declared but unknown (no name, ``application/octet-stream``) is fetched and sniffed as before
(:mod:`board.media.sniff`): a text file without a suffix is still read.
"""

from __future__ import annotations

from pathlib import PurePath

from board.media.attachment import Attachment, MediaKind, safe_mime
from board.media.blobs import size_text
from board.media.problems import MediaProblem, Problem
from board.media.settings import MediaSettings
from board.media.sniff import READERS_SAY

__all__ = ["READERS_SAY", "refused_before_download", "size_text"]


#: Pictures the picture reader opens (:data:`board.media.images.PICTURE_FORMATS`), as MIME types.
_PICTURE_MIMES = frozenset({"image/jpeg", "image/jpg", "image/pjpeg", "image/png", "image/webp", "image/gif",
                            "image/bmp", "image/x-ms-bmp"})
#: Document types no reader takes, by MIME type (a major type: every subtype).
_NOT_DOCUMENT_MAJOR = ("audio/", "video/", "image/", "font/", "model/")
_NOT_DOCUMENT_MIME = frozenset({
    "application/zip", "application/x-zip-compressed", "application/x-rar-compressed", "application/vnd.rar",
    "application/x-7z-compressed", "application/gzip", "application/x-gzip", "application/x-tar",
    "application/x-bzip2", "application/x-xz", "application/java-archive", "application/x-msdownload",
    "application/x-msdos-program", "application/x-msi", "application/x-executable", "application/x-sharedlib",
    "application/vnd.android.package-archive", "application/x-apple-diskimage", "application/x-iso9660-image",
    "application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.spreadsheet",
    "application/vnd.oasis.opendocument.presentation", "application/x-sqlite3", "application/vnd.sqlite3",
})
_NOT_DOCUMENT_SUFFIX = frozenset({
    ".zip", ".rar", ".7z", ".gz", ".tgz", ".tar", ".bz2", ".xz", ".jar", ".exe", ".msi", ".dll", ".so", ".bin",
    ".apk", ".ipa", ".dmg", ".iso", ".img", ".doc", ".xls", ".ppt", ".pptx", ".odt", ".ods", ".odp", ".pages",
    ".numbers", ".key", ".mp3", ".m4a", ".wav", ".ogg", ".opus", ".flac", ".aac", ".mp4", ".mov", ".avi", ".mkv",
    ".webm", ".3gp", ".jpg", ".jpeg", ".png", ".gif", ".webp", ".heic", ".heif", ".tif", ".tiff", ".bmp", ".svg",
    ".psd", ".sqlite", ".db",
})
#: Pictures sent as a file: told to send them as a photo.
_PICTURE_SUFFIX = frozenset({".jpg", ".jpeg", ".png", ".gif", ".webp", ".heic", ".heif", ".tif", ".tiff", ".bmp"})
_OLD_OFFICE = frozenset({".doc", ".xls", ".ppt", "application/msword", "application/vnd.ms-excel",
                         "application/vnd.ms-powerpoint"})


def refused_before_download(att: Attachment, channel: str, settings: MediaSettings) -> MediaProblem | None:
    """Why ``att`` (sent on ``channel``) is not downloaded, from what was declared; None: fetch it."""
    limit = settings.limit_for(channel, att.kind)
    if att.size is not None and att.size > limit:
        return MediaProblem(Problem.TOO_LARGE, f"{att.label} is {size_text(att.size)}; the limit is "
                                               f"{size_text(limit)}")
    mime = (safe_mime(att.mime) or "").split(";")[0]
    if att.kind in (MediaKind.IMAGE, MediaKind.STICKER):
        if mime.startswith("image/") and mime not in _PICTURE_MIMES:
            return MediaProblem(Problem.UNSUPPORTED, f"{att.label} could not be read: {mime} is not a picture "
                                                     "format I know (send a JPEG, PNG or WebP)")
        return None
    if att.kind is MediaKind.DOCUMENT:
        return _not_a_document(att, mime)
    return None


def _not_a_document(att: Attachment, mime: str) -> MediaProblem | None:
    suffix = PurePath(att.name or "").suffix.lower()
    by_suffix = suffix in _NOT_DOCUMENT_SUFFIX
    by_mime = mime in _NOT_DOCUMENT_MIME or mime.startswith(_NOT_DOCUMENT_MAJOR)
    if not (by_suffix or (by_mime and not _readable_suffix(suffix))):
        return None
    if suffix in _PICTURE_SUFFIX or mime.startswith("image/"):
        return MediaProblem(Problem.UNSUPPORTED, f"I cannot read {att.label} as a document: it is a picture; send "
                                                 "it as a photo (not as a file) and I will look at it")
    if suffix in _OLD_OFFICE or mime in _OLD_OFFICE:
        return MediaProblem(Problem.UNSUPPORTED, f"I cannot read {att.label}: old Office files (.doc/.xls/.ppt) "
                                                 "are not read; save it as .docx / .xlsx (or PDF) and send it again")
    what = f"a {suffix} file" if by_suffix else mime
    return MediaProblem(Problem.UNSUPPORTED, f"I cannot read {att.label}: {what} is not a format I read; "
                                             f"{READERS_SAY}")


def _readable_suffix(suffix: str) -> bool:
    """A name that says a format the document reader takes (the name wins over a vague type)."""
    return suffix in {".pdf", ".docx", ".xlsx", ".xlsm", ".csv", ".txt", ".text", ".log", ".md", ".markdown"}
