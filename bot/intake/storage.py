"""Whether Sabha can write its state right now (disk full, read-only data dir, I/O errors).

:func:`is_storage_error` recognises the errors that mean "the data dir cannot be written"
(SQLite's ``database or disk is full``, a read-only database, ENOSPC, EROFS ...; also
``database is locked``: another process held the write lock past the busy timeout), as
opposed to a bug. All of them pass: a message that could not be stored is not
acknowledged, an answer that could not be recorded is parked and retried.
:class:`StorageHealth` is the daemon's one view of it: the first failure is logged once
with what to do, ``/healthz`` shows it, and the first successful write after it logs the
recovery.

At start, :func:`ensure_writable` checks the data dir before anything opens it, and
:class:`DataDirUnwritable` is the one-line error ``sabha run`` (and every command that opens
the board) ends with, exit code 2, when it cannot be written: a read-only folder or mount, a
path under a regular file, an immutable db.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import tempfile
import time
from pathlib import Path

from board.storage.database import StorageError

__all__ = ["DataDirUnwritable", "StorageHealth", "ensure_writable", "is_locked", "is_storage_error"]

log = logging.getLogger("sabha.storage")

_LOCKED = "database is locked"  # another process held the write lock past the busy timeout
_SQLITE_WRITE_PROBLEMS = (
    "database or disk is full",
    "attempt to write a readonly database",
    "disk i/o error",
    "unable to open database file",
    _LOCKED,
)
_OS_WRITE_PROBLEMS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}


def is_locked(exc: BaseException) -> bool:
    """True when ``exc`` is SQLite's "database is locked" (another process, not the folder)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:  # also under the storage layer's StorageError
        seen.add(id(current))
        if isinstance(current, sqlite3.OperationalError):
            return _LOCKED in str(current).lower()
        current = current.__cause__
    return False


def is_storage_error(exc: BaseException) -> bool:
    """True when ``exc`` (or what caused it) says the state cannot be written right now: the data dir (SQLite) or
    the state server (a retryable :class:`board.storage.StorageError`: PostgreSQL unreachable, restarting, out of
    space or connections)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sqlite3.OperationalError) and any(
                p in str(current).lower() for p in _SQLITE_WRITE_PROBLEMS):
            return True
        if isinstance(current, OSError) and current.errno in _OS_WRITE_PROBLEMS:
            return True
        if isinstance(current, StorageError) and current.retryable:  # e.g. PostgreSQL unreachable
            return True
        current = current.__cause__ or current.__context__
    return False


def _from_server(exc: BaseException) -> bool:
    """True when ``exc`` is the storage layer's outage of a state server (not SQLite's file)."""
    return isinstance(exc, StorageError) and not isinstance(exc.__cause__, sqlite3.Error)


class DataDirUnwritable(Exception):
    """The data dir cannot be written at start; ``str()`` is one line naming it and what to do."""

    def __init__(self, data_dir: Path, why: str) -> None:
        super().__init__(
            f"cannot write the data dir {data_dir} ({why}): give the user running Sabha write access to it "
            f"(e.g. chown -R sabha {data_dir}), free disk space if it is full, or set data_dir: to a writable "
            "folder")
        self.data_dir = data_dir


_SQLITE_FILES = (".db", ".db-wal", ".db-shm")


def _reason(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__


def ensure_writable(data_dir: Path) -> None:
    """Create ``data_dir`` if needed and prove it can be written: a file made and written in
    it, and each SQLite file already in it opened for writing (what SQLite does;
    root ignores permission bits, an immutable file refuses even root). Raises
    :class:`DataDirUnwritable` naming the folder and the reason."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".sabha-write-check-", delete=True) as fh:
            fh.write(b"ok")
            fh.flush()
        for name in sorted(os.listdir(data_dir)):
            if name.endswith(_SQLITE_FILES) and (data_dir / name).is_file():
                with open(data_dir / name, "r+b"):  # opened for writing, nothing written
                    pass
    except OSError as exc:
        name = Path(exc.filename).name if isinstance(exc.filename, str) else ""
        why = f"{name}: {_reason(exc)}" if name.endswith(_SQLITE_FILES) else _reason(exc)
        raise DataDirUnwritable(data_dir, why) from exc


class StorageHealth:
    """The daemon's view of whether its state can be written; see the module docstring."""

    def __init__(self) -> None:
        self.problem: str | None = None
        self.since: float | None = None
        self.failures = 0
        self.total_failures = 0  # since the start, never reset (metrics)
        self.outage = 0  # numbers the outages: a sender is told once per outage

    @property
    def ok(self) -> bool:
        """True while writes succeed."""
        return self.problem is None

    def failed(self, exc: BaseException, doing: str) -> None:
        """A write failed with a storage error while ``doing`` something (logged once per outage)."""
        self.failures += 1
        self.total_failures += 1
        if self.problem is None:
            self.outage += 1
            self.problem = f"{doing}: {exc}"
            self.since = time.monotonic()
            fix = ("Another process holds the state db's write lock (a backup or a second Sabha on the same "
                   "data_dir?): let it finish or stop it." if _LOCKED in str(exc).lower() else
                   "Check that the PostgreSQL server of state.url is running and reachable from here."
                   if _from_server(exc) else "Free disk space or fix the permissions of the data dir.")
            log.error("cannot write Sabha's data (%s while %s). Messages are not lost: they are answered with a "
                      "short 'try again shortly' and taken up once writing works again. %s", exc, doing, fix)

    def recovered(self) -> None:
        """A write succeeded: the outage (if any) is over."""
        if self.problem is not None:
            took = time.monotonic() - (self.since or time.monotonic())
            log.warning("Sabha's data can be written again (after %.0f s, %d failed write(s))", took, self.failures)
            self.problem = None
            self.since = None
            self.failures = 0

    def describe(self) -> dict[str, object]:
        """For ``/healthz``."""
        return {"writable": self.ok, "problem": self.problem,
                "for_s": None if self.since is None else round(time.monotonic() - self.since, 1)}
