"""A meeting's end bookkeeping survives a kill (issue 40): a real ``sabha run`` on the fake Telegram Bot API (the
meeting called in the forum's General topic) and the model that holds a real meeting
(tests/support/meeting_model.py).

The bookkeeping of a decided meeting (its record written into the chair's and each participant's session for the
place, the review scheduled) runs after the meeting's task has returned, so a durable mark says when it is done;
a start finds a meeting that ended without the mark and does what the kill cut short, never twice.

The kill lands after the decision is shown at Telegram and before the bookkeeping finished: the owner's own chat
turn with research (in its topic: the same session as research's seat in a meeting called in this forum) holds that
session (its model call held), so research's record waits for it while the other five and the review are done.
After the restart: each of the six sessions has the decision once, the review is scheduled once (one row, its due
time not moved).
"""

from __future__ import annotations

import json
import signal
import sqlite3
from pathlib import Path
from typing import Any

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.meeting_model import MeetingModel
from tests.support.telegram import FORUM, OWNER, SPECIALISTS, eventually

ROUNDS = 2
MEETINGS = ["board:", "  meetings:", f"    max_turns_per_agent: {ROUNDS}", "    agent_timeout_s: 600",
            "    max_duration_s: 3600", "    budget_usd: 100", "    review_after_days: 30"]


def rows(root: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(root / "sessions" / "sabha.db") as db:
        return db.execute(sql, params).fetchall()


def research_topic(fake: FakeTelegramAPI) -> int:
    return next(int(t["message_thread_id"]) for t in fake.created_topics if "research" in str(t["name"]).lower())


def records_of(root: Path, meeting_id: str) -> dict[str, int]:
    """Session key -> how many of its transcript's lines are ``meeting_id``'s record (JSONL files beside SQLite)."""
    found: dict[str, int] = {}
    for key, session_id in rows(root, "SELECT key, session_id FROM sessions WHERE archived_at IS NULL"):
        for path in root.rglob(f"{session_id}.jsonl"):
            for line in path.read_text(encoding="utf-8").splitlines():
                if meeting_id not in line:
                    continue
                entry = json.loads(line)
                if entry.get("type") == "meeting" and entry.get("meeting_id") == meeting_id:
                    found[key] = found.get(key, 0) + 1
    return found


def reviews_of(root: Path, meeting_id: str) -> tuple[int, int]:
    """(reviews planned, review work rows scheduled) for decision ``meeting_id``."""
    planned = rows(root, "SELECT COUNT(*) FROM decision_reviews WHERE meeting_id = ?", meeting_id)[0][0]
    work = rows(root, "SELECT COUNT(*) FROM scheduled_work WHERE key LIKE ?", f"%{meeting_id}%")[0][0]
    return int(planned), int(work)


async def test_a_kill_before_the_end_bookkeeping_finished_is_made_good_once_at_the_next_start(
        tmp_path: Path, fake: FakeTelegramAPI) -> None:
    async with MeetingModel() as model:
        config = write_config(tmp_path, fake, model, stream=False, extra=MEETINGS)  # type: ignore[arg-type]
        first, second = SabhaProcess(config), SabhaProcess(config)
        try:
            await first.start()
            model.hold("synthesis")
            fake.push_text(FORUM, OWNER, "/meeting Should we open a Pune office?")
            await model.wait_for("the synthesis held", lambda: any(a.kind == "synthesis" for a in model.waiting))
            # the owner's own turn with research: it holds research's session while its model call waits
            model.hold("other")
            fake.push_text(FORUM, OWNER, "What did we say about hiring?", thread_id=research_topic(fake))
            await model.wait_for("the owner's turn at the model", lambda: any(a.kind == "other" for a in model.waiting))
            model.unhold("synthesis")
            await eventually(lambda: any("Board decision" in m.text for m in fake.sent_messages), "the decision",
                             timeout=180)
            [(meeting_id, status)] = rows(tmp_path, "SELECT id, status FROM meetings")
            assert status == "ended"
            await eventually(lambda: len(records_of(tmp_path, meeting_id)) == len(SPECIALISTS),
                             "the participants' records written", timeout=120)
            await eventually(lambda: reviews_of(tmp_path, meeting_id) == (1, 1), "the review scheduled", timeout=120)
            assert not [k for k in records_of(tmp_path, meeting_id) if k.startswith("board:research")]  # held
            review_due = rows(tmp_path, "SELECT due_at FROM scheduled_work WHERE key LIKE ?", f"%{meeting_id}%")
            assert await first.signal(signal.SIGKILL) == -signal.SIGKILL
            model.release()
            await second.start()
            await eventually(lambda: len(records_of(tmp_path, meeting_id)) == len(SPECIALISTS) + 1,
                             "research's record written after the restart", timeout=180)
            await second.wait_for_log(rf"meeting {meeting_id}: its end's bookkeeping done")
            assert set(records_of(tmp_path, meeting_id).values()) == {1}, records_of(tmp_path, meeting_id)
            assert reviews_of(tmp_path, meeting_id) == (1, 1)
            assert rows(tmp_path, "SELECT due_at FROM scheduled_work WHERE key LIKE ?", f"%{meeting_id}%") == \
                review_due  # scheduled once: not moved by the start either
            assert rows(tmp_path, "SELECT bookkept_at IS NOT NULL FROM meetings WHERE id = ?", meeting_id) == [(1,)]
        finally:
            await second.close()
            await first.close()
