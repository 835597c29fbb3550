"""``<data_dir>/daemon.json``: how ``sabha status`` finds the daemon running on a data dir.

The daemon writes :class:`RuntimeInfo` (pid, host, port, start time in UTC ISO 8601,
version, phase) once its HTTP server listens (``sabha actions due`` finds it there: :mod:`bot.ops.wake`),
and earlier with phase ``starting`` while it waits for its state store (:mod:`bot.ops.startwait`: the stand-in
server's port, whose ``/healthz`` says what it waits for; the running daemon's file replaces it, a stop while
waiting removes it), atomically (a temporary file renamed over the old one, so a reader never sees half a file),
and removes it at a clean exit. A file left by a crash names a pid that no longer runs:
:func:`read_runtime` returns it anyway and :meth:`RuntimeInfo.alive` tells the two apart.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["RUNTIME_FILE", "RuntimeInfo", "local_base", "read_runtime", "remove_runtime", "write_runtime"]

RUNTIME_FILE = "daemon.json"


@dataclass(frozen=True)
class RuntimeInfo:
    """What a running daemon says about itself."""

    pid: int
    host: str
    port: int
    started_at: str
    version: str
    phase: str = "running"  # or "starting": still waiting for the state store

    def alive(self) -> bool:
        """True when a process with this pid exists (it may, rarely, be another one)."""
        return pid_alive(self.pid)


_LOCAL = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}  # wildcards: reached locally


def local_base(host: str, port: int) -> str:
    """``http://host:port`` of a daemon listening on ``host`` (a wildcard address: this host's loopback)."""
    host = _LOCAL.get(host, host)
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def pid_alive(pid: int) -> bool:
    """True when a process ``pid`` exists on this host (it may, rarely, be another one than meant)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def write_runtime(data_dir: Path, info: RuntimeInfo) -> Path:
    """Write ``daemon.json`` atomically; returns its path."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / RUNTIME_FILE
    tmp = data_dir / f".{RUNTIME_FILE}.{info.pid}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(asdict(info), fh, indent=2)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def read_runtime(data_dir: Path) -> RuntimeInfo | None:
    """The ``daemon.json`` of ``data_dir``, or None when there is none or it is unreadable."""
    try:
        data = json.loads((data_dir / RUNTIME_FILE).read_text(encoding="utf-8"))
        return RuntimeInfo(pid=int(data["pid"]), host=str(data["host"]), port=int(data["port"]),
                           started_at=str(data["started_at"]), version=str(data["version"]),
                           phase=str(data.get("phase", "running")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remove_runtime(data_dir: Path, pid: int | None = None) -> None:
    """Remove ``daemon.json`` (only if it is ``pid``'s, when given); never raises."""
    path = data_dir / RUNTIME_FILE
    if pid is not None:
        current = read_runtime(data_dir)
        if current is not None and current.pid != pid:
            return  # another daemon's
    with contextlib.suppress(OSError):
        path.unlink()
