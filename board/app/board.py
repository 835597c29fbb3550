"""The board as one object with a life: open, watch, warm up, answer, close (:class:`Board`).

:meth:`Board.open` opens the state db (the board's migrations plus the daemon's) and builds every part
in the wiring closet (:func:`board.app.build.build_parts`); the parts are on :attr:`Board.parts`, and
consumers take the ones they use. :meth:`Board.handle` is the one entry into the front door
(:func:`board.answer.answer`): messages to the same session are answered one at a time and in order,
different sessions concurrently; before a message that would call a model the budget's daily limits
may stop it, and a stranger's message is held to the channel's public terms (:mod:`board.answer.money`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from board.answer import answer
from board.answer.after import after
from board.app.build import build_parts
from board.app.parts import Observers, Parts
from board.app.settings import BOARD_MIGRATIONS, BoardSettings
from board.clock import SYSTEM_CLOCK, Clock
from board.db import Migration
from board.envelope import Envelope, Reply
from board.llm.registry import ProviderRegistry
from board.llm.stream import StreamSink
from board.media.understand import MediaFetcher
from board.routing.router import Route
from board.storage import Database, open_database

__all__ = ["Board"]

log = logging.getLogger("sabha.board")

#: how long closing the board waits for ended meetings' bookkeeping (records, the review scheduled); what is left is
#: done at the next start (board.room.convene.BoardRoom.bookkeep_left)
BOOKS_GRACE_S = 10.0


class Board:
    """The channel-agnostic board; build it with :meth:`open`."""

    def __init__(self, settings: BoardSettings, db: Database, providers: ProviderRegistry, *,
                 clock: Clock = SYSTEM_CLOCK, observers: Observers | None = None) -> None:
        #: as configured now (a reload replaces it: the agent's models, the budget)
        self.settings = settings
        self.parts: Parts = build_parts(settings, db, providers, clock=clock, observers=observers or Observers())

    @classmethod
    async def open(cls, settings: BoardSettings, providers: ProviderRegistry | None = None, *,
                   migrations: Iterable[Migration] = (), clock: Clock = SYSTEM_CLOCK,
                   observers: Observers | None = None) -> Board:
        """Open the state db under ``data_dir`` (the board's migrations plus ``migrations``,
        the tables of the daemon's intake and channels) and build the board on ``clock``, its
        ``observers`` told from the first call on."""
        if not settings.workspace.is_dir():
            raise FileNotFoundError(
                f"workspace {settings.workspace} does not exist; run `sabha init` to create one"
            )
        if settings.data_dir.exists() and not settings.data_dir.is_dir():
            raise FileNotFoundError(
                f"data_dir {settings.data_dir} is a file, not a folder; point data_dir at a folder for transcripts"
            )
        db = await open_database(settings.state_url(), (*BOARD_MIGRATIONS, *migrations),
                                 pool_size=settings.state_pool_size)
        try:
            board = cls(settings, db, providers or ProviderRegistry(), clock=clock, observers=observers)
        except BaseException:
            await db.close()
            raise
        knowledge = board.parts.knowledge
        if knowledge is not None:
            try:  # index what changed since the last run, so the first search finds it
                await knowledge.sync()
            except Exception:  # the watcher and later searches try again
                log.exception("knowledge: indexing %s failed", knowledge.folder)
        return board

    def warm_up(self) -> asyncio.Future[list[str]]:
        """Build the providers of every model the board may call (the default, the fallbacks,
        the cheap model, each soul's own) in the background, their SDKs imported off the event
        loop, so neither the start nor the first answer waits for one on the loop (a message
        that comes first waits in :meth:`handle`); the result: the models that cannot be used,
        one line each."""
        return self.parts.providers.warm(self.parts.rosters.configured_models())

    async def close(self) -> None:
        """Stop running meetings (recorded as cancelled) and the MCP servers; close the model clients, the db."""
        parts = self.parts
        await parts.room.finish_books(BOOKS_GRACE_S)  # ended meetings' bookkeeping (what is cut short: next start)
        await parts.room.drain(timeout=0)
        await parts.mcp.close()  # the MCP servers' processes end with the board
        if parts.memory_writer is not None:  # facts still being heard: a few seconds to finish, then abandoned
            await parts.memory_writer.drain()
        await parts.providers.close()
        if parts.web_search is not None:
            await parts.web_search.close()
        if parts.knowledge is not None:
            parts.knowledge.close()
        if parts.recall_vectors is not None:
            await parts.recall_vectors.close()
        await parts.transcripts.flush()  # rows still queued (PostgreSQL) before the pool goes
        await parts.db.close()

    async def watch(self, stop: asyncio.Event) -> None:
        """Apply edits of soul files, re-index knowledge documents as they are saved and index what was said for
        recall (and embed it, when recall by meaning is on), until ``stop``."""
        knowledge = self.parts.knowledge
        vectors = self.parts.recall_vectors
        await asyncio.gather(self.parts.souls.watch(stop), self.parts.recall_indexer.watch(stop),
                             *([knowledge.watch(stop)] if knowledge else []),
                             *([vectors.watch(stop)] if vectors else []))

    async def __aenter__(self) -> Board:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def handle(self, envelope: Envelope, *, route: Route | None = None,
                     fetcher: MediaFetcher | None = None, sink: StreamSink | None = None,
                     spoken: bool = False, received_clean: bool = False, read_files: bool = False) -> Reply:
        """Answer one message through the front door (:func:`board.answer.answer`); never raises for
        bad input, the reply says what went wrong and what to do."""
        await self.parts.providers.settled()  # a model SDK still loading in the background
        return await answer(envelope, self.parts.door, fetcher=fetcher, sink=sink, route=route, spoken=spoken,
                            received_clean=received_clean, read_files=read_files)

    async def after(self, envelope: Envelope, reply: Reply) -> None:
        """The work an answer leaves once it is delivered (:func:`board.answer.after.after`: the history compacted
        ahead of the next turn); the caller still holds the conversation. Never raises."""
        await after(envelope, reply, self.parts.door)
