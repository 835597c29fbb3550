"""A ``sabha init`` board for tests that run the real CLI as a subprocess (``sabha ask``, ``--why``).

:func:`init_board` makes the board once per test folder (no key: the offline model) and returns it
with the environment that runs this checkout's code; :func:`run_sabha` runs one command in it and
ends the process whatever happens."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

__all__ = ["init_board", "run_sabha"]

REPO = Path(__file__).resolve().parents[2]


async def init_board(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """``sabha init tmp_path/board`` (once per ``tmp_path``); the board's folder and the environment to run in."""
    folder = tmp_path / "board"
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    env.pop("SABHA_CONFIG", None)
    if not folder.exists():
        init = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", "init", str(folder), env=env,
                                                    stdout=asyncio.subprocess.DEVNULL)
        assert await asyncio.wait_for(init.wait(), 120) == 0
    return folder, env


async def run_sabha(folder: Path, env: dict[str, str], *args: str, timeout: float = 120) -> tuple[str, str]:
    """``sabha *args`` in ``folder``; (stdout, stderr), after asserting it exited 0."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", *args, cwd=folder, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    return out.decode(), err.decode()
