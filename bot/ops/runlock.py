"""One process of a kind per board: the lock ``sabha run`` (on SQLite) and ``sabha chat`` hold on the data dir.

A second ``sabha run`` on a SQLite board would start silently as a second replica of the same
file (and, stopping, take ``daemon.json`` with it); a second ``sabha chat`` would interleave one
conversation with the first. Each takes :class:`ProcessLock` on ``<data_dir>/<kind>.lock`` first:
an OS lock (``fcntl.flock``, exclusive, non-blocking) that the kernel releases when the process
ends however it ends, so a chat killed with ``kill -9`` never blocks the next one. The holder
writes its pid into the file, so a refusal names the running one (:class:`LockHeld`).
PostgreSQL replicas (several ``sabha run`` on one database) take no lock (:func:`bot.cli.main.cmd_run`).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from enum import Enum
from pathlib import Path
from types import TracebackType

__all__ = ["LockHeld", "LockKind", "ProcessLock", "lock_path", "lock_unusable"]


class LockKind(Enum):
    """What holds the lock: the daemon or the terminal chat (the value is the file's stem)."""

    RUN = "run"
    CHAT = "chat"


def lock_path(data_dir: Path, kind: LockKind) -> Path:
    """``<data_dir>/<kind>.lock``."""
    return data_dir / f"{kind.value}.lock"


class LockHeld(Exception):
    """Another process holds the lock: its pid (0 when it has not written it yet)."""

    def __init__(self, kind: LockKind, pid: int, path: Path) -> None:
        super().__init__(kind, pid, path)
        self.kind, self.pid, self.path = kind, pid, path

    def __str__(self) -> str:
        return f"{self.path} is held by pid {self.pid or '?'}"


class ProcessLock:
    """The lock of one kind on one data dir; see the module docstring. A context manager."""

    def __init__(self, data_dir: Path, kind: LockKind) -> None:
        self.kind = kind
        self.path = lock_path(data_dir, kind)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock and write this pid into it; :class:`LockHeld` when another process holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_pid(fd)
            os.close(fd)
            raise LockHeld(self.kind, holder, self.path) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Give the lock back (the file stays: removing it could race with the next holder's open)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing the only descriptor releases the flock
            self._fd = None

    def __enter__(self) -> ProcessLock:
        if self._fd is None:  # taken already (acquire() first, to tell a refusal apart): kept
            self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()


def _read_pid(fd: int) -> int:
    try:
        return int(os.pread(fd, 32, 0).decode("ascii", "replace").strip() or 0)
    except (OSError, ValueError):
        return 0


def lock_unusable(path: Path, exc: OSError, meaning: str) -> None:
    """Say in one line (a warning) that the lock at ``path`` could not be taken, and carry on: the lock
    only keeps a second process out, and a board that would not open over a file someone else left
    there (another user's, a folder) helps nobody. Silent when the data dir itself cannot be made or
    written: opening the board says that, with the fix."""
    folder = path.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        return
    logging.getLogger("sabha.lock").warning("cannot take the lock %s: %s; %s (remove it, or make it yours)",
                                            path, exc.strerror or exc, meaning)
