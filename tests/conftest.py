"""Shared fixtures: a private copy of the default workspace, an open board on it, and the fake
Telegram, OpenAI and Anthropic servers (each imported when a test asks for it).

No ``sabha`` process outlives the test that started it: after every test the autouse fixture
:func:`no_daemon_left_behind` kills what the test left running (registered ``SabhaProcess``es, and any
``sabha`` / ``bot.cli`` process it started some other way) and warns; at the end of the session
:func:`no_daemon_left_at_the_end` fails loudly if one is still alive (and kills it). See
tests/support/process.py."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import uuid
import warnings
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import tests.support.process as processes
from board.app import Board, BoardSettings
from board.roles import RosterSpec
from board.storage import Database, Dialect, StateURL, parse_state_url
from board.storage.migrations import Migration
from board.workspace.paths import copy_default_workspace
from bot.app import all_migrations

if TYPE_CHECKING:
    from tests.support.fakes.anthropic_api import FakeAnthropic
    from tests.support.fakes.echo_model import EchoModel
    from tests.support.fakes.graph_api import FakeGraphAPI
    from tests.support.fakes.openai_api import FakeOpenAI
    from tests.support.fakes.telegram_api import FakeTelegramAPI


def pytest_configure(config: pytest.Config) -> None:
    """Every process started from here carries this process's id (tests/support/process.py)."""
    processes.mark_owner()


class LeftRunning(pytest.PytestWarning):
    """A test ended with a ``sabha`` process it started still running (the fixture killed it)."""


@pytest.fixture(autouse=True)
def no_daemon_left_behind() -> Iterator[None]:
    """After the test, whatever happened in it: kill each ``sabha`` process it started and left running."""
    before = {p.pid for p in processes.sabha_leftovers()}
    try:
        yield
    finally:
        killed = processes.end_registered()
        known = before | {p.pid for p in killed}
        killed += processes.end_leftovers([p for p in processes.sabha_leftovers() if p.pid not in known])
        if killed:
            warnings.warn(LeftRunning("the test left these running; killed: " + "; ".join(map(str, killed))),
                          stacklevel=1)


@pytest.fixture(autouse=True)
def collector_left_on() -> Iterator[None]:
    """After the test: the cyclic garbage collector on, as the test found it. The intake's collector pause
    (:mod:`bot.intake.collector`) switches it off during a burst of receipts and back on from a timer on the event
    loop, or at the hub's drain; an in-process test whose loop ends before either would leave it off for every
    later test of its worker (seen: ``test_main_called_in_process_changes_no_process_state`` found it off)."""
    was_on = gc.isenabled()
    yield
    if was_on and not gc.isenabled():
        gc.enable()


@pytest.fixture(scope="session", autouse=True)
def no_daemon_left_at_the_end() -> Iterator[None]:
    """At the end of the session (of each xdist worker): no ``sabha`` process this process started may be alive;
    any still is killed and the run fails, naming it."""
    yield
    left = processes.end_leftovers(processes.sabha_leftovers())
    if left:
        pytest.fail(f"{len(left)} sabha process(es) started by this test run were still running at its end "
                    f"(now killed): " + "; ".join(map(str, left)), pytrace=False)


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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked ``@pytest.mark.backends`` (or a module with ``pytestmark = pytest.mark.backends``) that
    uses :func:`backend` (through :func:`settings`, :func:`board`, :func:`database` ...) runs once per storage
    backend: SQLite and a real PostgreSQL (skipped, with the reason, where no server can run)."""
    if "backend" in metafunc.fixturenames and metafunc.definition.get_closest_marker("backends"):
        metafunc.parametrize("backend", [Dialect.SQLITE, Dialect.POSTGRES], ids=["sqlite", "postgres"],
                             indirect=True)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Dialect:
    """The storage backend this test runs on: SQLite unless parametrised (``@pytest.mark.backends``)."""
    return getattr(request, "param", Dialect.SQLITE)


@pytest.fixture
async def state_url(backend: Dialect, data_dir: Path, request: pytest.FixtureRequest) -> AsyncIterator[StateURL | None]:
    """Where the test's board keeps its state: None (the SQLite file in ``data_dir``) or a fresh PostgreSQL
    database, a copy of one with every migration Sabha knows applied."""
    if backend is Dialect.SQLITE:
        yield None
        return
    from board.app import BOARD_MIGRATIONS
    from tests.support.pg import fresh_database, migrated_template

    server = request.getfixturevalue("pg_server")
    template = await migrated_template(server, [*BOARD_MIGRATIONS, *all_migrations()])
    async with fresh_database(server, template) as url:
        yield parse_state_url(url, data_dir=data_dir, env={})


@pytest.fixture
async def board_state_url(backend: Dialect, data_dir: Path,
                          request: pytest.FixtureRequest) -> AsyncIterator[StateURL | None]:
    """Like :func:`state_url`, with only the board's own migrations applied: for tests that open a
    ``Board`` without the daemon's tables (``Board.open(settings, registry)``)."""
    if backend is Dialect.SQLITE:
        yield None
        return
    from board.app import BOARD_MIGRATIONS
    from tests.support.pg import fresh_database, migrated_template

    server = request.getfixturevalue("pg_server")
    template = await migrated_template(server, list(BOARD_MIGRATIONS))
    async with fresh_database(server, template) as url:
        yield parse_state_url(url, data_dir=data_dir, env={})


@pytest.fixture
def settings(workspace: Path, data_dir: Path, state_url: StateURL | None) -> BoardSettings:
    """Board settings on the test's workspace with the default roster and offline model (state on the
    test's backend)."""
    return BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(), state=state_url)


@pytest.fixture
async def database(state_url: StateURL | None, data_dir: Path) -> AsyncIterator[Database]:
    """An open state store on the test's backend with every migration Sabha knows (a store's tests build the
    store on it: ``Ledger(database)``)."""
    from board.app import BOARD_MIGRATIONS
    from board.storage import open_database

    url = state_url or parse_state_url("", data_dir=data_dir, env={})
    db = await open_database(url, [*BOARD_MIGRATIONS, *all_migrations()], pool_size=4)
    try:
        yield db
    finally:
        await db.close()


@pytest.fixture
async def database_with(backend: Dialect, data_dir: Path, request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """``await database_with(migrations)``: an open store on the test's backend with only ``migrations``
    (SQLite form; on PostgreSQL their twins) applied; closed after the test."""
    from board.storage import open_database

    async with contextlib.AsyncExitStack() as stack:

        async def open_with(migrations: Iterable[Migration]) -> Database:
            steps = list(migrations)
            if backend is Dialect.SQLITE:
                url = parse_state_url("", data_dir=data_dir / f"db-{uuid.uuid4().hex[:8]}", env={})
            else:
                from tests.support.pg import fresh_database, migrated_template

                server = request.getfixturevalue("pg_server")
                template = await migrated_template(server, steps)
                url = parse_state_url(await stack.enter_async_context(fresh_database(server, template)),
                                      data_dir=data_dir, env={})
            db = await open_database(url, steps, pool_size=4)
            stack.push_async_callback(db.close)
            return db

        yield open_with


@pytest.fixture
def boards_on_backend(state_url: StateURL | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Boards the test builds itself (``tests.support.board.board_with``) keep their state on the test's
    backend: ``pytestmark = [pytest.mark.backends, pytest.mark.usefixtures("boards_on_backend")]``."""
    import tests.support.board

    monkeypatch.setattr(tests.support.board, "STATE", state_url)


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
    from tests.support.fakes.telegram_api import FakeTelegramAPI
    from tests.support.telegram import TOKEN

    async with FakeTelegramAPI(token=TOKEN) as server:
        yield server


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    """A fake OpenAI API server."""
    from tests.support.fakes.openai_api import FakeOpenAI

    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def fake_anthropic() -> AsyncIterator[FakeAnthropic]:
    """A fake Anthropic API server."""
    from tests.support.fakes.anthropic_api import FakeAnthropic

    async with FakeAnthropic() as server:
        yield server


@pytest.fixture
async def echo_model() -> AsyncIterator[EchoModel]:
    """A fake OpenAI-compatible model answering ``ECHO <question>`` after 200 ms."""
    from tests.support.fakes.echo_model import EchoModel

    async with EchoModel(latency=0.2) as server:
        yield server


@pytest.fixture
async def fake_graph() -> AsyncIterator[FakeGraphAPI]:
    """A fake WhatsApp Graph API server."""
    from tests.support.fakes.graph_api import FakeGraphAPI

    async with FakeGraphAPI() as server:
        yield server


@pytest.fixture
async def daemon_for(tmp_path: Path, fake: FakeTelegramAPI) -> AsyncIterator[Any]:
    """Start an in-process daemon on a config written by ``daemon_support.write_config``
    (real aiohttp server, real PTB against ``fake``): ``await daemon_for(model, **options)``;
    every daemon started is stopped afterwards."""
    from bot.config.load import load_config
    from bot.daemon import Daemon
    from tests.support.daemon import write_config
    from tests.support.telegram import TOKEN

    started: list[tuple[Daemon, asyncio.Task[int]]] = []

    async def start(model: EchoModel | None = None, *, price: bool = False, **options: Any) -> Daemon:
        config = write_config(tmp_path, fake, model, price=price, **options)
        daemon = Daemon(load_config(config, env={"TELEGRAM_BOT_TOKEN": TOKEN}), install_signals=False)
        task = asyncio.create_task(daemon.run())
        started.append((daemon, task))
        ready = asyncio.create_task(daemon.ready.wait())
        await asyncio.wait({ready, task}, timeout=300, return_when=asyncio.FIRST_COMPLETED)  # or it ended
        ready.cancel()
        if not daemon.ready.is_set():
            raise AssertionError("the daemon did not start: " + (repr(task.exception()) if task.done() else
                                                                  "not ready in 300 s"))
        return daemon

    try:
        yield start
    finally:  # every daemon is stopped, whatever happened; one that does not stop in 120 s is cancelled
        for daemon, _ in started:
            daemon.request_stop()
        tasks = [task for _, task in started]
        _, hung = await asyncio.wait(tasks, timeout=120) if tasks else (set(), set())
        for task in hung:
            task.cancel()
        ended = await asyncio.gather(*tasks, return_exceptions=True)
        assert not hung, f"{len(hung)} daemon(s) did not stop in 120 s after request_stop (cancelled)"
        failed = [e for e in ended if isinstance(e, Exception)]
        if failed:
            raise failed[0]  # a daemon that crashed fails the test, as before


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Any]:
    """A throwaway PostgreSQL server for this test process (tests/support/pg.py; skips where none can run)."""
    from tests.support.pg import throwaway_cluster

    with throwaway_cluster() as server:
        yield server


@pytest.fixture
async def pg_url(pg_server: Any) -> AsyncIterator[str]:
    """The URL of a fresh, empty database on :func:`pg_server`, dropped after the test."""
    from tests.support.pg import fresh_database

    async with fresh_database(pg_server) as url:
        yield url
