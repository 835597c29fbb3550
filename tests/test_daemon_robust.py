"""Issue 22, items 12-14, each through a real ``sabha run``: a data dir that cannot be written
at start (12), a full disk while messages arrive (13), and slow clients holding connections
open (14)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from board.workspace.paths import copy_default_workspace
from tests.daemon_support import DAEMON_REPO

# -- 12. a data dir that cannot be written at start -------------------------------------------


def _plain_config(root: Path, data_dir: str = "./sessions") -> Path:
    """A sabha.yaml with no channel and the offline model: the daemon needs only its data dir."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    path = root / "sabha.yaml"
    path.write_text(f"workspace: ./workspace\ndata_dir: {data_dir}\nserver:\n  host: 127.0.0.1\n  port: 0\n",
                    encoding="utf-8")
    return path


def _run_sabha(config: Path, timeout: float = 30.0) -> tuple[int | None, str, float]:
    """``sabha run`` as a subprocess: (exit code, None if it still ran after ``timeout``; stderr;
    seconds it took)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(DAEMON_REPO), PYTHONUNBUFFERED="1")
    start = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "run", "--config", str(config)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=str(config.parent))
    try:
        _, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:  # the hang the issue saw
        proc.kill()
        _, err = proc.communicate()
        code = None
    return code, err.decode(errors="replace"), time.monotonic() - start


@contextlib.contextmanager
def _read_only(folder: Path) -> Iterator[str]:
    """Make ``folder`` impossible to write for this process: ``chattr +i`` for root (who
    ignores permission bits), mode 0555 for anyone else; yields which one."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield "chmod 0555"
        finally:
            folder.chmod(0o755)
        return
    made = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make {folder} immutable here: {made.stderr.decode(errors='replace').strip()}")
    try:
        yield "chattr +i"
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def _first_run(root: Path) -> None:
    """Start and stop the daemon once so the data dir holds a state db, as on a real host."""
    from board.db import StateDB
    from board.service import BOARD_MIGRATIONS, DB_FILE
    from bot.app import all_migrations

    async def make() -> None:
        db = await StateDB.open(root / "sessions" / DB_FILE, [*BOARD_MIGRATIONS, *all_migrations()])
        await db.close()

    import asyncio

    asyncio.run(make())


def _assert_one_clear_line(code: int | None, err: str, took: float, folder: Path) -> None:
    print(f"\nsabha run on an unwritable data dir: exit {code} after {took:.2f} s; stderr:\n{err}")
    assert code is not None, f"sabha run still ran after {took:.0f} s (the hang):\n{err}"
    assert "Traceback" not in err, err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    [line] = [line for line in lines if line.startswith("sabha:")]
    assert str(folder) in line, line
    assert "write" in line and "data_dir" in line, line  # what is wrong, and what to do


@pytest.mark.parametrize("existing_db", [False, True], ids=["new", "with-db"])
def test_12_read_only_data_dir_at_start_is_one_clear_line_and_exit_2(tmp_path: Path, existing_db: bool) -> None:
    config = _plain_config(tmp_path)
    data = tmp_path / "sessions"
    data.mkdir()
    if existing_db:
        _first_run(tmp_path)
    with _read_only(data):
        code, err, took = _run_sabha(config)
    _assert_one_clear_line(code, err, took, data)


def test_12_data_dir_under_a_regular_file_is_one_clear_line_and_exit_2(tmp_path: Path) -> None:
    config = _plain_config(tmp_path, "./afile/sessions")
    (tmp_path / "afile").write_text("not a folder\n", encoding="utf-8")
    code, err, took = _run_sabha(config)
    _assert_one_clear_line(code, err, took, tmp_path / "afile" / "sessions")


def test_12_read_only_state_db_at_start_is_one_clear_line_and_exit_2(tmp_path: Path) -> None:
    config = _plain_config(tmp_path)
    _first_run(tmp_path)
    with _read_only(tmp_path / "sessions" / "sabha.db"):
        code, err, took = _run_sabha(config)
    _assert_one_clear_line(code, err, took, tmp_path / "sessions")
