"""Voice notes and audio files -> text.

:class:`Transcriber` sends a fetched note to ``media.transcribe_model`` (then
``media.transcribe_fallbacks``) through :class:`board.media.speech.AudioCalls` (timeouts,
retries, the cost ledger, a stranger's spending limits). The transcript is kept by blob in
the media store (``media_derived``, ``how`` = ``transcript:<model>``): a turn retried after a
crash, or the same note sent again, does not pay twice. The note's length comes from the
service, else from the channel, else from the OGG file itself.

When it cannot be transcribed the sender is told why and what to do (the caption, if any, is
still answered); with no ``media.transcribe_model`` the :class:`OfflineTranscriber` is honest:
it says how long the note is and which setting would have it transcribed, never a word it
did not hear.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import PurePath

from board.llm.audio import AudioClip
from board.llm.base import LLMError
from board.llm.resilience import model_chain
from board.media.attachment import Attachment, MediaKind
from board.media.blobs import Blob
from board.media.problems import MediaProblem, Problem
from board.media.speech import AudioCalls, AudioFailed, SpendRefused, ogg_duration
from board.media.understand import UnderstandContext

__all__ = ["NO_TRANSCRIBER", "OfflineTranscriber", "Transcriber", "transcript_key"]

log = logging.getLogger("sabha.media")

NO_TRANSCRIBER = "set media.transcribe_model to transcribe it"

#: File extensions the OpenAI transcription endpoint recognises, by MIME type (it goes by the name).
_EXTENSIONS = {
    "audio/ogg": "ogg", "audio/opus": "ogg", "application/ogg": "ogg", "audio/mpeg": "mp3", "audio/mp3": "mp3",
    "audio/mp4": "m4a", "audio/m4a": "m4a", "audio/x-m4a": "m4a", "audio/aac": "m4a", "audio/wav": "wav",
    "audio/x-wav": "wav", "audio/wave": "wav", "audio/webm": "webm", "audio/flac": "flac", "audio/x-flac": "flac",
    "video/mp4": "mp4", "audio/amr": "amr", "audio/mpga": "mpga",
}

_REASONS = {
    "timeout": "the transcription service took too long",
    "rate_limit": "the transcription service is busy",
    "connection": "the transcription service could not be reached",
    "server": "the transcription service had a problem",
    "bad_response": "the transcription service gave an answer I could not read",
    "auth": "transcription is not set up correctly; the owner can see why in the log",
    "config": "transcription is not set up correctly; the owner can see why in the log",
    "bad_request": "the transcription service could not read this recording",
}


def transcript_key(model: str) -> str:
    """How a transcript made by ``model`` is kept in the media store."""
    return f"transcript:{model}"


def _what(attachment: Attachment) -> str:
    return "voice note" if attachment.kind is MediaKind.VOICE else "audio file"


def _length(attachment: Attachment, blob: Blob) -> float | None:
    return attachment.duration_s or ogg_duration(blob.path)


class OfflineTranscriber:
    """What the offline model hears: the length of the note, and no words."""

    kinds = frozenset({MediaKind.VOICE, MediaKind.AUDIO})

    async def understand(self, attachment: Attachment, blob: Blob, ctx: UnderstandContext) -> Attachment:
        seconds = _length(attachment, blob)
        length = f"a {seconds:.0f} s " if seconds else "a "
        return attachment.with_(duration_s=seconds, problem=f"{length}{_what(attachment)} arrived, but no "
                                                            f"transcriber is set up: {NO_TRANSCRIBER}")


class Transcriber:
    """Speech to text through ``media.transcribe_model``; see the module docstring. Without a
    model (a reload may remove it) it answers as the :class:`OfflineTranscriber`."""

    kinds = frozenset({MediaKind.VOICE, MediaKind.AUDIO})

    def __init__(self, calls: AudioCalls) -> None:
        self.calls = calls
        self.offline = OfflineTranscriber()

    async def understand(self, attachment: Attachment, blob: Blob, ctx: UnderstandContext) -> Attachment:
        settings = ctx.settings
        if not settings.transcribe_model:
            return await self.offline.understand(attachment, blob, ctx)
        chain = model_chain(settings.transcribe_model, settings.transcribe_fallbacks)
        seconds = _length(attachment, blob)
        for model in chain:  # heard before (a retried turn, the same note again): not paid twice
            cached = await ctx.store.derived(blob.sha256, transcript_key(model))
            if cached is not None:
                return attachment.with_(derived=cached, duration_s=seconds)
        clip = AudioClip(await asyncio.to_thread(blob.path.read_bytes), _filename(attachment), _mime(attachment))
        try:
            model, heard = await self.calls.transcribe(chain, clip, language=settings.transcribe_language,
                                                       timeout_s=settings.transcribe_timeout_s, seconds=seconds)
        except AudioFailed as exc:
            raise MediaProblem(Problem.UNAVAILABLE, _outage(attachment, exc.error)) from exc
        except SpendRefused as exc:
            raise MediaProblem(Problem.UNAVAILABLE, exc.text) from exc
        seconds = heard.duration_s or seconds
        if not heard.text.strip():
            raise MediaProblem(Problem.UNREADABLE, f"I could not make out any words in your {_what(attachment)}; "
                                                   "please try again or type it")
        await ctx.store.remember(blob.sha256, transcript_key(model), heard.text)
        return attachment.with_(derived=heard.text, duration_s=seconds)


def _outage(attachment: Attachment, error: LLMError) -> str:
    if error.setup_problem:
        log.error("media: voice notes cannot be transcribed: %s (check media.transcribe_model and "
                  "llm.providers.openai)", error)
    reason = _REASONS.get(error.kind, "the transcription failed")
    return f"I could not transcribe your {_what(attachment)} right now ({reason}); please try again or type it"


def _mime(attachment: Attachment) -> str:
    return (attachment.mime or "audio/ogg").split(";")[0].strip().lower()


def _filename(attachment: Attachment) -> str:
    """A name whose extension the service recognises (it goes by the name, not the bytes)."""
    if attachment.name and PurePath(attachment.name).suffix.lower().lstrip(".") in set(_EXTENSIONS.values()):
        return PurePath(attachment.name).name
    ext = _EXTENSIONS.get(_mime(attachment), "ogg")
    return f"{attachment.kind.value}.{ext}"
