"""A Discord meeting's thread across ``kill -9``: a real ``sabha run`` on the fake Discord (slow to take messages),
the model that holds a real meeting (tests/support/meeting_model.py) held at round 2, so that when Sabha is killed
round 1's statements are stored and not all posted (one may be on its way). After the restart the meeting (resumed
by the meeting package) goes on in the same thread: every statement is there, in the order the meeting stored
them, none posted twice unmarked; one whose request had left when Sabha was killed may come once more under the
possibly-repeated line, never a third time; one decision, one set of minutes, one pointer, one thread."""

from __future__ import annotations

import signal
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.intake.courier import ChannelTexts
from tests.support.daemon import SabhaProcess
from tests.support.discord import FINANCE, OWNER, env, places, write_config
from tests.support.fakes.discord_api import SentMessage
from tests.support.fakes.discord_interactions import FakeDiscordMore
from tests.support.meeting_model import MeetingModel, statement_marker

SPECIALISTS = ("research", "content", "finance", "strategy", "critic")
ROUNDS = 2
TOPIC = "Should we open a Pune office?"
MEETINGS = ["board:", "  meetings:", f"    max_turns_per_agent: {ROUNDS}", "    agent_timeout_s: 600",
            "    max_duration_s: 3600", "    budget_usd: 100"]
AGAIN = ChannelTexts().possibly_repeated.split(":")[0]  # "↻ Sent again"
SLOW_DISCORD_S = 0.7  # each message post: the meeting's posts fall behind its statements


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscordMore]:
    async with FakeDiscordMore() as server:
        yield places(server)  # type: ignore[misc]


def rows(root: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(root / "sessions" / "sabha.db") as db:
        return db.execute(sql, params).fetchall()


def statements_in(fake: FakeDiscordMore, thread: str) -> list[SentMessage]:
    return [m for m in fake.in_channel(thread) if "board meeting, round" in m.content]


async def test_a_meeting_killed_goes_on_in_its_thread_nothing_posted_twice_nothing_missing(
        tmp_path: Path, fake: FakeDiscordMore) -> None:
    async with MeetingModel() as model:
        config = write_config(tmp_path, fake, model.base_url, extra=MEETINGS)
        first, second = SabhaProcess(config, env=env()), SabhaProcess(config, env=env())
        try:
            await first.start()
            await first.wait_for_log(r"discord: slash commands .* registered")
            await fake.wait_for(lambda: fake.connected, "the gateway session")
            await first.wait_for_log(r"discord: connected to the gateway")
            model.hold("round 2")
            fake.post_delay_s = SLOW_DISCORD_S
            fake.slash(FINANCE, OWNER, "meeting", {"topic": TOPIC}, name="Ada")
            await model.wait_for("round 2 held", lambda: len(model.waiting) == len(SPECIALISTS))
            [(meeting_id,)] = rows(tmp_path, "SELECT id FROM meetings")
            assert len(rows(tmp_path, "SELECT 1 FROM meeting_statements WHERE round = 1")) == len(SPECIALISTS)
            await fake.wait_for(lambda: len(fake.opened_threads) == 1, "the meeting's thread")
            [thread] = fake.opened_threads
            # killed only once the thread is recorded (killed before, Sabha could not know it and would open another)
            await fake.wait_for(lambda: rows(tmp_path, "SELECT 1 FROM meeting_posts WHERE item = 'thread' AND "
                                                       "status = 'sent'") != [], "the thread recorded")
            # at least one statement posted and durably marked so (the restart must not post it again) ...
            await fake.wait_for(lambda: rows(tmp_path, "SELECT 1 FROM meeting_posts WHERE item LIKE 'statement:1:%' "
                                                       "AND status = 'sent'") != [], "a statement posted and marked")
            before = [r for r in SPECIALISTS if any(statement_marker(r, 1) in m.content
                                                    for m in statements_in(fake, thread))]
            # ... and not all: the rest is caught up after the restart
            assert 1 <= len(before) < len(SPECIALISTS), "Discord took round 1 before the kill: nothing to catch up"
            assert await first.signal(signal.SIGKILL) == -signal.SIGKILL
            assert rows(tmp_path, "SELECT status FROM meetings") == [("running",)]
            fake.post_delay_s = 0
            model.release()
            await second.start()
            await second.wait_for_log(rf"discord: meeting {meeting_id} resumed: ")
            await fake.wait_for(lambda: any(m.content.startswith("📝 **Minutes**") for m in fake.in_channel(thread)),
                                "the minutes in the meeting's thread", 300)
        finally:
            await first.close()
            await second.close()
    assert fake.opened_threads == [thread]  # the same thread after the restart
    stored = rows(tmp_path, "SELECT round, role FROM meeting_statements WHERE meeting_id = ? ORDER BY id", meeting_id)
    assert len(stored) == len(SPECIALISTS) * ROUNDS
    posted = statements_in(fake, thread)
    plain = [m for m in posted if not m.content.startswith(AGAIN)]
    again = [m for m in posted if m.content.startswith(AGAIN)]
    for n, role in stored:  # nothing missing, nothing twice unmarked
        marker = statement_marker(role, n)
        assert sum(marker in m.content for m in plain) + sum(marker in m.content for m in again) >= 1, marker
        assert sum(marker in m.content for m in plain) <= 1 and sum(marker in m.content for m in again) <= 1, marker
    assert len(again) <= 1  # only what was on its way when Sabha was killed
    order = [next(statement_marker(r, n) for n, r in stored if statement_marker(r, n) in m.content) for m in plain]
    wanted = [statement_marker(r, n) for n, r in stored]
    assert order == [w for w in wanted if w in order]  # in the order the meeting stored them
    heads = [m.content.split("\n")[0] for m in fake.in_channel(thread)]
    assert sum("**Board decision**" in h for h in heads) == 1 and sum("**Minutes**" in h for h in heads) == 1
    assert sum(f"<#{thread}>" in m.content for m in fake.in_channel(FINANCE)) == 1  # one pointer over both lives
    assert "Traceback" not in second.log, second.log
