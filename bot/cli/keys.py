"""Models that cannot answer for want of an API key, and what to tell the person about it.

The CLI reports a missing key once, as one sentence with the fix (export the variable and
run the command again; keys are never read from the file), instead of the daemon's log line
and a degraded answer per turn. ``sabha ask`` stops before calling anything when no model
of the chain has a key; ``config check`` fails on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.config import LoadedConfig

__all__ = ["key_advice", "keyless_models"]


def keyless_models(loaded: LoadedConfig, models: list[str]) -> list[tuple[str, str]]:
    """(model, variable to export) for each of ``models`` whose provider has no API key."""
    from board.llm.registry import split_model
    from bot.app import provider_settings
    from bot.config import PROVIDER_KEY_ENV

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
