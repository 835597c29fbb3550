"""Calls to speech models: transcription (voice notes -> text) and speech (answers -> voice notes).

:class:`AudioCalls` resolves ``media.transcribe_model`` (then ``media.transcribe_fallbacks``)
and ``media.speech_model`` through the board's :class:`board.llm.registry.ProviderRegistry`,
like the chat models, so ``llm.providers.openai`` (key, ``base_url``) applies: OpenAI itself,
or any OpenAI-compatible server (a self-hosted faster-whisper server). Each model is tried
under ``media.transcribe_timeout_s``, a retryable failure (timeout, 429, 5xx, connection)
again after the jittered backoff of ``llm.retry`` (:class:`board.llm.resilience.RetryPolicy`),
then the next model; every attempt is a row of the cost ledger (``purpose`` ``transcribe`` or
``speech``), made for the sender whose message it is (:data:`board.spending.ledger.current_sender`),
so ``sabha cost``, the budgets and a stranger's public cap see it. For a stranger
(:data:`board.spending.allowance.current_allowance`), each call first reserves its worst case with the
:class:`board.spending.allowance.SpendGate`; past a limit it is not made (:class:`SpendRefused`).

Prices (:data:`AUDIO_PRICES`, OpenAI list prices at the time of writing): whisper-1 and
gpt-4o-transcribe $0.006 per audio minute, gpt-4o-mini-transcribe $0.003; tts-1 $15 and
tts-1-hd $30 per million characters; gpt-4o-mini-tts is billed per token (text in, audio out)
and recorded as OpenAI's own estimate, $0.015 per minute of speech produced (the minutes read
from the OGG it returns). A model not in the table (a local server) is recorded at cost 0,
with its audio seconds in the row's tags.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from board.llm.audio import AudioClip, AudioProvider, SpeechTranscript
from board.llm.base import LLMError, Usage
from board.llm.purpose import CallPurpose
from board.llm.registry import ProviderRegistry, UnknownModelError, split_model
from board.llm.resilience import RetryPolicy
from board.spending.allowance import SpendGate, SpendRefused
from board.spending.ledger import Ledger, LLMCallRecord

__all__ = ["AUDIO_PRICES", "AudioCalls", "AudioFailed", "AudioPrice", "SpendRefused", "audio_price",
           "ogg_duration", "ogg_seconds", "speech_seconds"]

log = logging.getLogger("sabha.media")

T = TypeVar("T")

#: Speech is about 15 characters a second (150 words a minute): a spoken reply's length before it exists.
CHARS_PER_SECOND = 15.0
#: A voice note's length when nothing says it: Opus voice notes run at about 16 kbit/s (2 KB a second),
#: so this overestimates most (what a stranger's reservation wants).
BYTES_PER_SECOND = 2000.0


@dataclass(frozen=True)
class AudioPrice:
    """USD per minute of audio (transcribed, or produced) and per million characters spoken."""

    per_minute: float = 0.0
    per_million_chars: float = 0.0

    def cost(self, seconds: float, chars: int = 0) -> float:
        """The cost of ``seconds`` of audio and ``chars`` characters."""
        return round(seconds / 60 * self.per_minute + chars * self.per_million_chars / 1_000_000, 8)


AUDIO_PRICES: dict[str, AudioPrice] = {
    "openai:whisper-1": AudioPrice(per_minute=0.006),
    "openai:gpt-4o-transcribe": AudioPrice(per_minute=0.006),
    "openai:gpt-4o-mini-transcribe": AudioPrice(per_minute=0.003),
    "openai:tts-1": AudioPrice(per_million_chars=15.0),
    "openai:tts-1-hd": AudioPrice(per_million_chars=30.0),
    "openai:gpt-4o-mini-tts": AudioPrice(per_minute=0.015),
}


def audio_price(model: str) -> AudioPrice | None:
    """The price of ``model`` (exact, else the longest key it starts with), or None."""
    key = model.strip().lower()
    best = max((k for k in AUDIO_PRICES if key.startswith(k)), key=len, default=None)
    return AUDIO_PRICES[best] if best is not None else None


class AudioFailed(Exception):
    """Every model of the chain failed; ``error`` is the last failure."""

    def __init__(self, error: LLMError) -> None:
        super().__init__(str(error))
        self.error = error


def ogg_duration(path: Path) -> float | None:
    """The length in seconds of an OGG/Opus (or OGG/Vorbis) file, from its last page's granule
    position; None when it is not one or says nothing."""
    try:
        with path.open("rb") as f:
            head = f.read(512)
            size = f.seek(0, 2)
            f.seek(max(0, size - 65_536))
            tail = f.read()
    except OSError:
        return None
    return ogg_seconds(head, tail)


def ogg_seconds(head: bytes, tail: bytes) -> float | None:
    """:func:`ogg_duration` of a file whose first bytes are ``head`` and last bytes ``tail``."""
    if not head.startswith(b"OggS"):
        return None
    rate, skip = 48_000, 0
    if (at := head.find(b"OpusHead")) >= 0 and len(head) >= at + 12:
        skip = int.from_bytes(head[at + 10:at + 12], "little")
    elif (at := head.find(b"\x01vorbis")) >= 0 and len(head) >= at + 16:
        rate = int.from_bytes(head[at + 12:at + 16], "little") or 48_000
    else:
        return None
    end = len(tail)
    while (at := tail.rfind(b"OggS", 0, end)) >= 0:
        granule = int.from_bytes(tail[at + 6:at + 14], "little") if len(tail) >= at + 14 else -1
        if tail[at + 4:at + 5] == b"\x00" and 0 < granule < 2**62:
            seconds = (granule - skip) / rate
            return round(seconds, 2) if seconds > 0 else None
        end = at
    return None


def speech_seconds(text: str) -> float:
    """About how long ``text`` takes to say."""
    return max(1.0, len(text) / CHARS_PER_SECOND)


class AudioCalls:
    """See the module docstring."""

    def __init__(self, providers: ProviderRegistry, ledger: Ledger, spend: SpendGate | None = None, *,
                 retry: RetryPolicy | None = None, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.providers = providers
        self.ledger = ledger
        self.spend = spend
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._unpriced: set[str] = set()

    def _provider(self, model: str) -> AudioProvider:
        try:
            provider = self.providers.resolve(model)
        except UnknownModelError as exc:
            raise LLMError(str(exc), kind="config") from exc
        if not isinstance(provider, AudioProvider):
            raise LLMError(f"{model}: the {split_model(model)[0]} provider cannot listen or speak; use an openai: "
                           "model (OpenAI, or an OpenAI-compatible server through llm.providers.openai.base_url)",
                           kind="config")
        return provider

    async def transcribe(self, chain: Sequence[str], clip: AudioClip, *, language: str | None, timeout_s: float,
                         seconds: float | None) -> tuple[str, SpeechTranscript]:
        """(the model that answered, what it heard): each model of ``chain`` in turn, with retries;
        ``seconds`` the note's length when known (the cost of a model that does not say it).
        Raises :class:`AudioFailed` when none did, :class:`SpendRefused` past a stranger's limit."""
        # The declared length is the sender's word (Telegram's ``duration``, an OGG's last granule); the bytes
        # bound it: a reservation (and the cost of a model that does not say how long it heard) is never
        # priced below what the size can hold.
        worst = max(seconds or 0.0, len(clip.data) / BYTES_PER_SECOND)

        async def once(model: str) -> SpeechTranscript:
            provider = self._provider(model)
            return await provider.transcribe(model, clip, language=language, timeout_s=timeout_s)

        def cost(model: str, result: SpeechTranscript | None) -> tuple[float, float, Usage]:
            heard = (result.duration_s if result is not None else None) or worst
            usage = Usage(input_tokens=result.input_tokens, output_tokens=result.output_tokens) if result else Usage()
            return self._cost(model, heard), heard, usage

        return await self._chain(chain, CallPurpose.TRANSCRIBE, timeout_s, once, cost,
                                 reserve=lambda model: _priced(model, worst))

    async def speak(self, model: str, text: str, *, voice: str, timeout_s: float) -> bytes:
        """``text`` as OGG/Opus by ``model`` (with retries); raises :class:`AudioFailed` / :class:`SpendRefused`."""

        async def once(name: str) -> bytes:
            return await self._provider(name).speak(name, text, voice=voice, response_format="opus")

        def cost(name: str, audio: bytes | None) -> tuple[float, float, Usage]:
            heard = ogg_seconds(audio[:512], audio[-65_536:]) if audio else None
            seconds = heard or speech_seconds(text)
            return self._cost(name, seconds, len(text)), seconds, Usage()

        _, audio = await self._chain([model], CallPurpose.SPEECH, timeout_s, once, cost,
                                     reserve=lambda name: _priced(name, speech_seconds(text) * 1.5, len(text)))
        return audio

    def _cost(self, model: str, seconds: float, chars: int = 0) -> float:
        price = audio_price(model)
        if price is not None:
            return price.cost(seconds, chars)
        if model not in self._unpriced:
            self._unpriced.add(model)
            log.warning("media: %s has no audio price in Sabha's table; its calls are recorded at cost 0 (the "
                        "audio seconds are in the ledger row's tags) and not counted against spending limits", model)
        return 0.0

    async def _chain(self, chain: Sequence[str], purpose: CallPurpose, timeout_s: float,
                     once: Callable[[str], Awaitable[T]],
                     cost: Callable[[str, T | None], tuple[float, float, Usage]],
                     reserve: Callable[[str], float]) -> tuple[str, T]:
        last: LLMError | None = None
        for model in chain:
            for number in range(1, self.retry.retries + 2):
                reservation = await self.spend.reserve(reserve(model), model=model) if self.spend else None
                started = time.perf_counter()
                try:
                    async with asyncio.timeout(timeout_s):
                        result = await once(model)
                except asyncio.CancelledError:
                    if reservation is not None:
                        reservation.release()
                    raise
                except Exception as exc:  # noqa: BLE001 - every failure is recorded and told, none escapes
                    error = _as_error(model, exc, timeout_s)
                    try:
                        await self._record(model, purpose, number, started, error=error)
                    finally:
                        if reservation is not None:
                            reservation.release()
                    last = error
                    if not await self._again(model, number, error):
                        break
                    continue
                try:
                    usd, seconds, usage = cost(model, result)
                    await self._record(model, purpose, number, started, usd=usd, seconds=seconds, usage=usage)
                finally:
                    if reservation is not None:
                        reservation.release()
                return model, result
        raise AudioFailed(last or LLMError("no speech model is configured", kind="config"))

    async def _again(self, model: str, number: int, error: LLMError) -> bool:
        """Whether to try ``model`` once more after ``error`` (having waited the backoff)."""
        if not error.retryable or number > self.retry.retries:
            log.warning("media: %s failed%s: %s", model, "" if error.retryable else ", not retrying", error)
            return False
        if error.retry_after is not None and error.retry_after > self.retry.retry_after_max_s:
            return False
        delay = self.retry.backoff(number, error.retry_after, random.random())
        log.warning("media: %s failed (%s); retrying in %.2f s", model, error, delay)
        await self._sleep(delay)
        return True

    async def _record(self, model: str, purpose: CallPurpose, number: int, started: float, *,
                      error: LLMError | None = None, usd: float = 0.0, seconds: float = 0.0,
                      usage: Usage | None = None) -> None:
        tags = {"audio_s": round(seconds, 2)} if error is None else None
        await self.ledger.record_llm_call(LLMCallRecord(
            provider=split_model(model)[0], model=model, outcome="ok" if error is None else error.kind,
            usage=usage or Usage(), cost_usd=usd if error is None else 0.0,
            latency_ms=round((time.perf_counter() - started) * 1000, 2), purpose=purpose, attempt=number,
            error=str(error) if error is not None else None, tags=tags))


def _priced(model: str, seconds: float, chars: int = 0) -> float:
    """The most a call can cost (0 for a model with no price: it is recorded at cost 0)."""
    price = audio_price(model)
    return price.cost(seconds * 1.1, chars) if price is not None else 0.0


def _as_error(model: str, exc: BaseException, timeout_s: float) -> LLMError:
    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, TimeoutError):
        return LLMError(f"{model}: no answer within {timeout_s:g} s (media.transcribe_timeout_s)", retryable=True,
                        kind="timeout")
    log.exception("media: %s failed unexpectedly", model)
    return LLMError(f"{model}: unexpected {type(exc).__name__}: {exc}", kind="other")
