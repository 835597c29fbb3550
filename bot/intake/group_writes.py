"""Group commit for the answering side's bookkeeping: the small writes each message's life makes after its claim
(its attempt counted, its reply stored, "sending", how it ended; a channel's record of what it sent), committed
together with the others issued meanwhile instead of one transaction each.

In a busy conversation set (32 turns at once) these come in waves: every turn that ends stores its reply, marks it
"sending", records its outcome. One statement each on the main connection cost a hand-off to its thread and a
commit apiece, on the event loop's CPU, which is what answering a burst is short of. :class:`GroupWrites` queues
each statement with a future; one task writes what is queued as one unit of work
(:meth:`board.storage.Database.unit`: on SQLite one step on the express connection, behind the webhooks' urgent
claims), then the next batch. Each caller still waits for its own commit: a write is durable when its ``await``
returns, as before (the "sending" mark is stored before the request leaves). A statement that fails fails alone:
when a batch raises, its statements are run again one by one, so each caller gets its own result or error.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from board.storage import Database, Row, Statement, Work
from board.storage.database import Params

__all__ = ["GroupWrites"]

log = logging.getLogger("sabha.intake")

_Queued = tuple[Statement, "asyncio.Future[list[Row]]"]


class GroupWrites:
    """See the module docstring. ``writes`` counts the statements, ``units`` the transactions they took."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._queue: list[_Queued] = []
        self._writer: asyncio.Task[None] | None = None
        self.writes = 0
        self.units = 0

    async def run(self, sql: str, params: Params = ()) -> list[Row]:
        """Run one statement, committed with the others queued meanwhile; its rows (``RETURNING``). Raises the
        statement's own error (the layer's: :class:`board.storage.StorageError`, ...). A caller cancelled while it
        waits leaves its statement to be written (as a statement handed to a driver's thread is)."""
        done: asyncio.Future[list[Row]] = asyncio.get_running_loop().create_future()
        self._queue.append(((sql, tuple(params)), done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write(), name="intake bookkeeping")
        return await done

    async def _write(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            self.writes += len(batch)
            try:
                if len(batch) == 1:
                    _settle(batch, [await self._one(batch[0][0])])
                    continue
                self.units += 1
                rows = await self.db.unit(_each([statement for statement, _ in batch]))
            except asyncio.CancelledError:
                for _, done in batch:
                    done.cancel()
                raise
            except Exception as exc:  # noqa: BLE001 - handed to the callers below
                if len(batch) == 1:
                    _fail(batch[0][1], exc)
                    continue
                log.debug("bookkeeping: a unit of %d writes failed (%s); each is written alone", len(batch), exc)
                await self._alone(batch)
                continue
            _settle(batch, rows)

    async def _one(self, statement: Statement) -> list[Row]:
        self.units += 1
        return await self.db.unit(statement)

    async def _alone(self, batch: list[_Queued]) -> None:
        for statement, done in batch:
            try:
                rows = await self._one(statement)
            except asyncio.CancelledError:
                for _, waiting in batch:
                    waiting.cancel()
                raise
            except Exception as exc:  # noqa: BLE001 - the caller's own error
                _fail(done, exc)
            else:
                if not done.done():
                    done.set_result(rows)


def _each(statements: Sequence[Statement]) -> Work[list[list[Row]]]:
    results: list[list[Row]] = []
    for statement in statements:
        results.append((yield statement))
    return results


def _settle(batch: list[_Queued], rows: list[list[Row]]) -> None:
    for (_, done), got in zip(batch, rows, strict=True):
        if not done.done():
            done.set_result(got)


def _fail(done: asyncio.Future[list[Row]], exc: BaseException) -> None:
    if not done.done():
        done.set_exception(exc)
