"""The storage protocols: :class:`Database` (a backend as the stores see it), :class:`Tx` (one unit of
work inside it), :class:`Dialect` and :class:`StorageError`.

Stores write their SQL once, with ``?`` placeholders; a backend runs it in its own form
(:mod:`board.storage.sql`). Rows come back as read-only mappings of column name to value, so no driver
type (``sqlite3.Row``, ``asyncpg.Record``) crosses the protocol.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from contextlib import AbstractAsyncContextManager
from enum import StrEnum
from typing import Any, Protocol, TypeVar, overload

__all__ = ["Database", "Dialect", "DuplicateKey", "Params", "Row", "Statement", "StorageError", "Tx", "Work", "drive"]

Params = Sequence[Any]
T = TypeVar("T")

#: One SQL statement (``?`` placeholders) and its parameters.
Statement = tuple[str, Params]


class Row(Protocol):
    """One row as a backend returns it (``sqlite3.Row``, ``asyncpg.Record``): read by column name
    (``row["id"]``, the house style) or position; ``dict(row)`` copies it."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def keys(self) -> Any: ...

    def __len__(self) -> int: ...


class Dialect(StrEnum):
    """Which SQL a backend speaks."""

    SQLITE = "sqlite"
    POSTGRES = "postgres"


class StorageError(Exception):
    """The storage backend could not do what it was asked: unreachable, refused, out of space.

    ``str()`` says what happened in one line without a secret; ``retryable`` is True when the same
    request may succeed later (the server is restarting, a connection dropped), which the intake reads
    as a storage outage (webhooks answer 503 so senders retry) rather than a bug.
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class DuplicateKey(StorageError):
    """An insert or update broke a unique key (the row is there already); a store decides what that means."""


#: A unit of work written once for every backend (:meth:`Database.unit`): a generator that yields each statement in
#: turn and is sent that statement's rows back (an empty list for a statement that returns none); what it returns
#: is the unit's result. It must touch nothing but its own arguments: on SQLite it runs in another thread.
Work = Generator[Statement, list["Row"], T]


class Tx(Protocol):
    """One transaction: every statement commits together when the ``transaction()`` block ends,
    and none does when it raises."""

    async def execute(self, sql: str, params: Params = ()) -> None: ...

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]: ...

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None: ...


class Database(Tx, Protocol):
    """A storage backend: statements outside a transaction commit one by one."""

    dialect: Dialect

    def transaction(self) -> AbstractAsyncContextManager[Tx]:
        """A unit of work: commit on a normal exit, roll back when the block raises."""
        ...

    @overload
    async def unit(self, work: Statement, *, urgent: bool = False) -> list[Row]: ...

    @overload
    async def unit(self, work: Work[T], *, urgent: bool = False) -> T: ...

    async def unit(self, work: Statement | Work[T], *, urgent: bool = False) -> list[Row] | T:
        """Run ``work``'s statements as one transaction (all commit, or none when one fails) and return its result;
        ``work`` may be one :data:`Statement` (then its rows are the result).

        Where a write is waited for (a webhook's claim, acknowledged once it is stored; a post marked before its
        first byte leaves), this is the fast way to make it: on SQLite the whole unit is one step on the express
        connection's thread (no statement waits for a busy event loop between two others, and SQLite's write
        lock is not held across loop turns); ``urgent`` work goes there before the units already waiting
        (:class:`board.storage.sqlite.UnitLock`). On PostgreSQL it is a transaction on one pooled connection (one
        :data:`Statement`: that statement alone). Errors are the layer's (:class:`StorageError`,
        :class:`DuplicateKey`), raised from the driver's own."""
        ...

    async def ping(self) -> None:
        """Raise :class:`StorageError` unless the backend answers now (``/readyz``)."""
        ...

    async def close(self) -> None: ...

    async def __aenter__(self) -> Database: ...

    async def __aexit__(self, *exc: object) -> None: ...


async def drive(work: Work[T], tx: Tx) -> T:
    """Run ``work`` on the open transaction ``tx``: each statement it yields, in turn, sent back its rows; its
    result. How a backend whose statements are awaited one by one (PostgreSQL) runs :meth:`Database.unit`, and how
    a store that wraps another's transaction runs a unit inside its own."""
    try:
        sql, params = next(work)
        while True:
            sql, params = work.send(await tx.fetchall(sql, params))
    except StopIteration as done:
        result: T = done.value
        return result
