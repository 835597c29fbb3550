"""``sabha state copy --to postgresql://...``: move an existing SQLite board's state into an empty PostgreSQL.

Every table Sabha knows is copied in migration order (the order the tables were made), row for row, with
their ids: an identity column gets the SQLite row's value (a PostgreSQL ``id`` that SQLite kept as its
``rowid`` gets the rowid), and each identity sequence is moved past the highest id copied (``setval``), so
the next row PostgreSQL makes does not collide. Values are converted to the PostgreSQL column's type (asyncpg
takes no text for a BIGINT). Transcripts, JSONL files beside the SQLite file in SQLite mode, become rows of
``transcript_lines`` (each line's text exactly as the file holds it) when the target has that table.
SQLite's full-text index tables (FTS5 virtual tables and their parts) are not copied but named as skipped:
PostgreSQL's triggers index the copied rows as they arrive (triggers stay on during the copy). Tables that
triggers keep from other tables' rows (:data:`KEPT_BY_TRIGGERS`: the predictions' tallies) are named as skipped
too: the target's triggers fill them from the copied rows.

The target is migrated first (its schema is this Sabha's), must hold no row in any table (a copy goes into a
new database, never over a board), and everything is copied in ONE transaction: a copy that fails leaves
the target as empty as it was, and can simply be run again. The source must not be in use: a daemon running
on it is refused (a message arriving mid-copy would be lost to the new state).

``--from`` defaults to the configured state (``state.url``; empty: ``sabha.db`` in the data dir).
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit
from bot.cli.where import config_command

if TYPE_CHECKING:
    from board.storage import Database, Tx
    from board.storage.migrations import Migration
    from bot.config import LoadedConfig

__all__ = ["CopyReport", "add_parsers", "cmd_state", "copy_state"]

#: Rows per INSERT (PostgreSQL takes at most 32767 parameters in one statement).
BATCH_PARAMS = 30000
_CREATE = re.compile(r"CREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[\"`]?(\w+)", re.IGNORECASE)
_INT = ("bigint", "integer", "smallint")
_FLOAT = ("double precision", "real", "numeric")
_STAMP = ("timestamp with time zone", "timestamp without time zone")
TRANSCRIPTS = "transcript_lines"
#: Tables kept by triggers from the rows of others (copying them as well would count every row twice).
KEPT_BY_TRIGGERS = frozenset({"prediction_tallies"})


@dataclass
class CopyReport:
    """What a copy did: rows per table (in copy order), transcripts, and tables left out (with why)."""

    tables: list[tuple[str, int]] = field(default_factory=list)
    transcripts: int = 0
    transcript_lines: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"  {table}: {rows}" for table, rows in self.tables]
        if self.transcripts or self.transcript_lines:
            out.append(f"  transcripts: {self.transcripts} files -> {self.transcript_lines} rows of {TRANSCRIPTS}")
        out += [f"  skipped {table}: {why}" for table, why in self.skipped]
        return out


@dataclass(frozen=True)
class _Column:
    name: str
    type: str
    identity: bool  # an identity or serial column (its sequence is moved past the copied ids)
    generated: bool  # computed by PostgreSQL: never inserted


def _table_order(migrations: list[Migration]) -> list[str]:
    """Table names in the order the migrations (SQLite form) create them."""
    order: list[str] = []
    for migration in sorted(migrations, key=lambda m: (m.number, m.name)):
        for name in _CREATE.findall(migration.sql):
            if name not in order:
                order.append(name)
    return order


_FTS_PARTS = ("_data", "_idx", "_content", "_docsize", "_config")


async def _source_tables(source: Database, order: list[str]) -> tuple[list[str], list[str]]:
    """(the tables to copy in migration order, SQLite's full-text tables and their parts, which are not copied)."""
    rows = await source.fetchall("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                 "'sqlite_%' AND name != 'schema_migrations' ORDER BY rowid")
    virtual = [str(r["name"]) for r in rows if str(r["sql"] or "").upper().startswith("CREATE VIRTUAL TABLE")]
    derived = set(virtual) | {v + part for v in virtual for part in _FTS_PARTS}
    found = [str(r["name"]) for r in rows if str(r["name"]) not in derived]
    known = [t for t in order if t in found]
    return known + [t for t in found if t not in known], [str(r["name"]) for r in rows if str(r["name"]) in derived]


async def _target_columns(target: Tx) -> dict[str, list[_Column]]:
    rows = await target.fetchall(
        "SELECT table_name, column_name, data_type, is_identity, is_generated, column_default "
        "FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position")
    out: dict[str, list[_Column]] = {}
    for r in rows:
        default = str(r["column_default"] or "")
        out.setdefault(str(r["table_name"]), []).append(_Column(
            str(r["column_name"]), str(r["data_type"]), r["is_identity"] == "YES" or default.startswith("nextval("),
            r["is_generated"] == "ALWAYS"))
    return out


async def _nonempty(target: Tx, tables: list[str]) -> list[str]:
    """The target's tables that hold rows (``schema_migrations`` aside)."""
    full = []
    for table in tables:
        if table == "schema_migrations":
            continue
        row = await target.fetchone(f'SELECT COUNT(*) AS n FROM "{table}"')
        if row is not None and int(row["n"]):
            full.append(f"{table} {int(row['n'])} rows")
    return full


def _converted(value: Any, pg_type: str) -> Any:
    """A SQLite value as asyncpg wants it for a column of ``pg_type``."""
    if value is None:
        return None
    if pg_type in _INT:
        return int(value)
    if pg_type in _FLOAT:
        return float(value)
    if pg_type == "boolean":
        return bool(int(value)) if isinstance(value, int | str) else bool(value)
    if pg_type == "bytea":
        return value.encode("utf-8") if isinstance(value, str) else bytes(value)
    if pg_type in _STAMP:
        moment = datetime.fromisoformat(str(value))
        return moment if moment.tzinfo or pg_type.endswith("without time zone") else moment.replace(tzinfo=UTC)
    if pg_type in ("json", "jsonb"):
        return value if isinstance(value, str) else json.dumps(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


async def _source_rows(source: Database, table: str) -> tuple[list[str], list[dict[str, Any]]]:
    """The table's column names and its rows (``__rowid__`` too when it has one), in rowid order."""
    columns = [str(r["name"]) for r in await source.fetchall(f'PRAGMA table_info("{table}")')]
    try:
        rows = await source.fetchall(f'SELECT rowid AS __rowid__, * FROM "{table}" ORDER BY rowid')
    except Exception:  # noqa: BLE001 - a WITHOUT ROWID table
        rows = await source.fetchall(f'SELECT * FROM "{table}"')
    return columns, [{key: r[key] for key in r.keys()} for r in rows]  # noqa: SIM118 - a Row iterates values


async def _copy_table(source: Database, tx: Tx, table: str, target: list[_Column]) -> int:
    """Copy one table's rows; returns how many."""
    names, rows = await _source_rows(source, table)
    plan: list[tuple[_Column, str]] = []  # (target column, source key)
    for column in target:
        if column.generated:
            continue
        if column.name in names:
            plan.append((column, column.name))
        elif column.identity and rows and "__rowid__" in rows[0]:
            plan.append((column, "__rowid__"))  # SQLite's rowid was this table's id
    if not rows or not plan:
        return 0
    cols = ", ".join(f'"{c.name}"' for c, _ in plan)
    overriding = " OVERRIDING SYSTEM VALUE" if any(c.identity for c, _ in plan) else ""
    per_batch = max(1, BATCH_PARAMS // len(plan))
    row_marks = "(" + ", ".join("?" * len(plan)) + ")"
    for at in range(0, len(rows), per_batch):
        batch = rows[at:at + per_batch]
        params = [_converted(row.get(key), column.type) for row in batch for column, key in plan]
        await tx.execute(f'INSERT INTO "{table}" ({cols}){overriding} VALUES ' + ", ".join([row_marks] * len(batch)),
                         params)
    for column, _ in plan:
        if column.identity:
            top = await tx.fetchone(f'SELECT MAX("{column.name}") AS m FROM "{table}"')
            if top is not None and top["m"] is not None:
                await tx.execute("SELECT setval(pg_get_serial_sequence(?, ?), ?)",
                                 (f'"{table}"', column.name, int(top["m"])))
    return len(rows)


def _transcript_files(folder: Path) -> list[Path]:
    """The JSONL transcripts of SQLite mode: ``<session id>.jsonl`` files whose first line is a session header."""
    found = []
    for path in sorted(folder.glob("*.jsonl")):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                head = json.loads(fh.readline() or "null")
        except (OSError, ValueError):
            continue
        if isinstance(head, dict) and head.get("type") == "session":
            found.append(path)
    return found


def _file_lines(path: Path) -> list[str]:
    """The file's lines that hold a JSON object, as text (a torn last line is left out, as a read does)."""
    kept = []
    for raw in path.read_bytes().split(b"\n"):
        text = raw.decode("utf-8", errors="replace")
        try:
            if text.strip() and isinstance(json.loads(text), dict):
                kept.append(text)
        except ValueError:
            continue
    return kept


async def _copy_transcripts(tx: Tx, folder: Path, report: CopyReport) -> None:
    copied = {str(r["session_id"]) for r in await tx.fetchall(f"SELECT DISTINCT session_id FROM {TRANSCRIPTS}")}
    for path in _transcript_files(folder):
        if path.stem in copied:  # the source kept this one as rows already
            continue
        lines = _file_lines(path)
        written = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="milliseconds")
        per_batch = BATCH_PARAMS // 4
        for at in range(0, len(lines), per_batch):
            chunk = lines[at:at + per_batch]
            params = [v for seq, line in enumerate(chunk, start=at) for v in (path.stem, seq, line, written)]
            await tx.execute(f"INSERT INTO {TRANSCRIPTS} (session_id, seq, line, written_at) VALUES "
                             + ", ".join(["(?, ?, ?, ?)"] * len(chunk)), params)
        report.transcripts += 1
        report.transcript_lines += len(lines)


async def copy_state(source: Database, target: Database, *, migrations: list[Migration],
                     transcripts: Path | None) -> CopyReport:
    """Copy ``source`` (SQLite, migrated) into ``target`` (PostgreSQL, migrated, empty) in one transaction;
    ``transcripts``: the folder of SQLite mode's JSONL files (None: none). Raises :class:`UserError` when the
    target is not empty."""
    report = CopyReport()
    async with target.transaction() as tx:
        columns = await _target_columns(tx)
        full = await _nonempty(tx, sorted(columns))
        if full:
            raise UserError(f"the target database is not empty ({', '.join(full[:5])}"
                            f"{' ...' if len(full) > 5 else ''}): copy only into a new, empty database "
                            "(createdb sabha_new), never over a board")
        tables, indexes = await _source_tables(source, _table_order(migrations))
        for table in tables:  # in migration order: a row's foreign keys point at rows copied before it
            if table not in columns:
                report.skipped.append((table, "no such table on PostgreSQL"))
                continue
            if table in KEPT_BY_TRIGGERS:
                report.skipped.append((table, "kept by triggers: PostgreSQL's filled it from the rows copied"))
                continue
            report.tables.append((table, await _copy_table(source, tx, table, columns[table])))
        for table in indexes:  # PostgreSQL's triggers filled its own from the rows copied above
            report.skipped.append((table, "SQLite's full-text index: PostgreSQL indexes the copied rows itself"))
        if transcripts is not None and TRANSCRIPTS in columns:
            await _copy_transcripts(tx, transcripts, report)
        elif transcripts is not None and _transcript_files(transcripts):
            report.skipped.append(("transcripts", f"this Sabha keeps no {TRANSCRIPTS} table: copy the .jsonl files "
                                                  "of the data dir to each replica's data dir"))
    return report


def _daemon_running(data_dir: Path) -> int | None:
    from bot.ops.runtime import read_runtime

    info = read_runtime(data_dir)
    return info.pid if info is not None and info.alive() else None


async def cmd_state(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """``sabha state copy``; see the module docstring."""
    from board.app import BOARD_MIGRATIONS
    from board.storage import Dialect, StorageError, open_database, parse_state_url
    from bot.app import all_migrations

    try:
        source_url = parse_state_url(args.source, data_dir=loaded.data_dir) if args.source else loaded.state_url()
        target_url = parse_state_url(args.to, data_dir=loaded.data_dir)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if source_url.dialect is not Dialect.SQLITE or source_url.path is None:
        raise UserError(f"--from {source_url}: the source must be a SQLite state (sqlite:///path/to/sabha.db)")
    if target_url.dialect is not Dialect.POSTGRES:
        raise UserError(f"--to {target_url}: the target must be a PostgreSQL database (postgresql://user@host/db)")
    if not source_url.path.exists():
        raise UserError(f"no SQLite state at {source_url.path}: nothing to copy (check --from or data_dir)")
    # The transcripts (and the running daemon's pid file) are in the data dir, which need not hold the db file.
    data_dir = source_url.path.parent if args.source else loaded.data_dir
    for folder in dict.fromkeys((loaded.data_dir, data_dir, source_url.path.parent)):
        pid = _daemon_running(folder)
        if pid is not None:
            raise UserError(f"sabha run (pid {pid}) is using {source_url.path}: stop it first, so that nothing "
                            "arrives while the state is copied")
    migrations = [*BOARD_MIGRATIONS, *all_migrations()]
    emit(f"copying {source_url} into {target_url} ...")
    try:
        async with await open_database(source_url, migrations) as source, \
                await open_database(target_url, migrations, pool_size=2) as target:
            report = await copy_state(source, target, migrations=migrations, transcripts=data_dir)
    except StorageError as exc:
        raise UserError(f"cannot copy: {exc}") from exc
    for line in report.lines():
        emit(line)
    emit(f"copied {sum(n for _, n in report.tables)} rows in {len(report.tables)} tables"
         + (f" and {report.transcripts} transcripts" if report.transcripts else "")
         + f" into {target_url}. Next: set state.url: {target_url} in the config (password in $SABHA_DB_PASSWORD) "
         "and start `sabha run`.")
    return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``state copy``."""
    p = sub.add_parser("state", parents=[common], help="the state store: copy a SQLite board into PostgreSQL",
                       description="Where Sabha keeps its state (state.url).")
    ssub = p.add_subparsers(dest="state_command", metavar="ACTION", required=True)
    cp = ssub.add_parser("copy", parents=[common], help="copy this board's SQLite state into an empty PostgreSQL",
                         description="Copy every table (ids kept) and the transcripts of a SQLite state into an "
                                     "EMPTY PostgreSQL database, in one transaction; prints rows per table. Stop "
                                     "`sabha run` first. The password comes from $SABHA_DB_PASSWORD or $PGPASSWORD.")
    cp.add_argument("--to", required=True, metavar="URL", help="postgresql://user@host:5432/dbname (empty database)")
    cp.add_argument("--from", dest="source", metavar="URL",
                    help="sqlite:///path/to/sabha.db (default: the configured state.url or data_dir/sabha.db)")
    p.set_defaults(handler=config_command(cmd_state, writes=False))
