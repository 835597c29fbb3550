"""A meeting's own topic across a restart: a real ``sabha run`` on the fake Telegram Bot API (a forum), the model
that holds a real meeting (tests/support/meeting_model.py) and a Telegram slow to take messages, so that when Sabha
stops during round 2 some of round 1's statements are stored and not posted yet (and one may be on its way).

After the restart the meeting (resumed by the meeting package) goes on in the same topic: every statement is there,
in the order the meeting stored them, none posted twice unmarked; a statement whose request had left when Sabha was
killed may come once more, under the possibly-repeated line, never a third time. Stopped with SIGTERM, then killed
with SIGKILL, in two tests.
"""

from __future__ import annotations

import signal
import sqlite3
from pathlib import Path
from typing import Any

from bot.intake.courier import ChannelTexts
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI, SentMessage
from tests.support.meeting_model import MeetingModel, statement_marker
from tests.support.telegram import FORUM, OWNER, SPECIALISTS, eventually

ROUNDS = 2
TOPIC = "Should we open a Pune office?"
MEETINGS = ["board:", "  meetings:", f"    max_turns_per_agent: {ROUNDS}", "    agent_timeout_s: 600",
            "    max_duration_s: 3600", "    budget_usd: 100"]
AGAIN = ChannelTexts().possibly_repeated.split(":")[0]  # "↻ Sent again"
SLOW_TELEGRAM_S = 0.7  # each sendMessage: the meeting's posts fall behind its statements


def rows(root: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(root / "sessions" / "sabha.db") as db:
        return db.execute(sql, params).fetchall()


def statements_of(fake: FakeTelegramAPI, thread: int) -> list[SentMessage]:
    return [m for m in fake.sent_to(FORUM, thread) if "board meeting, round" in m.text]


def meeting_thread(fake: FakeTelegramAPI) -> int | None:
    found = [t["message_thread_id"] for t in fake.created_topics if t["name"] == f"🏛 {TOPIC}"]
    return found[0] if found else None


async def _stopped_and_resumed(tmp_path: Path, fake: FakeTelegramAPI, model: MeetingModel, how: signal.Signals,
                               ) -> tuple[str, int, list[tuple[str, int]]]:
    """Call a meeting, hold round 2 until round 1 is stored and not all posted, stop Sabha ``how``, start it
    again with the model and Telegram at full speed; (meeting id, its topic, statements posted before the stop)."""
    config = write_config(tmp_path, fake, model, stream=False, extra=MEETINGS)  # type: ignore[arg-type]
    first, second = SabhaProcess(config), SabhaProcess(config)
    try:
        await first.start()
        model.hold("round 2")
        fake.set_delay("sendMessage", SLOW_TELEGRAM_S)
        fake.push_text(FORUM, OWNER, f"/meeting {TOPIC}")
        await model.wait_for("round 2 held", lambda: len(model.waiting) == len(SPECIALISTS))
        [(meeting_id,)] = rows(tmp_path, "SELECT id FROM meetings")
        assert len(rows(tmp_path, "SELECT 1 FROM meeting_statements WHERE round = 1")) == len(SPECIALISTS)
        await eventually(lambda: meeting_thread(fake) is not None, "the meeting's topic")
        thread = meeting_thread(fake)
        assert thread is not None
        # the topic's id is recorded before the status goes out: killed before that, Sabha cannot know the topic
        # (Telegram has no way to look one up) and the meeting would go on in a new one (docs/channels.md)
        await eventually(lambda: any(m.text.startswith("🏛 Board meeting") for m in fake.sent_to(FORUM, thread)),
                         "the status in the meeting's topic")
        before = [(r, n) for r in SPECIALISTS for n in (1,)
                  if any(statement_marker(r, n) in m.text for m in statements_of(fake, thread))]
        assert len(before) < len(SPECIALISTS), "Telegram took round 1 before the stop: nothing left to catch up"
        code = await first.signal(how)
        assert code == (-signal.SIGKILL if how is signal.SIGKILL else 0)
        assert rows(tmp_path, "SELECT status FROM meetings") == [("running",)]
        fake.set_delay("sendMessage", 0)
        model.release()
        await second.start()
        await second.wait_for_log(rf"meeting {meeting_id}: resumed at ")
        try:
            await eventually(lambda: any(m.text.startswith("📝 Minutes") for m in fake.sent_to(FORUM, thread)),
                             "the minutes in the meeting's topic", timeout=180)
        except AssertionError as exc:
            sent = [(m.message_id, m.message_thread_id, m.text[:40]) for m in fake.sent_messages]
            raise AssertionError(f"{exc}; thread {thread}; sent {sent}\n{second.log}") from None
        await second.wait_for_log(rf"telegram: meeting {meeting_id} resumed: ")
    finally:
        await first.close()
        await second.close()
    return meeting_id, thread, before


def _all_there_once(tmp_path: Path, fake: FakeTelegramAPI, meeting_id: str, thread: int, *, may_repeat: bool) -> None:
    assert [t["name"] for t in fake.created_topics].count(f"🏛 {TOPIC}") == 1  # the same topic after the restart
    stored = rows(tmp_path, "SELECT round, role FROM meeting_statements WHERE meeting_id = ? ORDER BY id", meeting_id)
    assert len(stored) == len(SPECIALISTS) * ROUNDS
    posted = statements_of(fake, thread)
    plain = [m for m in posted if not m.text.startswith(AGAIN)]
    again = [m for m in posted if m.text.startswith(AGAIN)]
    for n, role in stored:  # nothing missing, nothing twice unmarked
        marker = statement_marker(role, n)
        assert sum(marker in m.text for m in plain) + sum(marker in m.text for m in again) >= 1, marker
        assert sum(marker in m.text for m in plain) <= 1 and sum(marker in m.text for m in again) <= 1, marker
    if not may_repeat:
        assert again == []
    assert len(again) <= 1  # only what was on its way when Sabha was killed
    order = [next(statement_marker(r, n) for n, r in stored if statement_marker(r, n) in m.text) for m in plain]
    wanted = [statement_marker(r, n) for n, r in stored]
    assert order == [w for w in wanted if w in order]  # in the order the meeting stored them
    heads = [m.text.split("\n")[0] for m in fake.sent_to(FORUM, thread)]
    assert heads.count("🏛 Board decision") == 1 and heads.count("📝 Minutes") == 1
    assert sum(h.startswith("🏛 Board meeting") for h in heads) == 1  # its status is edited, not posted again
    for role in SPECIALISTS:  # one pointer in each advisor's topic over both lives
        topic = next(t["message_thread_id"] for t in fake.created_topics if role in t["name"].lower())
        assert sum(m.text.startswith("🏛 In the meeting on") for m in fake.sent_to(FORUM, topic)) == 1, role


async def test_a_meeting_stopped_with_sigterm_goes_on_in_its_topic_with_every_statement_once(
    tmp_path: Path, fake: FakeTelegramAPI
) -> None:
    async with MeetingModel() as model:
        meeting_id, thread, _ = await _stopped_and_resumed(tmp_path, fake, model, signal.SIGTERM)
    _all_there_once(tmp_path, fake, meeting_id, thread, may_repeat=False)


async def test_a_meeting_killed_with_sigkill_goes_on_in_its_topic_nothing_posted_twice_nothing_missing(
    tmp_path: Path, fake: FakeTelegramAPI
) -> None:
    async with MeetingModel() as model:
        meeting_id, thread, _ = await _stopped_and_resumed(tmp_path, fake, model, signal.SIGKILL)
    _all_there_once(tmp_path, fake, meeting_id, thread, may_repeat=True)
