"""What the quota check costs before each download, at many kept attachments (SQLite).

Fills a fresh state db with ``--rows`` kept attachment records from ``--senders`` strangers (recorded
within ``media.keep_days``), then times :func:`board.media.quota.room_for` for one stranger (their own
quota, all strangers', and the total), and, beside it, one sum of every row's kept text
(``MediaStore.kept_text``: what the total quota would cost per download without the running figure).
Prints medians over ``--rounds``.

Usage: ``.venv/bin/python benchmarks/media_quota_check.py [--rows 50000] [--senders 500] [--rounds 30]``;
``--repo PATH`` runs another checkout's code (e.g. main's, to compare; it has no kept-text sum).
It prints figures; it does not assert on time.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["main"]


async def fill(db: Any, rows: int, senders: int, with_text: bool) -> None:
    """``rows`` kept attachments (1 KB each, 2 KB of text when the column exists) from ``senders`` strangers."""
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    cols = "channel, chat_id, message_id, sender, ord, kind, size, blob, created_at, from_stranger, stored_bytes"
    values: list[tuple[Any, ...]] = []
    for i in range(rows):
        sender = f"9190000{i % senders:05d}"
        values.append(("whatsapp", sender, f"wamid.{i}", sender, 0, "document", 1024, f"{i:064x}", now, 1, 1024))
    if with_text:
        cols += ", text_bytes"
        values = [(*v, 2048) for v in values]
    marks = ", ".join("?" * len(values[0]))
    async with db.transaction() as tx:
        for v in values:
            await tx.execute(f"INSERT INTO message_attachments ({cols}) VALUES ({marks})", v)


async def median_ms(call: Callable[[], Awaitable[object]], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def run(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(args.repo))
    from board.app.settings import BOARD_MIGRATIONS
    from board.envelope import Envelope
    from board.media.blobs import BlobStore
    from board.media.quota import room_for
    from board.media.settings import MediaSettings
    from board.media.store import MediaStore
    from board.storage import open_database, parse_state_url

    with tempfile.TemporaryDirectory() as tmp:
        db = await open_database(parse_state_url("sqlite:///state.db", data_dir=Path(tmp)), BOARD_MIGRATIONS)
        try:
            store = MediaStore(db)
            with_text = hasattr(store, "kept_text")
            await fill(db, args.rows, args.senders, with_text)
            blobs, settings = BlobStore(Path(tmp) / "media"), MediaSettings()
            stranger = Envelope(channel="whatsapp", text="", sender="919000000007", is_public=True)
            room = await room_for(stranger, settings, store, blobs)
            check = await median_ms(lambda: room_for(stranger, settings, store, blobs), args.rounds)
            print(f"{args.repo}: {args.rows} rows; room_for (one stranger) median {check:.2f} ms; "
                  f"binding quota {room.quota.value}, used {room.used:,} bytes")
            if with_text:  # this branch: a person linked across two channels (main counts per account)
                from dataclasses import replace

                from board.people import People, PersonRef
                await People(db).link("whatsapp:919000000007", "telegram:4242")
                linked = replace(stranger, person=PersonRef(1))
                both = await median_ms(lambda: room_for(linked, settings, store, blobs), args.rounds)
                print(f"  room_for (the same stranger linked to a Telegram account) median {both:.2f} ms")
                whole = await median_ms(lambda: store.kept_text("1970-01-01"), args.rounds)
                print(f"  one sum of every row's kept text (what a per-download sum would cost): {whole:.2f} ms")
        finally:
            await db.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--senders", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    asyncio.run(run(parser.parse_args()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
