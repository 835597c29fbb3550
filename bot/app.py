"""Wiring: from a loaded config to an open :class:`board.app.Board`.

This is the one place that knows both the config and the board, so the CLI, the
daemon and the tests build the board the same way.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping

from board.app import BOARD_MIGRATIONS, Board, Observers
from board.db import Migration
from board.llm.base import LLMProvider
from board.llm.errors import ProviderSettings
from board.llm.registry import ProviderRegistry, split_model
from board.storage import Database, Dialect, open_database
from board.workspace.paths import copy_default_workspace
from bot.config.file import PROVIDER_KEY_ENV, PROVIDER_KEY_ENV_ALSO
from bot.config.loaded import LoadedConfig

log = logging.getLogger("sabha.app")


def ensure_workspace(loaded: LoadedConfig) -> None:
    """On a first run with no config file, create ``./workspace`` from the shipped defaults.

    With a config file a missing workspace is an error the board reports (run ``sabha init``).
    """
    if loaded.source is None and not loaded.workspace.exists():
        written = copy_default_workspace(loaded.workspace)
        log.warning("created %s from the default workspace (%d files); edit its souls to retune the board",
                    loaded.workspace, len(written))


def provider_settings(loaded: LoadedConfig, name: str, env: Mapping[str, str] | None = None) -> ProviderSettings:
    """How to reach provider ``name`` (``openai``, ``anthropic`` or ``google``): config first, then the environment
    (the provider's variable, then its other names: ``GEMINI_API_KEY`` for ``google``)."""
    env = os.environ if env is None else env
    llm = loaded.config.llm
    section = getattr(llm.providers, name)
    key_env = PROVIDER_KEY_ENV[name]
    key = section.api_key.get_secret_value().strip() if section.api_key is not None else ""
    for variable in (key_env, *PROVIDER_KEY_ENV_ALSO.get(name, ())):
        key = key or (env.get(variable) or "").strip()
    return ProviderSettings(
        api_key=key or None,
        base_url=section.base_url,
        timeout_s=section.timeout_s or llm.timeout_s,
        key_env=key_env,
        stream=section.stream,
        key_optional=name == "openai" and bool(section.base_url),
    )


def _openai(settings: ProviderSettings) -> LLMProvider:
    from board.llm.openai import (
        OpenAIProvider,  # the SDK loads only when a model uses it
    )

    return OpenAIProvider(settings)


def _anthropic(settings: ProviderSettings) -> LLMProvider:
    from board.llm.anthropic import (
        AnthropicProvider,  # the SDK loads only when a model uses it
    )

    return AnthropicProvider(settings)


def _gemini(settings: ProviderSettings) -> LLMProvider:
    from board.llm.gemini import (
        GeminiProvider,  # the SDK loads only when a model uses it
    )

    return GeminiProvider(settings)


def missing_keys(loaded: LoadedConfig, env: Mapping[str, str] | None = None, *,
                 models: Iterable[str] | None = None) -> list[str]:
    """One line per provider that configured models use but that has no API key, naming the variable.

    ``models``: check these instead of every model ``loaded`` names (the providers, their
    keys and base URLs still come from ``loaded``).
    """
    in_use = loaded.models() if models is None else list(models)
    problems = []
    for name in ("openai", "anthropic", "google"):
        settings = provider_settings(loaded, name, env)
        users = sorted({m for m in in_use if split_model(m)[0] == name})
        if users and not settings.api_key and not settings.key_optional:
            problems.append(f"{name} is configured ({', '.join(users)}) but has no API key: export "
                            f"{settings.key_env} (keys are read from the environment, never from sabha.yaml)")
    return problems


def build_providers(loaded: LoadedConfig, env: Mapping[str, str] | None = None, *,
                    report_missing_keys: bool = True) -> ProviderRegistry:
    """The model registry for this config: offline, OpenAI(-compatible), Anthropic and Google Gemini.

    A configured model whose provider has no key is logged now (unless the caller reports
    it itself), naming the variable to set; its turns answer degraded (with the same advice
    in the log) instead of crashing.
    """
    registry = ProviderRegistry()
    openai_settings = provider_settings(loaded, "openai", env)
    anthropic_settings = provider_settings(loaded, "anthropic", env)
    registry.register("openai", lambda: _openai(openai_settings), module="board.llm.openai")
    registry.register("anthropic", lambda: _anthropic(anthropic_settings), module="board.llm.anthropic")
    google_settings = provider_settings(loaded, "google", env)
    registry.register("google", lambda: _gemini(google_settings), module="board.llm.gemini")
    for problem in missing_keys(loaded, env) if report_missing_keys else ():
        log.error("%s; until then those turns answer degraded", problem)
    return registry


async def open_board(loaded: LoadedConfig, *, report_missing_keys: bool = True, wakes_daemon: bool = True,
                     observers: Observers | None = None) -> Board:
    """Open the board described by ``loaded`` (``report_missing_keys``: see :func:`build_providers`).

    ``observers``: told of what happens inside the board from its first call (the daemon's metrics).

    ``wakes_daemon`` (every caller but the daemon itself): on SQLite, a scheduled row this process adds or
    moves (``sabha actions due``) wakes the daemon running on the same data dir at once (:mod:`bot.ops.wake`;
    on PostgreSQL the schedule's ``NOTIFY`` does it).

    A data dir that cannot be written raises :class:`bot.intake.storage.DataDirUnwritable`
    (one line naming it and what to do), checked before anything opens it. The board's clock is
    the system's unless a test set ``SABHA_TEST_CLOCK`` (:func:`board.clock.clock_from_env`)."""
    from board.clock import clock_from_env
    from bot.intake.storage import DataDirUnwritable, ensure_writable, is_locked, is_storage_error

    ensure_workspace(loaded)
    data_dir = loaded.data_dir
    if loaded.workspace.is_dir() and (data_dir.is_dir() or not data_dir.exists()):  # else Board.open says why
        ensure_writable(data_dir)
    try:
        board = await Board.open(loaded.board_settings(),
                                 build_providers(loaded, report_missing_keys=report_missing_keys),
                                 migrations=all_migrations(), clock=clock_from_env(os.environ), observers=observers)
    except Exception as exc:
        on_server = loaded.state_url().dialect is Dialect.POSTGRES  # its outage is the server's, not the folder's
        if is_storage_error(exc) and not is_locked(exc) and not on_server:  # e.g. a file the check did not try
            raise DataDirUnwritable(data_dir, str(exc)) from exc
        raise
    if wakes_daemon and board.parts.db.dialect is Dialect.SQLITE:
        from bot.ops.wake import wake_daemon

        board.parts.schedule.announce_to(lambda: wake_daemon(data_dir))
    return board


async def open_state_db(loaded: LoadedConfig) -> Database:
    """The state store alone (for reports and the CLI), with every migration Sabha knows (``state.url``)."""
    return await open_database(loaded.state_url(), [*BOARD_MIGRATIONS, *all_migrations()], pool_size=2)


def all_migrations() -> list[Migration]:
    """The daemon's tables besides the board's: the intake's, every channel's, the web pages', the
    replicas' and the webhooks held at start (:mod:`bot.channels.held`)."""
    from bot.channels import registry
    from bot.channels.held.migrations import MIGRATIONS as HELD_MIGRATIONS
    from bot.intake.migrations import MIGRATIONS as INTAKE_MIGRATIONS
    from bot.replicas.migrations import MIGRATIONS as REPLICA_MIGRATIONS
    from bot.web.migrations import MIGRATIONS as WEB_MIGRATIONS

    return [*INTAKE_MIGRATIONS, *registry.all_migrations(), *WEB_MIGRATIONS, *REPLICA_MIGRATIONS, *HELD_MIGRATIONS]
