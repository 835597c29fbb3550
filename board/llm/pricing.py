"""Estimated cost of an LLM call from a price table (USD per million tokens).

:data:`DEFAULT_PRICES` holds list prices of common Anthropic, OpenAI and Gemini models at the
time of writing; ``llm.prices`` in config adds models or overrides these. A model is
priced by its exact ``provider:model`` string, else by the longest table key it starts
with (``openai:gpt-4o-2024-08-06`` uses ``openai:gpt-4o``); ``gemini:`` is read as ``google:``.
``offline`` costs nothing.
A model with no price gets ``None`` (shown as unpriced), never a guess.

:meth:`PriceTable.saved` is what prompt caching saved on a call: the cache reads priced as
fresh input minus what they cost at the cache-read price, less the surcharge of cache
writes over fresh input (Anthropic bills a 5-minute write at 1.25x input; OpenAI has no
write charge). It is negative when a call wrote to the cache and read nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from board.llm.base import Usage
from board.llm.registry import PROVIDER_ALIASES

__all__ = [
    "DEFAULT_PRICES",
    "ModelPrice",
    "PriceTable",
]

log = logging.getLogger("sabha.pricing")


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens: uncached input, output, cache reads and cache writes."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0

    def cost(self, usage: Usage) -> float:
        """The cost of ``usage`` in USD."""
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / 1_000_000

    def uncached_cost(self, usage: Usage) -> float:
        """What ``usage`` would cost in USD with no prompt cache: every input token at the input price."""
        return (usage.prompt_tokens * self.input + usage.output_tokens * self.output) / 1_000_000

    def saved(self, usage: Usage) -> float:
        """USD prompt caching saved on ``usage``: :meth:`uncached_cost` minus :meth:`cost`."""
        return (
            usage.cache_read_tokens * (self.input - self.cache_read)
            + usage.cache_write_tokens * (self.input - self.cache_write)
        ) / 1_000_000


def _anthropic(inp: float, out: float) -> ModelPrice:
    # Anthropic: 5-minute cache writes cost 1.25x input, cache reads 0.1x input.
    return ModelPrice(inp, out, cache_read=round(inp * 0.1, 6), cache_write=round(inp * 1.25, 6))


DEFAULT_PRICES: dict[str, ModelPrice] = {
    "offline": ModelPrice(0, 0),
    "anthropic:claude-opus-4-5": _anthropic(5.0, 25.0),
    "anthropic:claude-opus-4-1": _anthropic(15.0, 75.0),
    "anthropic:claude-opus-4": _anthropic(15.0, 75.0),
    "anthropic:claude-sonnet-4-6": _anthropic(3.0, 15.0),
    "anthropic:claude-sonnet-4-5": _anthropic(3.0, 15.0),
    "anthropic:claude-sonnet-4": _anthropic(3.0, 15.0),
    "anthropic:claude-3-7-sonnet": _anthropic(3.0, 15.0),
    "anthropic:claude-haiku-4-5": _anthropic(1.0, 5.0),
    "anthropic:claude-3-5-haiku": _anthropic(0.8, 4.0),
    # OpenAI: cached input is billed at a discount; there is no cache-write charge.
    "openai:gpt-4o": ModelPrice(2.5, 10.0, cache_read=1.25),
    "openai:gpt-4o-mini": ModelPrice(0.15, 0.60, cache_read=0.075),
    "openai:gpt-4.1": ModelPrice(2.0, 8.0, cache_read=0.5),
    "openai:gpt-4.1-mini": ModelPrice(0.4, 1.6, cache_read=0.1),
    "openai:gpt-4.1-nano": ModelPrice(0.1, 0.4, cache_read=0.025),
    "openai:gpt-5": ModelPrice(1.25, 10.0, cache_read=0.125),
    "openai:gpt-5-mini": ModelPrice(0.25, 2.0, cache_read=0.025),
    "openai:gpt-5-nano": ModelPrice(0.05, 0.4, cache_read=0.005),
    "openai:o4-mini": ModelPrice(1.1, 4.4, cache_read=0.275),
    # Embedding models (recall by meaning): input only.
    "openai:text-embedding-3-small": ModelPrice(0.02, 0.0),
    "openai:text-embedding-3-large": ModelPrice(0.13, 0.0),
    # Google Gemini (prompts up to 200k tokens): implicit cache hits are billed at the cache
    # price; there is no write charge for implicit caching. Thinking tokens are output.
    "google:gemini-3-pro": ModelPrice(2.0, 12.0, cache_read=0.2),
    "google:gemini-2.5-pro": ModelPrice(1.25, 10.0, cache_read=0.125),
    "google:gemini-2.5-flash": ModelPrice(0.30, 2.50, cache_read=0.03),
    "google:gemini-2.5-flash-lite": ModelPrice(0.10, 0.40, cache_read=0.01),
    "google:gemini-2.0-flash": ModelPrice(0.10, 0.40, cache_read=0.025),
    "google:gemini-2.0-flash-lite": ModelPrice(0.075, 0.30),
    "google:gemini-embedding-001": ModelPrice(0.15, 0.0),
}


def _canonical(model: str) -> str:
    """``model`` lower-cased, its provider written by its own name (``gemini:`` is ``google:``)."""
    key = model.strip().lower()
    provider, colon, name = key.partition(":")
    return f"{PROVIDER_ALIASES[provider]}{colon}{name}" if provider in PROVIDER_ALIASES else key


@dataclass(frozen=True)
class PriceTable:
    """Prices by model string; see the module docstring."""

    prices: Mapping[str, ModelPrice] = field(default_factory=lambda: dict(DEFAULT_PRICES))

    @classmethod
    def with_overrides(cls, overrides: Mapping[str, ModelPrice] | None) -> PriceTable:
        """The defaults with ``overrides`` (from config) on top."""
        merged = dict(DEFAULT_PRICES)
        merged.update({_canonical(k): v for k, v in (overrides or {}).items()})
        return cls(merged)

    def price_of(self, model: str) -> ModelPrice | None:
        """The price entry for ``model`` (exact, else longest prefix), or None."""
        key = _canonical(model)
        if key in self.prices:
            return self.prices[key]
        if key.startswith("offline"):
            return self.prices.get("offline", ModelPrice(0, 0))
        best = max((k for k in self.prices if key.startswith(k)), key=len, default=None)
        return self.prices[best] if best is not None else None

    def cost(self, model: str, usage: Usage) -> float | None:
        """Estimated USD cost of ``usage`` on ``model``; None when the model has no price."""
        price = self.price_of(model)
        if price is None:
            return None
        return round(price.cost(usage), 8)

    def saved(self, model: str, usage: Usage) -> float | None:
        """USD prompt caching saved on ``usage`` (see the module docstring); None when the model has no price."""
        price = self.price_of(model)
        if price is None:
            return None
        return round(price.saved(usage), 8)

    def __hash__(self) -> int:  # frozen dataclass over a dict: hash by identity
        return id(self)
