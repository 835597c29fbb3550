"""Voice notes and audio files -> text.

:class:`Transcriber` sends a fetched note to ``media.transcribe_model`` (then
``media.transcribe_fallbacks``) through :class:`board.media.speech.AudioCalls` (timeouts,
retries, the cost ledger, a stranger's spending limits). The transcript is kept by blob in
the media store (``media_derived``, ``how`` = ``transcript:<model>``): a turn retried after a
crash, or the same note sent again, does not pay twice. The note's length comes from the
service, else from the channel, else from the OGG file itself.

When it cannot be transcribed the sender is told why and what to do (the caption, if any, is
still answered); with no ``media.transcribe_model`` the :class:`OfflineTranscriber` is honest,
never a word it did not hear: the sender is told the note cannot be listened to here and to
type instead (:data:`CANNOT_LISTEN`); the owner's fix (:data:`NO_TRANSCRIBER`) goes to the log.
"""

from __future__ import annotations

import asyncio
import logging
import re
import textwrap
from pathlib import PurePath

from board.llm.audio import AudioClip
from board.llm.base import LLMError
from board.llm.resilience import model_chain
from board.media.attachment import Attachment, MediaKind
from board.media.blobs import Blob
from board.media.problems import MediaProblem, Problem
from board.media.speech import AudioCalls, AudioFailed, SpendRefused, ogg_duration
from board.media.understand import UnderstandContext

__all__ = ["CANNOT_LISTEN", "NO_TRANSCRIBER", "OfflineTranscriber", "Transcriber", "in_lines", "not_heard",
           "transcript_key"]

log = logging.getLogger("sabha.media")

#: The owner's fix, logged when a note arrives with no transcriber (never told to the sender).
NO_TRANSCRIBER = "set media.transcribe_model (e.g. openai:gpt-4o-mini-transcribe) to have them transcribed"
#: What the sender can do, by kind: told when no transcriber is set up.
CANNOT_LISTEN = {MediaKind.VOICE: "I can't listen to voice notes here; please type your message",
                 MediaKind.AUDIO: "I can't listen to audio files here; please type what it says"}

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


#: Where a transcript is broken into lines: the prompt quotes outside text line by line, each
#: line capped (board.workspace.quoting.quote_lines), and a transcript comes as one long line.
LINE_CHARS = 800
_SENTENCE_END = re.compile(r"(?<=[.!?\u0964\u3002])\s+")


def in_lines(text: str, width: int = LINE_CHARS) -> str:
    """``text`` with its sentences packed into lines of at most ``width`` characters (a longer
    sentence broken between words), so quoting it line by line keeps every word."""
    lines: list[str] = []
    for paragraph in text.splitlines():
        line = ""
        for sentence in _SENTENCE_END.split(paragraph.strip()):
            for piece in textwrap.wrap(sentence, width) or [""]:
                if line and len(line) + 1 + len(piece) > width:
                    lines.append(line)
                    line = piece
                else:
                    line = f"{line} {piece}" if line else piece
        if line:
            lines.append(line)
    return "\n".join(lines)


def transcript_key(model: str) -> str:
    """How a transcript made by ``model`` is kept in the media store."""
    return f"transcript:{model}"


def _what(attachment: Attachment) -> str:
    return "voice note" if attachment.kind is MediaKind.VOICE else "audio file"


def _length(attachment: Attachment, blob: Blob) -> float | None:
    return attachment.duration_s or ogg_duration(blob.path)


def not_heard(attachment: Attachment, envelope_sender: str, channel: str) -> MediaProblem:
    """A voice note or audio file with no transcriber set up: the sender's line; the owner's fix is logged."""
    log.warning("media: a %s from %s on %s was not transcribed: no transcriber is set up; %s",
                _what(attachment), envelope_sender, channel, NO_TRANSCRIBER)
    return MediaProblem(Problem.UNSUPPORTED, CANNOT_LISTEN[attachment.kind])


class OfflineTranscriber:
    """What the offline model hears: the length of the note, and no words."""

    kinds = frozenset({MediaKind.VOICE, MediaKind.AUDIO})

    async def understand(self, attachment: Attachment, blob: Blob, ctx: UnderstandContext) -> Attachment:
        seconds = _length(attachment, blob)
        problem = not_heard(attachment, ctx.envelope.sender, ctx.envelope.channel)
        return attachment.with_(duration_s=seconds, problem=problem.text)


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
        text = in_lines(heard.text)
        if not text.strip():
            raise MediaProblem(Problem.UNREADABLE, f"I could not make out any words in your {_what(attachment)}; "
                                                   "please try again or type it")
        await ctx.store.remember(blob.sha256, transcript_key(model), text)
        return attachment.with_(derived=text, duration_s=seconds)


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
