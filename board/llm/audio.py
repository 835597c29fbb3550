"""The audio capability of a provider: speech to text and text to speech.

A provider that can listen and speak (OpenAI, and any OpenAI-compatible server such as a
self-hosted faster-whisper server, through ``llm.providers.openai.base_url``) has
:meth:`AudioProvider.transcribe` and :meth:`AudioProvider.speak` besides ``complete``;
:mod:`board.media.speech` resolves ``media.transcribe_model`` / ``media.speech_model``
through the same :class:`board.llm.registry.ProviderRegistry` as the chat models, so the
same key and base URL apply. Failures are :class:`board.llm.base.LLMError`, as for chat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["AudioClip", "AudioProvider", "SpeechTranscript"]


@dataclass(frozen=True)
class AudioClip:
    """Sound to transcribe: the bytes, a file name with an extension the service recognises
    (``voice.ogg``) and the MIME type."""

    data: bytes
    filename: str
    mime: str


@dataclass(frozen=True)
class SpeechTranscript:
    """What was heard: the ``text``, the length of the audio in seconds when the service said it
    (``duration_s``), and the input tokens a token-billed model reported (0 otherwise)."""

    text: str
    duration_s: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0


@runtime_checkable
class AudioProvider(Protocol):
    """A provider that turns speech into text and text into speech; raises ``LLMError``."""

    @property
    def name(self) -> str:
        """The provider prefix of model strings."""
        ...

    async def transcribe(self, model: str, clip: AudioClip, *, language: str | None = None,
                         timeout_s: float | None = None) -> SpeechTranscript:
        """``clip`` as text, by ``model`` (``provider:model``); ``language`` an ISO-639-1 hint;
        ``timeout_s`` the request's deadline (None: the client's)."""
        ...

    async def speak(self, model: str, text: str, *, voice: str, response_format: str = "opus") -> bytes:
        """``text`` spoken by ``model`` in ``voice``, as audio bytes (``opus``: OGG/Opus)."""
        ...
