"""A state store that is out for chosen statements: wraps a real :class:`Database` and raises a retryable
:class:`StorageError` (what either backend raises when its server or disk goes away) for every statement
``failing(sql)`` picks, while it is armed. The moment of an outage, pinned down, without stopping a server."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from board.storage import Database, StorageError
from board.storage.database import Params, Row

__all__ = ["OutageDatabase"]


class OutageDatabase:
    """``db``, out for the statements ``failing`` picks while :attr:`armed`."""

    def __init__(self, db: Database, failing: Callable[[str], bool]) -> None:
        self.db = db
        self.dialect = db.dialect
        self.failing = failing
        self.armed = False
        self.failed: list[str] = []

    def _check(self, sql: str) -> None:
        if self.armed and self.failing(sql):
            self.failed.append(sql)
            raise StorageError("the state store is not available (a test's outage)", retryable=True)

    async def execute(self, sql: str, params: Params = ()) -> None:
        self._check(sql)
        await self.db.execute(sql, params)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        self._check(sql)
        return await self.db.fetchall(sql, params)

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        self._check(sql)
        return await self.db.fetchone(sql, params)

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Any]:
        async with self.db.transaction() as tx:
            yield tx

    async def ping(self) -> None:
        await self.db.ping()

    async def close(self) -> None:
        await self.db.close()

    async def __aenter__(self) -> OutageDatabase:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
