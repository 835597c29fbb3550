"""Shared fixtures: a private copy of the default workspace, an open board on it, and the fake
Telegram, OpenAI and Anthropic servers (each imported when a test asks for it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from board.roles import RosterSpec
from board.service import Board, BoardSettings
from board.workspace.paths import copy_default_workspace
from bot.app import all_migrations

if TYPE_CHECKING:
    from tests.fakes.anthropic_api import FakeAnthropic
    from tests.fakes.echo_model import EchoModel
    from tests.fakes.graph_api import FakeGraphAPI
    from tests.fakes.openai_api import FakeOpenAI
    from tests.fakes.telegram_api import FakeTelegramAPI


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


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegramAPI]:
    """A fake Telegram Bot API server for ``telegram_support.TOKEN``."""
    from tests.fakes.telegram_api import FakeTelegramAPI
    from tests.telegram_support import TOKEN

    async with FakeTelegramAPI(token=TOKEN) as server:
        yield server


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    """A fake OpenAI API server."""
    from tests.fakes.openai_api import FakeOpenAI

    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def fake_anthropic() -> AsyncIterator[FakeAnthropic]:
    """A fake Anthropic API server."""
    from tests.fakes.anthropic_api import FakeAnthropic

    async with FakeAnthropic() as server:
        yield server


@pytest.fixture
async def echo_model() -> AsyncIterator[EchoModel]:
    """A fake OpenAI-compatible model answering ``ECHO <question>`` after 200 ms."""
    from tests.fakes.echo_model import EchoModel

    async with EchoModel(latency=0.2) as server:
        yield server


@pytest.fixture
async def fake_graph() -> AsyncIterator[FakeGraphAPI]:
    """A fake WhatsApp Graph API server."""
    from tests.fakes.graph_api import FakeGraphAPI

    async with FakeGraphAPI() as server:
        yield server


@pytest.fixture
async def daemon_for(tmp_path: Path, fake: FakeTelegramAPI) -> AsyncIterator[Any]:
    """Start an in-process daemon on a config written by ``daemon_support.write_config``
    (real aiohttp server, real PTB against ``fake``): ``await daemon_for(model, **options)``;
    every daemon started is stopped afterwards."""
    from bot.config import load_config
    from bot.daemon import Daemon
    from tests.daemon_support import write_config
    from tests.telegram_support import TOKEN

    started: list[tuple[Daemon, asyncio.Task[int]]] = []

    async def start(model: EchoModel | None = None, *, price: bool = False, **options: Any) -> Daemon:
        config = write_config(tmp_path, fake, model, price=price, **options)
        daemon = Daemon(load_config(config, env={"TELEGRAM_BOT_TOKEN": TOKEN}), install_signals=False)
        task = asyncio.create_task(daemon.run())
        started.append((daemon, task))
        await asyncio.wait_for(daemon.ready.wait(), 15)
        return daemon

    yield start
    for daemon, task in started:
        daemon.request_stop()
        await asyncio.wait_for(task, 30)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A throwaway PostgreSQL server for this test process (tests/pg_support.py; skips where none can run)."""
    from tests.pg_support import throwaway_cluster

    with throwaway_cluster() as server:
        yield server


@pytest.fixture
async def pg_url(pg_server: Any) -> AsyncIterator[str]:
    """The URL of a fresh, empty database on :func:`pg_server`, dropped after the test."""
    from tests.pg_support import fresh_database

    async with fresh_database(pg_server) as url:
        yield url
