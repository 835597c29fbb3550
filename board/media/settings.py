"""The media settings as plain values (``media:`` in the config; ``board`` never imports ``bot``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from board.media.attachment import MediaKind

__all__ = ["MB", "MediaSettings", "SpeakReplies", "channel_limit"]

MB = 1024 * 1024

#: What each service itself lets through, per kind (WhatsApp Cloud API media limits; Telegram
#: bots may download files up to 20 MB). ``media.max_bytes`` may lower these, never raise them.
_SERVICE_LIMITS: dict[str, dict[MediaKind, int]] = {
    "whatsapp": {MediaKind.VOICE: 16 * MB, MediaKind.AUDIO: 16 * MB, MediaKind.IMAGE: 5 * MB,
                 MediaKind.VIDEO: 16 * MB, MediaKind.DOCUMENT: 100 * MB, MediaKind.STICKER: 500 * 1024},
    "telegram": dict.fromkeys(MediaKind, 20 * MB),
}
_OTHER_LIMIT = 100 * MB  # the terminal, the web: a file the owner picked


def channel_limit(channel: str, kind: MediaKind) -> int:
    """The largest ``kind`` file ``channel``'s service delivers."""
    return _SERVICE_LIMITS.get(channel, {}).get(kind, _OTHER_LIMIT)


class SpeakReplies(StrEnum):
    """When an answer also goes out as a voice note (``media.speak_replies``)."""

    NEVER = "never"
    WHEN_SPOKEN_TO = "when_spoken_to"  # the question was a voice note
    ALWAYS = "always"


@dataclass(frozen=True)
class MediaSettings:
    """``media:``. ``max_bytes`` None: each channel's own limit per kind (:func:`channel_limit`).
    ``transcribe_model`` / ``speech_model`` None: nothing is sent anywhere; the offline
    transcriber says honestly that it cannot listen, and no reply is spoken."""

    enabled: bool = True
    max_bytes: int | None = None
    keep_days: float = 30.0
    fetch_timeout_s: float = 120.0
    transcribe_model: str | None = None
    transcribe_fallbacks: tuple[str, ...] = ()
    transcribe_timeout_s: float = 120.0
    transcribe_language: str | None = None
    speak_replies: SpeakReplies = SpeakReplies.NEVER
    speech_model: str | None = None
    speech_voice: str = "alloy"
    speak_max_chars: int = 1500
    image_max_side: int = 1568
    image_max_pixels: int = 50_000_000
    image_memory_mb: int = 1024
    vision_models: tuple[str, ...] = ()
    doc_max_pages: int = 200
    doc_max_rows: int = 5000
    doc_max_chars: int = 400_000
    doc_inline_chars: int = 6000
    extract_timeout_s: float = 30.0
    quota_total_mb: float = 2048.0
    quota_sender_mb: float = 500.0
    quota_stranger_mb: float = 20.0
    quota_strangers_mb: float = 200.0

    @property
    def image_memory_bytes(self) -> int:
        """The address space one picture reader (a child process) may use."""
        return self.image_memory_mb * MB

    def limit_for(self, channel: str, kind: MediaKind) -> int:
        """The byte cap of a ``kind`` file on ``channel``."""
        own = channel_limit(channel, kind)
        return own if self.max_bytes is None else min(own, self.max_bytes)
