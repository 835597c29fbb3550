"""A reply Telegram posted while its outcome could not be recorded (the state db not writable: a full disk, or
as here another process holding it, SQLite's "database is locked"; a full disk made with PRAGMA max_page_count
still let the in-place status update through) is not sent again once the db can be written (review of the
delivery work, finding 4): before, the row stayed 'sending' and the dispatcher's next look sent it once more,
marked, in the same process. Real daemon in process, real PTB against the fake Bot API holding the reply's
request while the db is held."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.intake.inbox import Inbox
from tests.support.fakes.echo_model import EchoModel
from tests.support.kill import MARK, HoldingTelegramAPI, wait_for
from tests.support.telegram import OWNER, TOKEN, eventually


@pytest.fixture
async def fake() -> AsyncIterator[HoldingTelegramAPI]:  # daemon_for's Bot API: one that can hold sendMessage
    async with HoldingTelegramAPI(token=TOKEN) as server:
        yield server


async def test_a_reply_posted_while_its_outcome_could_not_be_stored_is_not_sent_again(
        daemon_for: Any, fake: HoldingTelegramAPI, tmp_path: Path) -> None:
    async with EchoModel(latency=0.0) as model:
        daemon = await daemon_for(model)
        board = daemon.board
        inbox = Inbox(board.parts.db, "telegram")
        fake.hold("sendMessage")
        first = fake.push_text(OWNER, OWNER, "Q001 answered while the db is held", is_forum=False, chat_type="private")
        await wait_for(lambda: fake.waiting("sendMessage") == 1, "the reply's request on the wire")
        first_id = str(first["message"]["message_id"])
        assert await inbox.status(str(OWNER), first_id) == "sending"
        # the state db cannot be written (another process holds it, as a full disk would refuse it)
        blocker = sqlite3.connect(tmp_path / "sessions" / "sabha.db", isolation_level=None, timeout=30)
        try:
            blocker.execute("BEGIN EXCLUSIVE")
            fake.release("sendMessage", post=True)  # Telegram posts it; recording that fails
            await wait_for(lambda: any("Q001" in m.text for m in fake.sent_messages), "the reply posted")
            await wait_for(lambda: not daemon.hub.storage.ok, "recording the reply's outcome failing")
            blocker.execute("ROLLBACK")  # it can be written again
        finally:
            blocker.close()

        async def recorded() -> bool:
            return await inbox.status(str(OWNER), first_id) not in ("sending", "replied")

        await eventually(recorded, "the reply's outcome recorded", timeout=60)
        fake.push_text(OWNER, OWNER, "Q002 a marker", is_forum=False, chat_type="private")
        await wait_for(lambda: any("Q002" in m.text for m in fake.sent_messages), "the marker answered", 60)
        copies = [m.text for m in fake.sent_messages if "Q001" in m.text]
        assert len(copies) == 1 and MARK not in copies[0], copies
        assert await inbox.status(str(OWNER), first_id) == "answered"
