"""What a Telegram message carries besides text, as typed records and as board attachments.

The Bot API's media fields (``photo``, ``voice``, ``audio``, ``document``, ``video``,
``video_note``, ``animation``, ``sticker``, ``location``, ``venue``, ``contact``) are validated
by the strict models below as part of :class:`bot.channels.telegram.inbound.TgMessage`, then
:func:`attachments_of` turns them into :class:`board.media.Attachment` *references*: the
``file_id`` / ``file_unique_id`` / ``file_size`` Telegram gave, no download (the bytes are
fetched in the conversation's lane, :mod:`bot.channels.telegram.files`). A caption stays the
envelope's text.

* a photo comes in several sizes: the largest whose declared size fits the cap is taken;
* a document whose MIME type is ``image/*`` is a picture; a missing MIME type is guessed from
  the file name;
* a static sticker (WebP) is a picture; an animated (TGS) or video (WebM) sticker cannot be
  seen, which the sender is told; its emoji is answered as their words (:func:`sticker_words`),
  and with no emoji they are told to write what they mean;
* an animation (a GIF, sent as MPEG-4; Telegram repeats it as ``document`` for old clients) and
  a round video note are videos;
* a location, a venue and a contact card carry no bytes: their ``derived`` text says what was
  shared. Names, addresses and file names are outside strings: the media service quotes them.
"""

from __future__ import annotations

import mimetypes

from pydantic import BaseModel, ConfigDict

from board.media.attachment import Attachment, MediaKind, MediaRef

__all__ = [
    "TgAnimation",
    "TgAudio",
    "TgContact",
    "TgDocument",
    "TgLocation",
    "TgMedia",
    "TgPhotoSize",
    "TgSticker",
    "TgVenue",
    "TgVideo",
    "TgVideoNote",
    "TgVoice",
    "attachments_of",
    "sticker_words",
]

CHANNEL = "telegram"


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


class _File(_Strict):
    """The fields every downloadable object has."""

    file_id: str
    file_unique_id: str | None = None  # Bot API 4.5 (2019): older updates have none
    file_size: int | None = None

    def ref(self) -> MediaRef:
        """Where the bytes are, for the fetcher."""
        return MediaRef(channel=CHANNEL, id=self.file_id, unique_id=self.file_unique_id)


class TgPhotoSize(_File):
    """``PhotoSize``: one size of a photo."""

    width: int = 0
    height: int = 0


class TgVoice(_File):
    """``Voice``: a voice note recorded in the app (OGG/Opus)."""

    duration: int = 0
    mime_type: str | None = None


class TgAudio(_File):
    """``Audio``: a music or audio file."""

    duration: int = 0
    file_name: str | None = None
    mime_type: str | None = None
    title: str | None = None
    performer: str | None = None


class TgDocument(_File):
    """``Document``: a file sent as a file."""

    file_name: str | None = None
    mime_type: str | None = None


class TgVideo(_File):
    """``Video``."""

    duration: int = 0
    file_name: str | None = None
    mime_type: str | None = None


class TgVideoNote(_File):
    """``VideoNote``: a round video message."""

    duration: int = 0


class TgAnimation(_File):
    """``Animation``: a GIF or a silent H.264 video."""

    duration: int = 0
    file_name: str | None = None
    mime_type: str | None = None


class TgSticker(_File):
    """``Sticker``: static (WebP), animated (TGS) or video (WebM)."""

    is_animated: bool = False
    is_video: bool = False
    emoji: str | None = None


class TgLocation(_Strict):
    """``Location``."""

    latitude: float
    longitude: float


class TgVenue(_Strict):
    """``Venue``: a named place."""

    location: TgLocation
    title: str = ""
    address: str = ""


class TgContact(_Strict):
    """``Contact``: a shared contact card."""

    phone_number: str = ""
    first_name: str = ""
    last_name: str | None = None
    user_id: int | None = None


class TgMedia(_Strict):
    """The media fields of ``Message`` (a base of :class:`bot.channels.telegram.inbound.TgMessage`)."""

    photo: list[TgPhotoSize] | None = None
    voice: TgVoice | None = None
    audio: TgAudio | None = None
    document: TgDocument | None = None
    video: TgVideo | None = None
    video_note: TgVideoNote | None = None
    animation: TgAnimation | None = None
    sticker: TgSticker | None = None
    location: TgLocation | None = None
    venue: TgVenue | None = None
    contact: TgContact | None = None


def attachments_of(message: TgMedia, image_cap: int) -> tuple[Attachment, ...]:
    """The attachments of ``message`` (references only); ``image_cap``: the byte cap of a picture,
    to pick a photo's size."""
    found = _file_attachment(message, image_cap)
    if found is not None:
        return (found,)
    if message.venue is not None:
        v = message.venue
        return (Attachment(kind=MediaKind.LOCATION, name=v.title or None,
                           derived=f"shared a place: {v.title}, {v.address} ({_where(v.location)})"),)
    if message.location is not None:
        return (Attachment(kind=MediaKind.LOCATION, derived=f"shared a location: {_where(message.location)}"),)
    if message.contact is not None:
        return (_contact(message.contact),)
    return ()


def _file_attachment(m: TgMedia, image_cap: int) -> Attachment | None:
    """The one downloadable thing a message carries, if any (Telegram sends at most one)."""
    if m.photo:
        size = _photo_size(m.photo, image_cap)
        return Attachment(kind=MediaKind.IMAGE, mime="image/jpeg", size=size.file_size, source=size.ref())
    if m.voice is not None:
        return Attachment(kind=MediaKind.VOICE, mime=m.voice.mime_type or "audio/ogg", size=m.voice.file_size,
                          duration_s=float(m.voice.duration) or None, source=m.voice.ref())
    if m.audio is not None:
        a = m.audio
        name = a.file_name or " - ".join(p for p in (a.performer, a.title) if p) or None
        return Attachment(kind=MediaKind.AUDIO, mime=a.mime_type or _guess(a.file_name) or "audio/mpeg",
                          size=a.file_size, name=name, duration_s=float(a.duration) or None, source=a.ref())
    if m.animation is not None:  # before document: Telegram repeats an animation as a document
        g = m.animation
        return Attachment(kind=MediaKind.VIDEO, mime=g.mime_type or "video/mp4", size=g.file_size,
                          name=g.file_name or "a GIF", duration_s=float(g.duration) or None, source=g.ref())
    if m.video is not None:
        v = m.video
        return Attachment(kind=MediaKind.VIDEO, mime=v.mime_type or "video/mp4", size=v.file_size, name=v.file_name,
                          duration_s=float(v.duration) or None, source=v.ref())
    if m.video_note is not None:
        n = m.video_note
        return Attachment(kind=MediaKind.VIDEO, mime="video/mp4", size=n.file_size, name="a round video message",
                          duration_s=float(n.duration) or None, source=n.ref())
    if m.document is not None:
        d = m.document
        mime = d.mime_type or _guess(d.file_name) or "application/octet-stream"
        kind = MediaKind.IMAGE if mime.startswith("image/") else MediaKind.DOCUMENT
        return Attachment(kind=kind, mime=mime, size=d.file_size, name=d.file_name, source=d.ref())
    if m.sticker is not None:
        return _sticker(m.sticker)
    return None


def _photo_size(sizes: list[TgPhotoSize], cap: int) -> TgPhotoSize:
    """The largest size whose declared bytes fit ``cap`` (else the smallest: refused as too large)."""
    by_area = sorted(sizes, key=lambda s: (s.width * s.height, s.file_size or 0))
    fitting = [s for s in by_area if s.file_size is None or s.file_size <= cap]
    return fitting[-1] if fitting else by_area[0]


def sticker_words(message: TgMedia) -> str | None:
    """The emoji of an animated or video sticker: what the sender said with it, answered as their
    text (the sticker itself cannot be seen); None for anything else."""
    s = message.sticker
    if s is None or not (s.is_animated or s.is_video) or not s.emoji:
        return None
    return s.emoji


def _sticker(s: TgSticker) -> Attachment:
    emoji = f" ({s.emoji})" if s.emoji else ""
    if s.is_animated or s.is_video:
        what = "video sticker" if s.is_video else "animated sticker"
        article = "a" if s.is_video else "an"
        done = f", so I took its emoji {s.emoji} as your message" if s.emoji else \
            "; send a still sticker, or write what you mean"
        return Attachment(kind=MediaKind.STICKER, mime="video/webm" if s.is_video else "application/x-tgsticker",
                          size=s.file_size, name=f"{article} {what}{emoji}", source=s.ref(),
                          problem=f"I cannot see {what}s{done}")
    return Attachment(kind=MediaKind.STICKER, mime="image/webp", size=s.file_size, name=f"a sticker{emoji}",
                      source=s.ref())


def _contact(c: TgContact) -> Attachment:
    name = " ".join(p for p in (c.first_name, c.last_name) if p)
    parts = [name or "(no name)", c.phone_number or "(no number)"]
    if c.user_id is not None:
        parts.append(f"Telegram user id {c.user_id}")
    return Attachment(kind=MediaKind.CONTACTS, name=name or None, derived="shared a contact card: " + ", ".join(parts))


def _where(loc: TgLocation) -> str:
    return f"latitude {loc.latitude:.6f}, longitude {loc.longitude:.6f}"


def _guess(file_name: str | None) -> str | None:
    return mimetypes.guess_type(file_name)[0] if file_name else None
