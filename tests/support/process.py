"""Processes the tests start must not outlive them: the ``sabha`` processes a test run started, found and ended.

Two ways a process is known as ours:

- every :class:`tests.support.daemon.SabhaProcess` registers itself here when it starts (:func:`register`);
  :func:`end_registered` kills those still running (the autouse fixture in tests/conftest.py calls it after
  every test, whatever happened in it);
- every process this pytest process starts inherits ``PYTEST_SABHA_OWNER=<this pid>`` (set by
  :func:`mark_owner` at configure time), and :func:`sabha_leftovers` finds the ``sabha`` / ``bot.cli``
  processes that carry it or descend from this process, even ones a test started with a bare
  ``subprocess.Popen`` and never ended, or whose parent died (re-parented away from us).

Linux only (``/proc``); elsewhere the scan finds nothing and only the registry works.
"""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = ["OWNER_ENV", "Leftover", "end_leftovers", "end_registered", "mark_owner", "register", "sabha_leftovers"]

#: The variable every process started by this test process inherits (so a leftover is recognised as ours).
OWNER_ENV = "PYTEST_SABHA_OWNER"
_PROC = Path("/proc")


class _Killable(Protocol):
    """What the registry needs of a started process (``SabhaProcess``)."""

    def alive_pid(self) -> int | None: ...

    def describe(self) -> str: ...


_registered: list[_Killable] = []


@dataclass(frozen=True)
class Leftover:
    """A ``sabha`` process still alive that this test process started (directly or not)."""

    pid: int
    command: str

    def __str__(self) -> str:
        return f"pid {self.pid}: {self.command}"


def mark_owner() -> None:
    """Make every process started from now on carry this process's id in :data:`OWNER_ENV`."""
    os.environ[OWNER_ENV] = str(os.getpid())


def register(process: _Killable) -> None:
    """Remember a started process so :func:`end_registered` ends it if the test does not."""
    if process not in _registered:
        _registered.append(process)


def end_registered() -> list[Leftover]:
    """SIGKILL every registered process still running and forget them all; those killed."""
    killed = []
    for process in _registered:
        pid = process.alive_pid()
        if pid is not None and _kill(pid):
            killed.append(Leftover(pid, process.describe()))
    _registered.clear()
    return killed


def _kill(pid: int) -> bool:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _parent(pid: int) -> int | None:
    """The parent of ``pid`` (None: gone, or a zombie)."""
    fields = _read(f"/proc/{pid}/stat").decode(errors="replace").rpartition(")")[2].split()  # state ppid ...
    if len(fields) < 2 or fields[0] == "Z":
        return None
    return int(fields[1])


def _descends_from(pid: int, owner: int) -> bool:
    for _ in range(64):  # a process tree is shallow; a bound against a cycle read mid-change
        parent = _parent(pid)
        if parent is None or parent <= 1:
            return False
        if parent == owner:
            return True
        pid = parent
    return False


def _is_sabha(argv: list[str]) -> bool:
    """A ``sabha`` command line: ``sabha ...``, ``python -m bot.cli ...`` or the tests' ``-c "from bot.cli ..."``."""
    return any("bot.cli" in arg for arg in argv[:4]) or any(Path(arg).name == "sabha" for arg in argv[:2])


def sabha_leftovers(owner: int | None = None) -> list[Leftover]:
    """The live ``sabha`` processes started by process ``owner`` (default: this one): its descendants, and any
    process carrying ``PYTEST_SABHA_OWNER=<owner>``."""
    owner = os.getpid() if owner is None else owner
    marker = f"{OWNER_ENV}={owner}".encode()
    found = []
    try:
        pids = sorted(int(name) for name in os.listdir(_PROC) if name.isdigit())
    except OSError:
        return []
    for pid in pids:
        if pid == owner:
            continue
        argv = [a.decode(errors="replace") for a in _read(f"/proc/{pid}/cmdline").split(b"\0") if a]
        if not argv or not _is_sabha(argv) or _parent(pid) is None:
            continue
        if _descends_from(pid, owner) or marker in _read(f"/proc/{pid}/environ").split(b"\0"):
            found.append(Leftover(pid, " ".join(argv)[:300]))
    return found


def end_leftovers(leftovers: list[Leftover]) -> list[Leftover]:
    """SIGKILL each of ``leftovers``; those that were still there to kill."""
    ended = []
    for leftover in leftovers:
        with contextlib.suppress(PermissionError):
            if _kill(leftover.pid):
                ended.append(leftover)
    return ended
