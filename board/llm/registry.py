"""Resolve ``provider:model`` strings to provider instances.

``offline`` needs nothing; other providers are registered by whoever builds the board
(the daemon registers the ones its config enables). Asking for a provider that is not
registered raises :class:`UnknownModelError` with the list of known providers.

A provider's SDK (``openai``, ``anthropic``, ``google-genai``: about half a second of CPU each
to import) loads when the provider is first built. A long-running process builds the ones its
models use in the background once it is ready (:meth:`ProviderRegistry.warm`): the SDK module
is imported in a worker thread, so the event loop keeps answering meanwhile, and a first turn
that comes before it is done waits for it (:meth:`ProviderRegistry.settled`) instead of
importing the SDK on the loop.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Callable, Iterable

from board.llm.base import LLMProvider
from board.llm.offline import OfflineProvider

__all__ = [
    "PROVIDER_ALIASES",
    "ProviderRegistry",
    "UnknownModelError",
    "split_model",
]

log = logging.getLogger("sabha.llm")


class UnknownModelError(ValueError):
    """A model string names a provider Sabha does not know or has not configured."""


#: Other names of a provider in model strings: ``gemini:gemini-2.5-flash`` is ``google:gemini-2.5-flash``.
PROVIDER_ALIASES = {"gemini": "google"}


def split_model(model: str) -> tuple[str, str]:
    """Split ``"anthropic:claude-sonnet-4-5"`` into ``("anthropic", "claude-sonnet-4-5")``.

    A bare ``offline`` has an empty model name; an alias gives its provider's own name
    (:data:`PROVIDER_ALIASES`).
    """
    provider, _, name = model.partition(":")
    provider = provider.strip().lower()
    return PROVIDER_ALIASES.get(provider, provider), name.strip()


class ProviderRegistry:
    """Creates providers lazily, one instance per provider name."""

    def __init__(self) -> None:
        self._factories: dict[str, Callable[[], LLMProvider]] = {"offline": OfflineProvider}
        self._modules: dict[str, str] = {}
        self._instances: dict[str, LLMProvider] = {}
        self._warming: asyncio.Future[list[str]] | None = None

    def register(self, name: str, factory: Callable[[], LLMProvider], *, module: str | None = None) -> None:
        """Make ``name:<model>`` strings resolve to the provider ``factory`` builds; ``module``: the
        module whose import is the heavy part of building it (its SDK), imported off the event loop
        by :meth:`warm`."""
        self._factories[name] = factory
        self._instances.pop(name, None)
        if module is None:
            self._modules.pop(name, None)
        else:
            self._modules[name] = module

    def known(self) -> list[str]:
        """Names of the registered providers."""
        return sorted(self._factories)

    def resolve(self, model: str) -> LLMProvider:
        """The provider for ``model``; raises :class:`UnknownModelError` if there is none."""
        provider, _ = split_model(model)
        if provider not in self._factories:
            raise UnknownModelError(
                f"unknown model {model!r}: the provider {provider!r} is not configured "
                f"(known: {', '.join(self.known())}); write models as provider:model, "
                "e.g. offline or openai:gpt-4o-mini"
            )
        if provider not in self._instances:
            self._instances[provider] = self._factories[provider]()
        return self._instances[provider]

    def built(self) -> list[str]:
        """Names of the providers built so far."""
        return sorted(self._instances)

    def prepare(self, models: Iterable[str]) -> list[str]:
        """Build the providers of ``models`` now (importing their SDKs on this thread); returns one
        problem line per model that cannot be resolved (the turn that uses it will say so too)."""
        problems: list[str] = []
        for model in dict.fromkeys(models):
            try:
                self.resolve(model)
            except Exception as exc:  # noqa: BLE001 - reported, not fatal: the turn degrades
                problems.append(f"model {model!r}: {exc}")
        return problems

    def warm(self, models: Iterable[str]) -> asyncio.Future[list[str]]:
        """Build the providers of ``models`` in the background (each SDK imported in a worker thread,
        the provider then built on the loop), so a long-running process neither spends its start on
        them nor stalls its first turn importing one; the future's result is :meth:`prepare`'s."""
        wanted = list(dict.fromkeys(models))
        self._warming = asyncio.ensure_future(self._warm(wanted))
        return self._warming

    async def _warm(self, models: list[str]) -> list[str]:
        modules = {self._modules[p] for p in (split_model(m)[0] for m in models)
                   if p in self._modules and p not in self._instances}
        for module in sorted(modules):
            try:
                await asyncio.to_thread(importlib.import_module, module)
            except Exception:  # noqa: BLE001 - the build below, on the loop, says what is wrong
                continue
        return self.prepare(models)

    async def settled(self) -> None:
        """Wait for a background :meth:`warm` still importing an SDK (at once when none runs); its outcome is
        its owner's to read (a failed or cancelled warm-up only means the provider is built on first use)."""
        warming = self._warming
        if warming is not None and not warming.done():
            await asyncio.wait([warming])

    async def close(self) -> None:
        """Close the providers that hold connections (those with an async ``close``)."""
        instances, self._instances = list(self._instances.values()), {}
        for instance in instances:
            closer = getattr(instance, "close", None)
            if closer is not None:
                try:
                    await closer()
                except Exception:
                    log.exception("closing provider %s failed", getattr(instance, "name", instance))
