"""Make ``state_db_v0_1.sql.gz`` (and the transcripts beside it) with the PREVIOUS version.

Not a test, and not run by the suite: it records how the fixture of ``tests/board/storage/test_db_upgrade.py``
was made. It must run against the code of commit ec16d0d (before the house restructure), e.g.

    git worktree add /tmp/before ec16d0d
    PYTHONPATH=/tmp/before .venv/bin/python tests/data/make_state_db_v0_1.py tests/data

It uses that version's own code paths: ``Board.open``, two console turns through the offline
model (a session, its transcript, ``llm_calls`` rows), a board meeting run to its end (what
``sabha meeting`` does), a Telegram topic mapping, and Telegram inbox rows in several
statuses, including an unfinished ``received`` one that carries its envelope. The state db is
saved as a gzipped SQL text dump (``iterdump``; gzipped so the fixture is stored as data, not
read as a second copy of the migrations' SQL); transcripts are copied under ``state_db_v0_1/``.
"""

from __future__ import annotations

import asyncio
import gzip
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from bot.channels.inbox import Inbox
from bot.channels.telegram_topics import TopicStore

from board.app import Board, BoardSettings
from board.envelope import Envelope, Reply
from board.roles import RosterSpec
from board.workspace import copy_default_workspace

FORUM = -1001234567890
DUMP = "state_db_v0_1.sql.gz"


async def make(root: Path) -> None:
    workspace, data_dir = root / "workspace", root / "sessions"
    copy_default_workspace(workspace)
    board = await Board.open(BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec()))
    try:
        for text in ("What is our runway?", "And if we hire two engineers?"):
            reply = await board.handle(Envelope(channel="console", text=text, sender="owner", sender_name="Owner"))
            assert reply.kind != "error", reply
        place = Envelope(channel="console", chat_id="cli-meeting", text="", sender="owner", sender_name="owner")
        result = await board.parts.room.prepare("Should we expand to Europe?", envelope=place).run()
        assert result.stop_reason.value in ("completed", "converged"), result.stop_reason

        topics = TopicStore(board.parts.db)
        await topics.save(FORUM, "finance", 42, "💰 Finance")
        await topics.save(FORUM, "research", 43, "🔬 Research")

        inbox = Inbox(board.parts.db, "telegram")

        def envelope(message_id: int, text: str) -> Envelope:
            return Envelope(channel="telegram", text=text, sender="1001", sender_name="Owner", chat_id="1001",
                            message_id=str(message_id), is_owner=True)

        def reply(text: str, message_id: int) -> Reply:
            return Reply(role="general", name="General", emoji="🧭", text=text, channel="telegram",
                         chat_id="1001", reply_to=str(message_id), session_key="main")

        await inbox.claim("1001", "10", envelope(10, "hello"))
        await inbox.sending("1001", "10", reply("Hi there", 10))
        await inbox.done("1001", "10")  # answered
        await inbox.claim("1001", "11", envelope(11, "draft a memo"))
        await inbox.sending("1001", "11", reply("A memo", 11))
        await inbox.unsent("1001", "11")  # replied: stored reply, delivery never started
        await inbox.claim("2002", "12")
        await inbox.done("2002", "12", "denied")
        await inbox.claim("1001", "13", envelope(13, "what did finance say?"))  # received: unfinished
    finally:
        await board.close()


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        asyncio.run(make(root))
        conn = sqlite3.connect(root / "sessions" / "sabha.db")
        try:
            dump = "\n".join(conn.iterdump()) + "\n"
        finally:
            conn.close()
        (out / DUMP).write_bytes(gzip.compress(dump.encode("utf-8"), mtime=0))  # mtime=0: the same dump, the same bytes
        transcripts = out / "state_db_v0_1"
        shutil.rmtree(transcripts, ignore_errors=True)
        transcripts.mkdir(parents=True)
        for path in sorted((root / "sessions").iterdir()):
            if path.suffix == ".jsonl":
                shutil.copy2(path, transcripts / path.name)
    print(f"wrote {out / DUMP} and {len(list(transcripts.iterdir()))} transcript(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
