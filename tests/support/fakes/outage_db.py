"""A state store that is out for chosen statements: wraps a real :class:`Database` and raises a retryable
:class:`StorageError` (what either backend raises when its server or disk goes away) for every statement
``failing(sql)`` picks, while it is armed. The moment of an outage, pinned down, without stopping a server."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from board.storage import Database, StorageError
from board.storage.database import Params, Row, Statement, Work

T = TypeVar("T")

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

    async def unit(self, work: Statement | Work[Any], *, urgent: bool = False) -> Any:
        if isinstance(work, tuple):
            self._check(work[0])
            return await self.db.unit(work, urgent=urgent)
        return await self.db.unit(self._checked(work), urgent=urgent)

    def _checked(self, work: Work[T]) -> Work[T]:
        """``work``, each statement checked before it runs (an outage raises out of the unit: rolled back)."""
        try:
            statement = next(work)
            while True:
                self._check(statement[0])
                statement = work.send((yield statement))
        except StopIteration as done:
            result: T = done.value
            return result

    async def ping(self) -> None:
        await self.db.ping()

    async def close(self) -> None:
        await self.db.close()

    async def __aenter__(self) -> OutageDatabase:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
