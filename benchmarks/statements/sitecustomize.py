"""Counts the SQL statements a measured ``sabha run`` runs (``benchmarks/cpu.py --statements``), nothing else.

On the daemon's ``PYTHONPATH`` only for that run: with ``SABHA_BENCH_STATEMENTS`` naming a file, every SQLite
connection the process opens (aiosqlite's and the express one, both through :func:`sqlite3.connect`) gets a trace
callback that appends one line per statement to that file; statements a trigger or a virtual table (FTS) runs
inside another (SQLite reports them with a leading ``--``) are not counted. The benchmark counts the lines written
while its messages are answered."""

from __future__ import annotations

import os
import sqlite3
import threading
from typing import Any

_OUT = os.environ.get("SABHA_BENCH_STATEMENTS")

if _OUT:
    _connect = sqlite3.connect
    _lock = threading.Lock()
    _file = open(_OUT, "a", encoding="utf-8")  # noqa: SIM115  # open for the process's life

    def _traced(statement: str) -> None:
        if statement.startswith("--"):
            return
        with _lock:
            _file.write(statement.split(None, 1)[0] + "\n")
            _file.flush()

    def _connect_traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn: sqlite3.Connection = _connect(*args, **kwargs)
        conn.set_trace_callback(_traced)
        return conn

    sqlite3.connect = _connect_traced  # type: ignore[assignment]  # the same call, traced
