"""One ``sabha run`` per SQLite board (issue 38): a second one on the same data dir, even with ``server.port: 0``
(no port clash to stop it), is refused with one line naming the running one (pid, address) and a non-zero
exit code; the running one keeps its ``daemon.json`` (``sabha status`` still finds it), and removes it when it
stops. A lock left by a killed daemon does not block the next start (the OS releases it). On PostgreSQL several
``sabha run`` on one board are replicas by design: both run."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path

import pexpect
import pytest

from board.storage import StateURL
from bot.ops.runtime import RUNTIME_FILE
from tests.support.terminal import ended, make_board, problems, screen, spawn_sabha, terminal_env


def wait_running(child: pexpect.spawn) -> int:
    """Wait for the daemon's "running" line; its port."""
    child.expect(r"running: \d+ channel\(s\), http on [^\s:]+:(\d+)")
    return int(child.match.group(1))


def finish(child: pexpect.spawn) -> tuple[int | None, str]:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, screen(child)


def sabha_status(board: Path, tmp_path: Path) -> str:
    out, code = pexpect.run(f"{sys.executable} -m bot.cli status", cwd=str(board), env=terminal_env(tmp_path),
                            timeout=120, withexitstatus=True, encoding="utf-8")
    assert code == 0, out
    return str(out)


async def test_a_second_run_on_the_same_sqlite_board_is_refused_naming_the_first(tmp_path: Path) -> None:
    board = make_board(tmp_path)
    with ended(spawn_sabha(board, tmp_path, "run")) as first:
        port = await asyncio.to_thread(wait_running, first)
        with ended(spawn_sabha(board, tmp_path, "run")) as second:
            code, output = await asyncio.to_thread(finish, second)
        assert code == 2, output
        lines = [line for line in output.splitlines() if line.strip()]
        assert len(lines) == 1, output
        assert f"pid {first.pid}" in lines[0] and f"http://127.0.0.1:{port}" in lines[0], output
        assert not problems(output), output
        runtime = json.loads((board / "sessions" / RUNTIME_FILE).read_text(encoding="utf-8"))
        assert runtime["pid"] == first.pid  # the refused one wrote nothing over it
        status = await asyncio.to_thread(sabha_status, board, tmp_path)
        assert f"running: pid {first.pid}" in status and re.search(r"Replicas: 1 alive", status), status
        first.kill(signal.SIGTERM)
        code, output = await asyncio.to_thread(finish, first)
    assert code == 0, output
    assert not (board / "sessions" / RUNTIME_FILE).exists()


async def test_a_killed_daemon_does_not_block_the_next_start(tmp_path: Path) -> None:
    board = make_board(tmp_path)
    with ended(spawn_sabha(board, tmp_path, "run")) as first:
        await asyncio.to_thread(wait_running, first)
        os.kill(first.pid, signal.SIGKILL)
        await asyncio.to_thread(finish, first)
    with ended(spawn_sabha(board, tmp_path, "run")) as again:
        await asyncio.to_thread(wait_running, again)
        again.kill(signal.SIGTERM)
        code, output = await asyncio.to_thread(finish, again)
    assert code == 0, output


@pytest.mark.backends
async def test_two_runs_on_one_board_sqlite_refuses_postgres_runs_both(tmp_path: Path,
                                                                        state_url: StateURL | None) -> None:
    board = make_board(tmp_path)
    if state_url is not None:
        with open(board / "sabha.yaml", "a", encoding="utf-8") as fh:
            fh.write(f"state:\n  url: {state_url}\n")
    with ended(spawn_sabha(board, tmp_path, "run")) as first:
        await asyncio.to_thread(wait_running, first)
        with ended(spawn_sabha(board, tmp_path, "run")) as second:
            if state_url is None:
                code, output = await asyncio.to_thread(finish, second)
                assert code == 2 and f"pid {first.pid}" in output, output
            else:  # a replica: it runs beside the first
                await asyncio.to_thread(wait_running, second)
                second.kill(signal.SIGTERM)
                code, output = await asyncio.to_thread(finish, second)
                assert code == 0, output
        first.kill(signal.SIGTERM)
        code, output = await asyncio.to_thread(finish, first)
    assert code == 0, output


def test_a_stopping_daemon_removes_only_its_own_daemon_json(tmp_path: Path) -> None:
    from bot.ops.runtime import RuntimeInfo, read_runtime, remove_runtime, write_runtime

    other = RuntimeInfo(pid=os.getppid(), host="127.0.0.1", port=8080, started_at="2026-01-01T00:00:00+00:00",
                        version="0")
    write_runtime(tmp_path, other)
    remove_runtime(tmp_path, os.getpid())  # not ours: kept
    assert read_runtime(tmp_path) == other
    remove_runtime(tmp_path, other.pid)
    assert read_runtime(tmp_path) is None


def test_the_lock_names_its_holder_and_is_free_once_released(tmp_path: Path) -> None:
    from bot.ops.runlock import LockHeld, LockKind, ProcessLock

    with ProcessLock(tmp_path, LockKind.CHAT):
        with pytest.raises(LockHeld) as held:
            ProcessLock(tmp_path, LockKind.CHAT).acquire()
        assert held.value.pid == os.getpid() and held.value.kind is LockKind.CHAT
        with ProcessLock(tmp_path, LockKind.RUN):  # another kind: its own lock
            pass
    with ProcessLock(tmp_path, LockKind.CHAT):  # released: free again
        pass


async def test_a_run_lock_that_cannot_be_opened_is_said_in_one_line_and_the_daemon_runs(tmp_path: Path) -> None:
    """A ``run.lock`` sabha cannot open (here a folder; in life another user's file) was skipped without a
    word, so a second daemon could start unseen: ``sabha run`` says so in one line and carries on."""
    board = make_board(tmp_path)
    (board / "sessions").mkdir(exist_ok=True)
    (board / "sessions" / "run.lock").mkdir()
    with ended(spawn_sabha(board, tmp_path, "run")) as daemon:
        await asyncio.to_thread(wait_running, daemon)
        daemon.kill(signal.SIGTERM)
        code, output = await asyncio.to_thread(finish, daemon)
    assert code == 0, output
    said = [line for line in output.splitlines() if "cannot take the lock" in line]
    assert len(said) == 1 and str(board / "sessions" / "run.lock") in said[0], output
