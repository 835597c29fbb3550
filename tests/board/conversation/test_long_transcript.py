"""A session with a million-line transcript: opening it and answering in it read only its tail.

DESIGN: reads of recent history must not cost O(file size) per turn; nor may opening a session
(resume after a restart, the header, the compaction record and its first kept entry). Checked by
the bytes this process reads (``rchar`` in /proc/self/io) while a fresh board opens the session and
answers in it, never by timing: they must stay far below the file's size.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from board.app import Board, BoardSettings
from board.envelope import Envelope
from bot.app import all_migrations

LINES = 1_000_000
IO = Path("/proc/self/io")

pytestmark = pytest.mark.skipif(not IO.exists(), reason="needs /proc/self/io (Linux)")


def bytes_read() -> int:
    fields = dict(line.split(": ") for line in IO.read_text().splitlines())
    return int(fields["rchar"])


def ask(text: str) -> Envelope:
    return Envelope(channel="console", text=text, sender="owner", is_owner=True)


def grow(path: Path, lines: int) -> None:
    """``lines`` history lines in the middle of the file, then a compaction record naming the first kept
    entry (far back) and a few messages after it, as a long-lived session has them."""
    with open(path, "ab") as fh:
        for start in range(0, lines, 50_000):
            fh.write("".join(f'{{"type":"message","role":"{"user" if i % 2 == 0 else "assistant"}","id":"m{i}",'
                             f'"text":"old message {i}"}}\n'
                             for i in range(start, min(lines, start + 50_000))).encode())
        compaction = {"type": "compaction", "summary": "We talked about the runway for a long time.",
                      "first_kept": f"m{lines - 4}", "kept_messages": 4}
        fh.write(json.dumps(compaction).encode() + b"\n")


async def test_a_million_line_session_is_opened_and_answered_from_its_tail(settings: BoardSettings) -> None:
    async with await Board.open(settings, migrations=all_migrations()) as board:
        await board.handle(ask("start"))
        ref = await board.parts.sessions.current("main")
        assert ref is not None
        path = board.parts.transcripts.path_for(ref.session_id)
    grow(path, LINES)
    size = path.stat().st_size
    assert size > 40_000_000

    before = bytes_read()
    async with await Board.open(settings, migrations=all_migrations()) as fresh:  # as after a restart
        first = await fresh.handle(ask("where were we?"))
        second = await fresh.handle(ask("and then?"))
    read = bytes_read() - before
    assert first.kind == "answer" and second.kind == "answer"
    assert read < size / 20, f"read {read} bytes of a {size}-byte transcript"
    tail = path.read_bytes()[-4000:].decode()
    assert "where were we?" in tail and "and then?" in tail
