"""Config section ``media``: what the board does with voice notes, pictures and documents.

Validated like every section (unknown keys are errors) and turned into the board's plain
:class:`board.media.settings.MediaSettings` by :meth:`MediaSection.settings`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from board.media.settings import SpeakReplies
from bot.config.base import StrictModel

if TYPE_CHECKING:
    from board.media.settings import MediaSettings

__all__ = ["MediaSection"]


class MediaSection(StrictModel):
    """``media``: downloads, transcription, spoken replies, pictures and documents."""

    enabled: bool = Field(True, description="false: attachments are named to the board but not downloaded or read")
    max_bytes: int | None = Field(None, ge=1024, description="largest file downloaded; unset: each service's own "
                                  "limit (WhatsApp: 16 MB audio/video, 5 MB images, 100 MB documents; Telegram: 20 MB)")
    keep_days: float = Field(30, gt=0, le=3650, description="downloaded files are removed this long after last use")
    fetch_timeout_s: float = Field(120, gt=0, le=3600, description="deadline of one download")
    transcribe_model: str | None = Field(None, min_length=1, description=(
        "provider:model that turns voice notes into text, e.g. openai:gpt-4o-mini-transcribe; unset: voice notes "
        "are not transcribed (the board says so)"))
    transcribe_fallbacks: list[str] = Field(default_factory=list, description="tried in order when it fails")
    transcribe_timeout_s: float = Field(120, gt=0, le=3600)
    transcribe_language: str | None = Field(None, min_length=2, max_length=8, description="ISO-639-1 hint, e.g. hi")
    speak_replies: SpeakReplies = Field(SpeakReplies.NEVER, description=(
        "never | when_spoken_to | always: the answer also goes out as a voice note"))
    speech_model: str | None = Field(None, min_length=1, description="provider:model for spoken replies, e.g. "
                                     "openai:gpt-4o-mini-tts; unset: no spoken replies")
    speech_voice: str = Field("alloy", min_length=1, max_length=40)
    speak_max_chars: int = Field(1500, ge=50, le=4096, description="longer answers are sent as text only")
    image_max_side: int = Field(1568, ge=256, le=8192, description="pictures are scaled down to this many pixels "
                                "on the longer side before a model sees them")
    image_max_pixels: int = Field(50_000_000, ge=1_000_000, le=500_000_000, description=(
        "larger pictures are refused (decompression bombs)"))
    image_memory_mb: int = Field(1024, ge=128, le=16384, description=(
        "memory ceiling of reading one picture (a child process decodes and scales it); a picture that needs "
        "more is refused with a sentence saying so"))
    vision_models: list[str] = Field(default_factory=list, description=(
        "models that see pictures besides the ones Sabha knows (e.g. openai:llava for a local server)"))
    doc_max_pages: int = Field(200, ge=1, le=10_000, description="pages of a PDF read")
    doc_max_rows: int = Field(5000, ge=1, le=1_000_000, description="rows of a spreadsheet or CSV read")
    doc_max_chars: int = Field(400_000, ge=1000, le=10_000_000, description="text kept of one document")
    doc_inline_chars: int = Field(6000, ge=200, le=100_000, description=(
        "a document up to this long goes into the turn whole; a longer one is searched (the knowledge base)"))
    extract_timeout_s: float = Field(30, gt=0, le=600, description="reading one document gives up after this")
    quota_total_mb: float = Field(2048, gt=0, description=(
        "the media store's size on disk at most; past it files are refused (not downloaded) until older ones expire"))
    quota_sender_mb: float = Field(500, gt=0, description=(
        "what one allowed person's files kept (sent in the last keep_days) may take; the owner has none"))
    quota_stranger_mb: float = Field(20, gt=0, description="the same for one stranger (WhatsApp public mode)")
    quota_strangers_mb: float = Field(200, gt=0, description="what all strangers' files together may take")

    def settings(self) -> MediaSettings:
        """The board's plain settings."""
        from board.media.settings import MediaSettings

        return MediaSettings(
            enabled=self.enabled, max_bytes=self.max_bytes, keep_days=self.keep_days,
            fetch_timeout_s=self.fetch_timeout_s, transcribe_model=self.transcribe_model,
            transcribe_fallbacks=tuple(self.transcribe_fallbacks), transcribe_timeout_s=self.transcribe_timeout_s,
            transcribe_language=self.transcribe_language, speak_replies=self.speak_replies,
            speech_model=self.speech_model, speech_voice=self.speech_voice, speak_max_chars=self.speak_max_chars,
            image_max_side=self.image_max_side, image_max_pixels=self.image_max_pixels,
            image_memory_mb=self.image_memory_mb,
            vision_models=tuple(self.vision_models), doc_max_pages=self.doc_max_pages,
            doc_max_rows=self.doc_max_rows, doc_max_chars=self.doc_max_chars,
            doc_inline_chars=self.doc_inline_chars, extract_timeout_s=self.extract_timeout_s,
            quota_total_mb=self.quota_total_mb, quota_sender_mb=self.quota_sender_mb,
            quota_stranger_mb=self.quota_stranger_mb, quota_strangers_mb=self.quota_strangers_mb,
        )
