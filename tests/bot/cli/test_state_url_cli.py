"""``state.url`` from an operator's side: what a PostgreSQL URL may say (TLS, sockets, IPv6, odd names), what the CLI
says when the server refuses or is away (one line with the fix, never a traceback, never the password), and the
commands that read the state (``sabha inbox``, ``sabha cost``) on PostgreSQL, where no ``sabha.db`` exists."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from board.storage import Dialect, parse_state_url

SABHA = [sys.executable, "-m", "bot.cli.main"]
ROOT = Path(__file__).resolve().parents[3]


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", **env}
    full.pop("SABHA_DB_PASSWORD", None)
    full.pop("PGPASSWORD", None)
    full.update(env)
    return subprocess.run(SABHA + args, cwd=cwd, capture_output=True, text=True, timeout=120, env=full)


def board(tmp_path: Path, url: str) -> Path:
    home = tmp_path / "proj"
    assert run(["init", str(home)], cwd=tmp_path).returncode == 0
    config = home / "sabha.yaml"
    config.write_text(config.read_text() + f"\nstate:\n  url: {url}\n")
    return home


# -- what the URL may say ---------------------------------------------------------------------------------------


def test_tls_settings_in_the_url_reach_the_driver_and_a_password_there_is_refused() -> None:
    url = parse_state_url("postgresql://sabha@db.internal:5433/sabha?sslmode=verify-full&sslrootcert=/etc/ca.pem",
                          data_dir=Path("/d"), env={})
    assert url.dialect is Dialect.POSTGRES
    assert "sslmode=verify-full" in url.dsn() and "sslrootcert=%2Fetc%2Fca.pem" in url.dsn()
    assert "sslmode=verify-full" in str(url)
    with pytest.raises(ValueError, match="password"):
        parse_state_url("postgresql://sabha@db/sabha?password=hunter2", data_dir=Path("/d"), env={})
    with pytest.raises(ValueError, match="frobnicate"):
        parse_state_url("postgresql://sabha@db/sabha?frobnicate=1", data_dir=Path("/d"), env={})


def test_a_socket_folder_an_ipv6_host_and_quoted_names_are_kept_as_written() -> None:
    socket = parse_state_url("postgresql://sabha@/sabha?host=/run/postgresql", data_dir=Path("/d"), env={})
    assert "host=%2Frun%2Fpostgresql" in socket.dsn()
    ipv6 = parse_state_url("postgresql://sabha@[::1]:5433/sabha", data_dir=Path("/d"), env={})
    assert (ipv6.host, ipv6.port) == ("::1", 5433)
    assert ipv6.dsn().startswith("postgresql://sabha@[::1]:5433/sabha")
    odd = parse_state_url("postgresql://ops%40corp@127.0.0.1/my%2Fdb", data_dir=Path("/d"), env={})
    assert (odd.user, odd.database) == ("ops@corp", "my/db")
    assert odd.dsn().startswith("postgresql://ops%40corp@127.0.0.1:5432/my%2Fdb")


async def test_a_url_asking_for_tls_is_not_quietly_served_in_plain_text(tmp_path: Path, pg_url: str) -> None:
    from board.storage import StorageError, open_database

    url = parse_state_url(pg_url + "?sslmode=require", data_dir=tmp_path, env={})
    with pytest.raises(StorageError):  # the test server has no TLS: refused, not downgraded
        await open_database(url)


# -- what the CLI says ------------------------------------------------------------------------------------------


def test_a_password_written_into_the_url_is_refused_without_showing_it(tmp_path: Path) -> None:
    home = board(tmp_path, "postgresql://sabha:S3cretPW-x@127.0.0.1:9/sabha")
    for args in (["config", "check"], ["status"]):
        done = run(args, cwd=home)
        assert done.returncode != 0
        out = done.stdout + done.stderr
        assert "S3cretPW-x" not in out, out
        assert "SABHA_DB_PASSWORD" in out, out


def test_a_missing_database_or_role_is_one_line_with_the_fix(tmp_path: Path, pg_server: object) -> None:
    base = pg_server.url("no_such_db")  # type: ignore[attr-defined]
    home = board(tmp_path, base)
    done = run(["sessions", "list"], cwd=home)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "no_such_db" in done.stderr and "createdb" in done.stderr, done.stderr
    port = pg_server.port  # type: ignore[attr-defined]
    (tmp_path / "b").mkdir()
    home2 = board(tmp_path / "b", f"postgresql://nobody_here@127.0.0.1:{port}/postgres")
    done = run(["status"], cwd=home2)
    assert "Traceback" not in done.stderr, done.stderr
    assert "nobody_here" in done.stderr and "user" in done.stderr.lower(), done.stderr


def test_postgresql_away_is_not_called_a_data_dir_problem(tmp_path: Path) -> None:
    home = board(tmp_path, "postgresql://sabha@127.0.0.1:9/sabha")
    done = run(["sessions", "list"], cwd=home)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr, done.stderr
    assert "127.0.0.1:9" in done.stderr and "chown" not in done.stderr, done.stderr


def test_postgresql_without_its_driver_installed_says_how_to_install_it(tmp_path: Path) -> None:
    """``pip install sabha`` brings no PostgreSQL driver (SQLite needs none; asyncpg comes with the ``postgres``
    extra). A state.url on PostgreSQL without it ended every command in a ModuleNotFoundError traceback."""
    home = board(tmp_path, "postgresql://sabha@127.0.0.1:9/sabha")
    blocker = tmp_path / "no-asyncpg"  # a Python on which asyncpg is not installed
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['asyncpg'] = None\n")
    path = f"{blocker}{os.pathsep}{ROOT}"
    for args in (["run"], ["status"], ["sessions", "list"], ["doctor", "--offline"]):
        done = run(args, cwd=home, PYTHONPATH=path)
        said = done.stdout + done.stderr
        assert "Traceback" not in said, (args, said)
        assert "sabha[postgres]" in said and "asyncpg" in said, (args, said)
        assert done.returncode != 0, (args, said)


async def test_status_on_a_host_whose_replica_is_down_names_the_replicas_that_serve(tmp_path: Path,
                                                                                  pg_url: str) -> None:
    """With replicas, ``sabha status`` on a host whose own replica is down said only "Sabha is not running" while
    two other replicas answered everyone: an operator paged for an outage that was not one."""
    import time

    from board.app import BOARD_MIGRATIONS
    from board.storage import open_database
    from bot.app import all_migrations
    from bot.replicas.registry import ReplicaIdentity, register

    db = await open_database(parse_state_url(pg_url, data_dir=tmp_path, env={}), [*BOARD_MIGRATIONS,
                                                                                   *all_migrations()])
    try:
        for name, host in (("eu-1", "db-host-a"), ("eu-2", "db-host-b")):
            await register(db, ReplicaIdentity(name, host, 4242, "2026-11-28T10:00:00+00:00"), now=time.time(),
                           lease_s=15)
    finally:
        await db.close()
    home = board(tmp_path, pg_url)
    done = run(["status"], cwd=home)
    assert done.returncode == 3, done.stdout + done.stderr  # this host's daemon: not running (systemd's code)
    first = done.stdout.splitlines()[:3]
    assert "not running on this host" in first[0], done.stdout
    assert "2 other replica(s) serve this state: eu-1 on db-host-a, eu-2 on db-host-b" in "\n".join(first), \
        done.stdout
    assert "Replicas: 2 alive" in done.stdout


async def test_inbox_and_cost_read_postgresql_where_there_is_no_sabha_db(tmp_path: Path, pg_url: str) -> None:
    from board.app import BOARD_MIGRATIONS
    from board.envelope import Envelope
    from board.spending.ledger import Ledger, LLMCallRecord
    from board.storage import open_database
    from bot.app import all_migrations
    from bot.intake.inbox import Arrival, Inbox

    db = await open_database(parse_state_url(pg_url, data_dir=tmp_path, env={}), [*BOARD_MIGRATIONS,
                                                                                   *all_migrations()])
    try:
        await Inbox(db, "telegram").store([Arrival(Envelope(channel="telegram", text="stored on postgres",
                                                            sender="42", chat_id="42", message_id="7"), "t:42")])
        await Ledger(db).record_llm_call(LLMCallRecord(provider="openai", model="gpt-x", outcome="ok",
                                                       cost_usd=0.25))
    finally:
        await db.close()
    home = board(tmp_path, pg_url)
    assert not list(home.rglob("sabha.db"))
    inbox = run(["inbox", "list"], cwd=home)
    assert inbox.returncode == 0 and "stored on postgres" in inbox.stdout, inbox.stdout + inbox.stderr
    cost = run(["cost"], cwd=home)
    assert cost.returncode == 0 and "0.25" in cost.stdout, cost.stdout + cost.stderr


def test_state_copy_takes_the_transcripts_from_the_data_dir_when_the_db_file_lives_elsewhere(
        tmp_path: Path, pg_url: str) -> None:
    home = board(tmp_path, f"sqlite:///{tmp_path / 'elsewhere' / 'state.db'}")
    asked = run(["ask", "what is our runway?"], cwd=home)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    copied = run(["state", "copy", "--to", pg_url], cwd=home)
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert "transcripts: 1 files -> 3 rows" in copied.stdout, copied.stdout
    config = home / "sabha.yaml"
    config.write_text(config.read_text().replace(f"sqlite:///{tmp_path / 'elsewhere' / 'state.db'}", pg_url))
    shown = run(["sessions", "show", "main"], cwd=home)
    assert "what is our runway?" in shown.stdout, shown.stdout + shown.stderr
