"""The embedding model: texts in, vectors out, each call a ledger row with its purpose.

``memory.embedding_model`` names it as ``provider:model``: ``openai:text-embedding-3-small`` (or any
OpenAI-compatible embeddings endpoint: a local server, vLLM, Ollama, LM Studio, with
``memory.embedding_base_url``), or ``gemini:gemini-embedding-001`` (Gemini's OpenAI-compatible endpoint). Both
are called with the official ``openai`` SDK's embeddings client (``client.embeddings.create``), so one client
serves every provider. Each call, ok or failed, is an ``llm_calls`` row (purpose ``embedding`` while indexing,
``embedding-query`` for a recall's question), priced from the price table (``llm.prices`` adds or overrides).

:attr:`EmbeddingSettings.index_key` is what a stored vector is tagged with (model and dimensions): a vector
made by another model or size is never compared with this one's, and is embedded again in the background.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from board.llm.base import Usage
from board.llm.pricing import PriceTable
from board.llm.purpose import CallPurpose
from board.spending.ledger import Ledger, LLMCallRecord

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = [
    "DEFAULT_BATCH",
    "EMBEDDING_PURPOSES",
    "GEMINI_OPENAI_URL",
    "Embedder",
    "EmbeddingError",
    "EmbeddingSettings",
]

log = logging.getLogger("sabha.recall")

#: Texts one embeddings request carries unless ``memory.embedding_batch`` says otherwise.
DEFAULT_BATCH = 64
#: Gemini's OpenAI-compatible endpoint (embeddings included).
GEMINI_OPENAI_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"
#: Characters of one text sent to the model (a passage is cut at 4,000 already; this bounds a question).
MAX_TEXT_CHARS = 8000
_PROVIDERS = ("openai", "gemini", "google")


class EmbeddingError(RuntimeError):
    """The embedding model could not be called, or answered something unusable (the message says which)."""


#: The purposes an embedding call may name (the ledger's ``purpose``): passages embedded in the background, a
#: recall's question.
EMBEDDING_PURPOSES = frozenset({CallPurpose.EMBEDDING, CallPurpose.EMBEDDING_QUERY})


@dataclass(frozen=True)
class EmbeddingSettings:
    """``memory.embedding_*`` as plain values. ``model`` is ``provider:name``; ``api_key`` the key itself (from
    ``${ENV}`` or the provider's usual variable), never logged."""

    model: str
    base_url: str | None = None
    api_key: str = ""
    dimensions: int | None = None
    batch: int = DEFAULT_BATCH
    timeout_s: float = 30.0

    @property
    def provider(self) -> str:
        """``openai`` or ``gemini``."""
        provider = self.model.partition(":")[0].lower()
        return "gemini" if provider == "google" else provider

    @property
    def name(self) -> str:
        """The model's own name, as the endpoint knows it."""
        return self.model.partition(":")[2]

    @property
    def index_key(self) -> str:
        """What stored vectors are tagged with: the model and, when asked for, the dimensions."""
        return f"{self.model}@{self.dimensions}" if self.dimensions else self.model

    def problem(self) -> str | None:
        """What is wrong with these settings (None: usable)."""
        provider, colon, name = self.model.partition(":")
        if not colon or not name or provider.lower() not in _PROVIDERS:
            return (f"memory.embedding_model {self.model!r} is not provider:model (openai:text-embedding-3-small, "
                    "gemini:gemini-embedding-001, or openai:<name> with memory.embedding_base_url for a local server)")
        return None


class Embedder:
    """Calls the embedding model; see the module docstring."""

    def __init__(self, settings: EmbeddingSettings, ledger: Ledger, prices: PriceTable) -> None:
        self.settings = settings
        self.ledger = ledger
        self.prices = prices
        self._client: AsyncOpenAI | None = None

    def _openai(self) -> AsyncOpenAI:
        if self._client is None:
            from openai import AsyncOpenAI  # on first use: a board without embeddings never imports it

            base = self.settings.base_url or (GEMINI_OPENAI_URL if self.settings.provider == "gemini" else None)
            self._client = AsyncOpenAI(api_key=self.settings.api_key or "unset", base_url=base,
                                       timeout=self.settings.timeout_s, max_retries=2)
        return self._client

    async def embed(self, texts: list[str], purpose: CallPurpose) -> list[list[float]]:
        """One vector per text (in order), from one request; the call is a ledger row either way (under
        ``purpose``, one of :data:`EMBEDDING_PURPOSES`)."""
        import openai

        if purpose not in EMBEDDING_PURPOSES:
            raise ValueError(f"an embedding call's purpose is one of {sorted(EMBEDDING_PURPOSES)}, not {purpose}")

        started = time.perf_counter()
        try:
            response = await self._openai().embeddings.create(
                model=self.settings.name, input=[t[:MAX_TEXT_CHARS] or " " for t in texts],
                encoding_format="float", dimensions=self.settings.dimensions or openai.omit)
        except openai.OpenAIError as exc:
            await self._record(purpose, started, Usage(), error=f"{type(exc).__name__}: {exc}")
            raise EmbeddingError(f"{self.settings.model}: {type(exc).__name__}: {exc}") from exc
        usage = Usage(input_tokens=response.usage.prompt_tokens if response.usage else 0)
        vectors = [list(d.embedding) for d in sorted(response.data, key=lambda d: d.index)]
        if len(vectors) != len(texts) or any(len(v) != len(vectors[0]) for v in vectors):
            error = f"asked for {len(texts)} vectors of one size, got {len(vectors)}"
            await self._record(purpose, started, usage, error=error)
            raise EmbeddingError(f"{self.settings.model}: {error}")
        await self._record(purpose, started, usage)
        return vectors

    async def _record(self, purpose: CallPurpose, started: float, usage: Usage, *,
                      error: str | None = None) -> None:
        cost = self.prices.cost(self.settings.model, usage) if error is None else 0.0
        await self.ledger.record_llm_call(LLMCallRecord(
            provider=self.settings.provider, model=self.settings.model, outcome="ok" if error is None else "error",
            usage=usage, cost_usd=cost, latency_ms=(time.perf_counter() - started) * 1000, purpose=purpose.value,
            error=error))

    async def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            await self._client.close()
            self._client = None
