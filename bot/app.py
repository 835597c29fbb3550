"""Wiring: from a loaded config to an open :class:`board.service.Board`.

This is the one place that knows both the config and the board, so the CLI, the
daemon and the tests build the board the same way.
"""

from __future__ import annotations

import logging

from board.llm.registry import ProviderRegistry
from board.service import Board
from board.workspace import copy_default_workspace
from bot.config import LoadedConfig

log = logging.getLogger("sabha.app")


def ensure_workspace(loaded: LoadedConfig) -> None:
    """On a first run with no config file, create ``./workspace`` from the shipped defaults.

    With a config file a missing workspace is an error the board reports (run ``sabha init``).
    """
    if loaded.source is None and not loaded.workspace.exists():
        written = copy_default_workspace(loaded.workspace)
        log.warning("created %s from the default workspace (%d files); edit its souls to retune the board",
                    loaded.workspace, len(written))


def build_providers(loaded: LoadedConfig) -> ProviderRegistry:
    """The model registry for this config."""
    return ProviderRegistry()


async def open_board(loaded: LoadedConfig) -> Board:
    """Open the board described by ``loaded``."""
    ensure_workspace(loaded)
    return await Board.open(loaded.board_settings(), build_providers(loaded))
