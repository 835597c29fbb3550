"""A meeting post's "sending" mark (bot.channels.meeting_posts) is the write its request waits for before its first
byte leaves: on SQLite it is taken on the express connection ahead of the units queued there (like the intake's
claim), never behind the main connection's statements (the decision's items dated, the end's bookkeeping). A real
state db, the real MeetingPosts (meet47: the decision's message waited 3-22 ms for it at a meeting's end)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from board.app import BOARD_MIGRATIONS
from board.storage.sqlite import StateDB
from bot.app import all_migrations
from bot.channels.meeting_posts import MeetingPosts, PostMark

#: bounds a wait that only a regression makes long (the mark queued behind a held statement), never met otherwise
HELD_AT_MOST_S = 30.0


async def test_the_sending_mark_waits_for_the_unit_running_not_for_the_main_connection_nor_the_queue(
        tmp_path: Path) -> None:
    db = await StateDB.open(tmp_path / "sabha.db", [*BOARD_MIGRATIONS, *all_migrations()])
    main_held = threading.Event()
    let_main_go = threading.Event()

    def hold() -> int:  # a statement on the main connection that takes as long as the test says
        main_held.set()
        let_main_go.wait(HELD_AT_MOST_S)
        return 1

    try:
        posts = MeetingPosts(db, "telegram")
        await db.conn.create_function("hold_main", 0, hold)
        busy_main = asyncio.create_task(db.fetchone("SELECT hold_main()"))
        assert await asyncio.to_thread(main_held.wait, HELD_AT_MOST_S)
        order: list[str] = []
        running = asyncio.Event()
        release = asyncio.Event()

        async def background(name: str, held: bool = False) -> None:
            async with db.transaction() as tx:  # e.g. a round's statements, the recall index
                order.append(name)
                await tx.execute("SELECT 1")
                if held:
                    running.set()
                    await release.wait()

        first = asyncio.create_task(background("running", held=True))
        await running.wait()
        queued = [asyncio.create_task(background(f"queued {n}")) for n in range(3)]
        await asyncio.sleep(0)  # they wait for the express connection now

        async def mark() -> None:
            await posts.sending("m-1", -100123, "decision")
            order.append("mark")

        marking = asyncio.create_task(mark())
        await asyncio.sleep(0)
        release.set()
        done, _ = await asyncio.wait([marking], timeout=HELD_AT_MOST_S)
        marked_while_main_held = bool(done) and not busy_main.done()
        let_main_go.set()
        await asyncio.gather(busy_main, first, *queued, marking)
        assert marked_while_main_held, "the mark waited for the main connection's statement"
        assert order[:2] == ["running", "mark"], f"the mark waited for the queue: {order}"
        assert (await posts.of("m-1", -100123))["decision"].mark is PostMark.SENDING
    finally:
        let_main_go.set()
        await db.close()
