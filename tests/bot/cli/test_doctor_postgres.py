"""``sabha doctor`` with ``state.url`` on PostgreSQL: one line for the server (reachable, or why not and the
fix), one for the schema (migrated, empty, behind or ahead of this Sabha), instead of the SQLite checks."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from board.storage import Dialect, StateURL
from bot.cli.main import main


async def doctor(capsys: pytest.CaptureFixture[str], root: Path, url: str) -> tuple[int, str]:
    """``sabha doctor --offline`` on a board at ``root`` whose ``state.url`` is ``url``."""
    await asyncio.to_thread(main, ["init", str(root)])
    config = root / "sabha.yaml"
    config.write_text(f"workspace: ./workspace\ndata_dir: ./sessions\nstate:\n  url: {url}\n", encoding="utf-8")
    capsys.readouterr()
    code = await asyncio.to_thread(main, ["doctor", "--offline", "--config", str(config)])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("backend", [Dialect.POSTGRES], ids=["postgres"], indirect=True)
async def test_a_migrated_database_is_reachable_and_migrated(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             state_url: StateURL) -> None:
    code, out = await doctor(capsys, tmp_path / "board", str(state_url))
    assert code == 0, out
    assert f"OK    state server: PostgreSQL {state_url} answers (server 15" in out
    assert f"OK    state schema: PostgreSQL {state_url}: migrated (" in out
    assert "sqlite" not in out.lower() and "quick_check" not in out


@pytest.mark.parametrize("backend", [Dialect.POSTGRES], ids=["postgres"], indirect=True)
async def test_a_schema_behind_or_ahead_of_this_sabha_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              state_url: StateURL) -> None:
    conn = await asyncpg.connect(str(state_url))
    try:
        await conn.execute("DELETE FROM schema_migrations WHERE name = '0900_web_login_links'")
        code, out = await doctor(capsys, tmp_path / "behind", str(state_url))
        assert code == 0, out  # the next start applies it: a warning, not a failure
        assert "WARN  state schema:" in out and "1 of" in out and "0900_web_login_links" in out
        assert "the next `sabha run` applies them" in out
        await conn.execute("INSERT INTO schema_migrations(name) VALUES ('9999_from_a_newer_sabha')")
        code, out = await doctor(capsys, tmp_path / "ahead", str(state_url))
    finally:
        await conn.close()
    assert code == 1
    assert "FAIL  state schema:" in out and "9999_from_a_newer_sabha" in out
    assert "fix: upgrade Sabha" in out


async def test_an_empty_database_is_created_at_the_first_start(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               pg_url: str) -> None:
    code, out = await doctor(capsys, tmp_path / "board", pg_url)
    assert code == 0, out
    assert "OK    state schema:" in out and "is empty: the first `sabha run` creates Sabha's tables" in out
    conn = await asyncpg.connect(pg_url)
    try:  # the doctor only looked
        assert await conn.fetchval("SELECT to_regclass('schema_migrations')") is None
    finally:
        await conn.close()


async def test_a_server_that_does_not_answer_or_a_missing_database_fail_with_the_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], pg_server: Any) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = int(s.getsockname()[1])
    code, out = await doctor(capsys, tmp_path / "down", f"postgresql://sabha@127.0.0.1:{closed}/sabha")
    assert code == 1
    assert f"FAIL  state server: PostgreSQL postgresql://sabha@127.0.0.1:{closed}/sabha is not reachable" in out
    assert "fix: start the server, or fix the host and port in state.url" in out
    assert "state schema" not in out
    missing = pg_server.url("no_such_db")
    code, out = await doctor(capsys, tmp_path / "missing", missing)
    assert code == 1
    assert "database 'no_such_db' does not exist" in out and "fix: create it (createdb" in out
