"""Shared fixtures: a private copy of the default workspace and an open board on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from board.roles import RosterSpec
from board.service import Board, BoardSettings
from board.workspace.paths import copy_default_workspace
from bot.app import all_migrations


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of the shipped workspace the test may edit."""
    ws = tmp_path / "workspace"
    copy_default_workspace(ws)
    return ws


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """Where transcripts and the state db go."""
    return tmp_path / "sessions"


@pytest.fixture
def settings(workspace: Path, data_dir: Path) -> BoardSettings:
    """Board settings on the test's workspace with the default roster and offline model."""
    return BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec())


@pytest.fixture
async def board(settings: BoardSettings) -> AsyncIterator[Board]:
    """An open board; closed after the test."""
    b = await Board.open(settings, migrations=all_migrations())
    try:
        yield b
    finally:
        await b.close()
