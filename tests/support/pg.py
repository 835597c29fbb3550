"""A throwaway PostgreSQL server for tests: Debian's ``postgresql`` package, a cluster made with
``initdb`` in a temporary folder, started with ``pg_ctl`` on a free port of 127.0.0.1, removed after.

PostgreSQL refuses to run as root, so when the tests run as root (a CI container) the cluster is made
and run as the ``postgres`` user (``runuser``). Where no server binaries are found, or no user may run
them, :func:`pg_server` skips with the reason (on CI, ``CI=true``, it fails instead: tests/support/ci.py);
``.ci/run`` installs the package, so on CI it runs.

The fixtures ``pg_server`` (one server per test process, i.e. per pytest-xdist worker) and ``pg_url`` (a fresh
database per test) are in tests/conftest.py:
``initdb`` costs about a second, ``CREATE DATABASE`` a few milliseconds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from board.storage.migrations import Migration
from tests.support.ci import missing_part

__all__ = ["PgServer", "find_pg_bin", "fresh_database", "throwaway_cluster"]

_BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


def find_pg_bin() -> Path | None:
    """The folder with ``initdb``, ``pg_ctl`` and ``postgres`` (the newest installed), or None."""
    for folder in _BIN_DIRS:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    found = shutil.which("pg_ctl")
    return Path(found).resolve().parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PgServer:
    """A running throwaway cluster: its port, its socket folder, its superuser."""

    bin: Path
    root: Path
    port: int
    user: str  # the OS user that runs it
    superuser: str = "sabha"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.superuser}@127.0.0.1:{self.port}/{database}"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", self.user, "--"] if os.geteuid() == 0 else []
        return subprocess.run([*prefix, *argv], capture_output=True, text=True, check=check, timeout=300)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-w", "-t", "300",
                  "-l", str(self.root / "server.log"), "start")

    def stop(self, mode: str = "fast") -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def log(self) -> str:
        path = self.root / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""


@contextlib.contextmanager
def throwaway_cluster(binaries: Path | None = None) -> Iterator[PgServer]:
    """A new cluster, running; stopped and removed after (skips the test with the reason where none can run;
    fails it on CI). ``binaries``: the server's bin folder (default: the newest installed)."""
    folder = binaries or find_pg_bin()
    if folder is None:
        missing_part("PostgreSQL server binaries not found (Debian: apt-get install postgresql; .ci/run does)")
    user = "postgres" if os.geteuid() == 0 else os.environ.get("USER", "")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        missing_part("running as root without runuser: PostgreSQL refuses to run as root")
    root = Path(tempfile.mkdtemp(prefix="sabha-pg-"))
    root.chmod(0o755)
    server = PgServer(folder, root, _free_port(), user)
    if os.geteuid() == 0:
        shutil.chown(root, user=user)
    try:
        made = server._run(str(folder / "initdb"), "-D", str(server.data), "-U", server.superuser,
                           "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", check=False)
        if made.returncode != 0:
            missing_part(f"initdb could not make a test cluster: {made.stderr.strip()[-300:]}")
        server.start()
        yield server
    finally:
        server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


@contextlib.asynccontextmanager
async def fresh_database(server: PgServer, template: str | None = None) -> AsyncIterator[str]:
    """The URL of a new database on ``server`` (empty, or a copy of database ``template``), dropped after."""
    import asyncpg

    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(server.url())
    try:
        await admin.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    finally:
        await admin.close()
    try:
        yield server.url(name)
    finally:
        admin = await asyncpg.connect(server.url())
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


async def migrated_template(server: PgServer, migrations: Sequence[Migration]) -> str:
    """A database on ``server`` with ``migrations`` (SQLite form; their PostgreSQL twins are applied) applied,
    made once per set for this test process: tests copy it (``CREATE DATABASE ... TEMPLATE``, a few ms)
    instead of migrating each time."""
    import hashlib

    import asyncpg

    from board.storage import Dialect, parse_state_url
    from board.storage.migrations import for_dialect
    from board.storage.postgres import PostgresDatabase

    key = hashlib.sha1("\n".join(sorted(m.name for m in migrations)).encode()).hexdigest()[:12]
    name = f"tmpl_{key}"
    if (server.port, name) in _TEMPLATES:  # per server: a test process may run two (one with pgvector)
        return name
    admin = await asyncpg.connect(server.url())
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    db = await PostgresDatabase.open(parse_state_url(server.url(name), data_dir=Path("."), env={}),
                                     for_dialect(migrations, Dialect.POSTGRES), min_size=1, max_size=1)
    await db.close()
    _TEMPLATES.add((server.port, name))
    return name


_TEMPLATES: set[tuple[int, str]] = set()
