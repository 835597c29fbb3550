"""Models that cannot answer for want of an API key, and what to tell the person about it.

The CLI reports a missing key once, as one sentence with the fix (export the variable and
run the command again; keys are never read from the file), instead of the daemon's log line
and a degraded answer per turn. ``sabha ask`` stops before calling anything when no model
of the chain has a key; ``config check`` fails on it. Once a command has said it (the chat,
when it opens), :func:`told_once` keeps the per-turn log lines about the same key off the
terminal (a chat's log file still has them): the answers say they are degraded, the advice
is not repeated under each of them.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.config.loaded import LoadedConfig

__all__ = ["ToldKeys", "key_advice", "keyless_models", "told_once"]


def keyless_models(loaded: LoadedConfig, models: list[str]) -> list[tuple[str, str]]:
    """(model, variable to export) for each of ``models`` whose provider has no API key."""
    from board.llm.registry import split_model
    from bot.app import provider_settings
    from bot.config.file import PROVIDER_KEY_ENV

    missing = []
    for model in dict.fromkeys(models):
        provider = split_model(model)[0]
        if provider not in PROVIDER_KEY_ENV:
            continue
        settings = provider_settings(loaded, provider)
        if not settings.api_key and not settings.key_optional:
            missing.append((model, settings.key_env))
    return missing


def key_advice(loaded: LoadedConfig, model: str, key_env: str) -> str:
    """What to do about ``model`` having no key, in one sentence."""
    where = loaded.source or "sabha.yaml"
    return (f"{model} needs an API key: export {key_env}=... (keys are read from the environment, never "
            f"from the file) and run the command again, or set llm.model: offline in {where} to try Sabha "
            "without one")


class ToldKeys(logging.Filter):
    """Passes a log record about a missing key (see :data:`board.llm.errors.MISSING_KEY_FIELD`)
    only for a variable the person has not been told about yet, and only the first time."""

    def __init__(self, told: Iterable[str] = ()) -> None:
        super().__init__()
        self.told = set(told)

    def filter(self, record: logging.LogRecord) -> bool:
        from board.llm.errors import MISSING_KEY_FIELD  # not imported by `sabha --help` (it builds ask's parser)

        key_env = getattr(record, MISSING_KEY_FIELD, None)
        if not key_env:
            return True
        if key_env in self.told:
            return False
        self.told.add(key_env)
        return True


@contextlib.contextmanager
def told_once(told: Iterable[str], handlers: Iterable[logging.Handler]) -> Iterator[None]:
    """While the block runs, ``handlers`` (the terminal's) say each missing key at most once,
    and not at all for the variables in ``told`` (already said)."""
    keys = ToldKeys(told)
    chosen = list(handlers)
    for handler in chosen:
        handler.addFilter(keys)
    try:
        yield
    finally:
        for handler in chosen:
            handler.removeFilter(keys)
