"""A real ``sabha`` command on a pseudo-terminal (pexpect), as a person runs it: a board made by ``sabha init``
(the offline model; the HTTP server on port 0), the environment that runs this checkout's code, what the
command printed without terminal escapes, and its end (every spawned process is ended by :func:`ended`)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pexpect

__all__ = ["ANSI", "PROBLEMS", "ended", "make_board", "problems", "screen", "spawn_sabha", "terminal_env"]

REPO = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-Za-z]|\r")
#: What a quiet Ctrl-C never shows: a traceback, a Python warning, an unawaited coroutine, a closed loop.
PROBLEMS = ("Traceback", "Warning:", "was never awaited", "Event loop is closed", "Exception in thread",
            "KeyboardInterrupt", "Task was destroyed")


def terminal_env(tmp_path: Path) -> dict[str, str]:
    """A clean environment for a ``sabha`` on a pseudo-terminal (no key: the offline model)."""
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg"),
            "TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONPATH": str(REPO),
            "PROMPT_TOOLKIT_NO_CPR": "1"}  # pexpect's terminal does not answer "where is the cursor?"


def make_board(tmp_path: Path) -> Path:
    """``sabha init tmp_path/board``, its HTTP server on port 0 (several run at once in tests)."""
    folder = tmp_path / "board"
    code = pexpect.run(f"{sys.executable} -m bot.cli init {folder}", env=terminal_env(tmp_path), timeout=120,
                       withexitstatus=True)[1]
    assert code == 0
    with open(folder / "sabha.yaml", "a", encoding="utf-8") as fh:
        fh.write("server:\n  port: 0\n")
    return folder


def spawn_sabha(board: Path, tmp_path: Path, *args: str) -> pexpect.spawn:
    """``sabha *args`` in ``board`` on a pseudo-terminal; what it prints is kept for :func:`screen`."""
    child = pexpect.spawn(sys.executable, ["-m", "bot.cli", *args], cwd=str(board), env=terminal_env(tmp_path),
                          encoding="utf-8", timeout=120, dimensions=(40, 200))
    child.logfile_read = io.StringIO()
    return child


def screen(child: pexpect.spawn) -> str:
    """Everything the child printed so far, without terminal escapes."""
    log = child.logfile_read
    assert isinstance(log, io.StringIO)
    return ANSI.sub("", log.getvalue())


def problems(output: str) -> list[str]:
    """The :data:`PROBLEMS` ``output`` shows."""
    return [problem for problem in PROBLEMS if problem in output]


@contextlib.contextmanager
def ended(child: pexpect.spawn) -> Iterator[pexpect.spawn]:
    """``child``, killed at the end of the block if it still runs."""
    try:
        yield child
    finally:
        if child.isalive():
            child.terminate(force=True)
        with contextlib.suppress(Exception):
            child.close(force=True)
