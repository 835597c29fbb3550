"""The attachment: what a channel says was sent besides text, carried by the envelope.

A channel's parser builds an :class:`Attachment` from the service's *reference* (a
WhatsApp media id, a Telegram ``file_id``) without downloading anything, so receipt stays
as fast as for text; the intake stores it with the envelope. In the conversation's lane
the media service fetches the bytes (``blob`` is then their content hash) and understands
them (``derived``: a transcript, the extracted text, a description); what could not be
read says why in ``problem``. Kinds without bytes (a location, a contact card, an order)
arrive with ``derived`` already set by the channel.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields, replace
from enum import StrEnum
from typing import Any

__all__ = ["Attachment", "MediaKind", "MediaRef", "attachment_from_dict", "attachment_to_dict", "safe_mime"]

_MIME = re.compile(r"[A-Za-z0-9][\w.+-]{0,63}/[A-Za-z0-9][\w.+-]{0,127}")


def safe_mime(value: str | None) -> str | None:
    """A MIME type fit to show in a prompt or the minutes: ``type/subtype`` and nothing more (the
    service passes on what the sender declared: newlines and instructions included), else None."""
    found = _MIME.match((value or "").strip())
    return found.group(0).lower() if found else None


class MediaKind(StrEnum):
    """What an attachment is, as a person would say it."""

    VOICE = "voice"  # a voice note recorded in the app
    AUDIO = "audio"  # an audio file
    IMAGE = "image"  # a photo or a picture sent as a file
    DOCUMENT = "document"  # a file: PDF, DOCX, XLSX, CSV, text ...
    VIDEO = "video"
    STICKER = "sticker"
    LOCATION = "location"  # no bytes: ``derived`` says where
    CONTACTS = "contacts"  # no bytes: ``derived`` lists the cards
    ORDER = "order"  # no bytes: ``derived`` lists the items

    @property
    def has_bytes(self) -> bool:
        """True for the kinds whose content is a file to fetch."""
        return self not in (MediaKind.LOCATION, MediaKind.CONTACTS, MediaKind.ORDER)

    @property
    def spoken(self) -> bool:
        """True for sound a transcriber turns into text."""
        return self in (MediaKind.VOICE, MediaKind.AUDIO)


@dataclass(frozen=True, kw_only=True)
class MediaRef:
    """Where the bytes are, in the channel's own terms: ``id`` is the WhatsApp media id, the
    Telegram ``file_id`` or, for the terminal, a local path; ``unique_id`` Telegram's
    ``file_unique_id`` (stable across bots and time)."""

    channel: str
    id: str
    unique_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class Attachment:
    """One thing sent besides text (see the module docstring). ``size``, ``mime`` and
    ``sha256`` are what the service declared (checked when the bytes arrive); ``duration_s``
    is a voice note's or a video's length when the service says it; ``stored`` the bytes it keeps in the
    media store once read (the file as sent plus a copy made from it), ``text_bytes`` the bytes of text read from
    it kept in the state db (:meth:`board.media.store.MediaStore.text_bytes`): the quotas count both."""

    kind: MediaKind
    mime: str | None = None
    size: int | None = None
    name: str | None = None
    duration_s: float | None = None
    source: MediaRef | None = None
    sha256: str | None = None
    blob: str | None = None
    derived: str | None = None
    problem: str | None = None
    stored: int | None = None
    text_bytes: int | None = None

    @property
    def label(self) -> str:
        """How the attachment is named to a person: ``deck.pdf``, ``a voice note (7 s)``, ``a photo``."""
        if self.name:
            return self.name
        if self.kind.spoken and self.duration_s:
            return f"a {self.kind.value} note ({self.duration_s:.0f} s)" if self.kind is MediaKind.VOICE \
                else f"an audio file ({self.duration_s:.0f} s)"
        return {MediaKind.VOICE: "a voice note", MediaKind.AUDIO: "an audio file", MediaKind.IMAGE: "a picture",
                MediaKind.DOCUMENT: "a document", MediaKind.VIDEO: "a video", MediaKind.STICKER: "a sticker",
                MediaKind.LOCATION: "a location", MediaKind.CONTACTS: "a contact card",
                MediaKind.ORDER: "an order"}[self.kind]

    def with_(self, **changes: Any) -> Attachment:
        """A copy with ``changes`` (the record is frozen)."""
        return replace(self, **changes)


_FIELDS = frozenset(f.name for f in fields(Attachment))


def attachment_to_dict(attachment: Attachment) -> dict[str, Any]:
    """The attachment as JSON-ready values (unset fields left out)."""
    data = {k: v for k, v in asdict(attachment).items() if v is not None}
    data["kind"] = attachment.kind.value
    return data


def attachment_from_dict(data: dict[str, Any]) -> Attachment:
    """An attachment stored by :func:`attachment_to_dict`; ValueError/TypeError when unusable."""
    values = {k: v for k, v in data.items() if k in _FIELDS}
    values["kind"] = MediaKind(values["kind"])
    source = values.get("source")
    if isinstance(source, dict):
        values["source"] = MediaRef(**source)
    return Attachment(**values)
