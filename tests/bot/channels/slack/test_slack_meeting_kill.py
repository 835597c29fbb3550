"""A meeting in a Slack thread across ``kill -9`` (a real ``sabha run``, the fake Slack, the model that holds a real
meeting): killed while round 2 waits at the model, after round 1's message was posted and recorded as sent; after
the restart the meeting goes on in the same thread and every round's message, the decision and the minutes are
there exactly once."""

from __future__ import annotations

import signal
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from tests.support.daemon import SabhaProcess
from tests.support.fakes.slack_socket import FakeSlack
from tests.support.meeting_model import MeetingModel, statement_marker
from tests.support.slack import BOARD, NAMES, OWNER, say, slack_env, slack_poster, write_slack_config
from tests.support.telegram import SPECIALISTS, eventually

TOPIC = "Should we open a Pune office?"
MEETINGS = ("board:", "  meetings:", "    max_turns_per_agent: 2", "    agent_timeout_s: 600",
            "    max_duration_s: 3600", "    budget_usd: 100")


def rows(root: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(root / "sessions" / "sabha.db") as db:
        return db.execute(sql, params).fetchall()


def heads(slack: FakeSlack, ts: str) -> Counter[str]:
    """How many messages in the thread begin each way (a round, the decision, the minutes)."""
    return Counter(m.text[:m.text.find("*", 1) + 1] for m in slack.messages
                   if m.channel == BOARD and m.thread_ts == ts)


async def test_a_meeting_killed_mid_way_goes_on_in_its_thread_and_posts_nothing_twice(tmp_path: Path) -> None:
    async with MeetingModel() as model, FakeSlack(users=NAMES) as slack:
        config = write_slack_config(tmp_path, slack, model, extra=MEETINGS)  # type: ignore[arg-type]
        first, second = SabhaProcess(config, env=slack_env()), SabhaProcess(config, env=slack_env())
        try:
            await first.start()
            model.hold("round 2")
            async with slack_poster(first) as poster:
                called = await say(poster, BOARD, OWNER, f"/meeting {TOPIC}")
            ts = called["event"]["ts"]
            await model.wait_for("round 2 held", lambda: len(model.waiting) == len(SPECIALISTS))
            [(meeting_id,)] = rows(tmp_path, "SELECT id FROM meetings")
            # the durable mark first: round 1's message recorded as sent (not just seen at the fake)
            await eventually(lambda: rows(tmp_path, "SELECT status FROM meeting_posts WHERE channel = 'slack' AND "
                                                    "item = 'round:1:0'") == [("sent",)], "round 1 recorded as sent")
            assert heads(slack, ts)["*Round 1*"] == 1
            assert await first.signal(signal.SIGKILL) == -signal.SIGKILL
            model.release()
            await second.start()
            await second.wait_for_log(rf"meeting {meeting_id}: resumed at ")
            await eventually(lambda: heads(slack, ts)["*Minutes*"] >= 1, "the minutes in the thread", timeout=180)
        finally:
            await first.close()
            await second.close()
    counted = heads(slack, ts)
    assert counted["*Round 1*"] == 1 and counted["*Round 2*"] == 1, counted
    assert counted["*Board decision*"] == 1 and counted["*Minutes*"] == 1, counted
    said = "\n".join(m.text for m in slack.messages if m.text.startswith("*Round"))
    for role in SPECIALISTS:
        for n in (1, 2):
            assert said.count(statement_marker(role, n)) == 1, (role, n, said)
    assert all(m.thread_ts == ts for m in slack.messages if m.channel == BOARD), "one thread"
