"""Standing meetings and roundtables through a real ``sabha run``: the fake Telegram Bot API (a forum), the offline
model with a price (so spend is counted), and the schedule's own path: a STANDING_MEETING row, added to the state
db as the standing items will add it and announced to the daemon (its wake endpoint), which claims it and calls
:meth:`board.room.standing.StandingMeetings.run` as the schedule will.

A standing roundtable and a standing meeting end with their decision (the roundtable's: its summary) in their
place, through the channel's usual meeting views; the roundtable's tasks are in ``/actions`` with their owners;
``sabha cost --by schedule`` shows each run's spend on its own line and the ledger tags every call of a run with
its item. A standing meeting that today's daily budget cannot afford is skipped with one line and spends $0. A
standing meeting killed (SIGKILL) mid-round resumes at the next start as one meeting, and the calls it makes after
the restart still carry its item.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

from board.app import BOARD_MIGRATIONS
from board.clock import SYSTEM_CLOCK
from board.schedule import NewWork, Place, Schedule, WorkKind
from board.storage import open_database, parse_state_url
from bot.app import all_migrations
from bot.ops.wake import wake_daemon
from tests.support.daemon import DAEMON_REPO, SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.meeting_model import MeetingModel
from tests.support.telegram import FORUM, OWNER, SPECIALISTS, eventually

#: USD per million tokens of the offline model: a meeting's call costs a fraction of a cent
PRICED = ["llm:", "  model: offline", "  prices:", "    offline: {input: 15, output: 45}"]
ONE_ROUND = ["board:", "  meetings:", "    max_turns_per_agent: 1"]
ROUNDTABLE_TOPIC = "growth ideas for Q1"
MEETING_TOPIC = "Should we cut our burn by a third?"


def _db(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / "sessions" / "sabha.db", timeout=30)


def rows(root: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    with contextlib.closing(_db(root)) as db:
        return list(db.execute(sql, params).fetchall())


def meeting_of(root: Path, item: int) -> tuple[str, str] | None:
    """(meeting id, status) of standing item ``item``'s meeting, once it is on record."""
    found = rows(root, "SELECT m.id, m.status FROM standing_meetings s JOIN meetings m ON m.id = s.meeting_id "
                       "WHERE s.item_id = ?", item)
    return (str(found[0][0]), str(found[0][1])) if found else None


def work_done(root: Path, key: str) -> bool:
    return bool(rows(root, "SELECT 1 FROM scheduled_work WHERE key = ? AND status = 'done'", key))


async def run_standing(root: Path, kind: str, topic: str, item: int, thread_id: int | None = None) -> str:
    """Add standing item ``item``'s run as the schedule's row (due now, in the forum's General or ``thread_id``)
    and wake the daemon; the row's key."""
    key = f"standing:{item}:{datetime.now(UTC):%Y%m%dT%H%M%S}"
    url = parse_state_url("", data_dir=root / "sessions", env={})
    db = await open_database(url, [*BOARD_MIGRATIONS, *all_migrations()], pool_size=1)
    try:
        await Schedule(db, SYSTEM_CLOCK).add(NewWork(
            WorkKind.STANDING_MEETING, key=key, due_at=SYSTEM_CLOCK.now(), place=Place("telegram", str(FORUM),
                                                                                        thread_id),
            payload={"kind": kind, "topic": topic, "item": item}))
    finally:
        await db.close()
    assert await wake_daemon(root / "sessions"), "the daemon's wake endpoint did not answer"
    return key


async def sabha_cost(root: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(DAEMON_REPO))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from bot.cli.main import main; raise SystemExit(main())", "cost", "--config",
        str(root / "sabha.yaml"), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        cwd=str(root))
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_a_standing_roundtable_and_meeting_end_in_their_place(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    sabha = SabhaProcess(write_config(tmp_path, fake, None, extra=[*PRICED, *ONE_ROUND]))
    try:
        await sabha.start()
        # the roundtable: held as if the owner had called it, in the forum's General
        key = await run_standing(tmp_path, "roundtable", ROUNDTABLE_TOPIC, 7)
        await eventually(lambda: (meeting_of(tmp_path, 7) or ("", ""))[1] == "ended", "the roundtable's end",
                         timeout=300)
        await eventually(lambda: work_done(tmp_path, key), "its row done", timeout=60)
        roundtable_id, _ = meeting_of(tmp_path, 7) or ("", "")
        await fake.wait_until(lambda: any(m.text.startswith("🏛 Board decision") for m in fake.sent_messages),
                              "the roundtable's summary", timeout=120)
        [topic] = [t for t in fake.created_topics if ROUNDTABLE_TOPIC in t["name"]]
        inside = [m.text for m in fake.sent_to(FORUM, topic["message_thread_id"])]
        assert inside[0].startswith("🏛 Board meeting: growth ideas for Q1")  # its place: the usual meeting view
        summary = next(text for text in inside if text.startswith("🏛 Board decision"))
        tasks = rows(tmp_path, "SELECT id, task, owner FROM action_items WHERE meeting_id = ?", roundtable_id)
        assert 3 <= len(tasks) <= 5
        assert all(str(task) in summary for _, task, _ in tasks)  # the summary names its tasks
        assert {str(owner) for _, _, owner in tasks} <= {"Director", "Builder", "Orchestrator", "FULLSEND", "artist",
                                                       "business", "tech", "summarizer"}
        assert rows(tmp_path, "SELECT chair, roster FROM meetings WHERE id = ?", roundtable_id) == [
            ("summarizer", "roundtable")]
        # its tasks are action items with owners: /actions lists them
        fake.push_text(FORUM, OWNER, "/actions")
        await fake.wait_until(lambda: any("Open action items" in m.text or f"#{tasks[0][0]}" in m.text
                                          for m in fake.sent_to(FORUM, None)), "the owner's /actions", timeout=120)
        listed = next(m.text for m in reversed(fake.sent_to(FORUM, None)) if f"#{tasks[0][0]}" in m.text)
        for number, task, _owner in tasks:  # each with who owes it
            [line] = [line for line in listed.splitlines() if line.startswith(f"#{number} ")]
            assert str(task)[:30] in line and "owes it" in line
        # the meeting: its decision in its place
        key = await run_standing(tmp_path, "meeting", MEETING_TOPIC, 8)
        await eventually(lambda: (meeting_of(tmp_path, 8) or ("", ""))[1] == "ended", "the meeting's end",
                         timeout=300)
        meeting_id, _ = meeting_of(tmp_path, 8) or ("", "")
        [mtopic] = [t for t in fake.created_topics if t["name"].startswith("🏛 Should we cut")]
        await fake.wait_until(lambda: any(m.text.startswith("🏛 Board decision")
                                          for m in fake.sent_to(FORUM, mtopic["message_thread_id"])),
                              "the meeting's decision", timeout=120)
        assert rows(tmp_path, "SELECT chair, roster FROM meetings WHERE id = ?", meeting_id) == [("general", "board")]
        # every model call of each run is tagged with its item, and priced
        for item, mid in ((7, roundtable_id), (8, meeting_id)):
            tagged = rows(tmp_path, "SELECT COUNT(*), SUM(cost_usd) FROM llm_calls WHERE schedule_item = ?", item)
            untagged = rows(tmp_path, "SELECT COUNT(*) FROM llm_calls WHERE meeting_id = ? AND schedule_item IS NULL",
                            mid)
            assert int(str(tagged[0][0])) > 0 and float(str(tagged[0][1])) > 0 and untagged == [(0,)]
        # each run is its own line in sabha cost --by schedule
        report = await sabha_cost(tmp_path, "--by", "schedule", "--since", "all")
        lines = {line.split("  ")[0]: line for line in report.splitlines()}
        [rt] = [k for k in lines if k.startswith(f"#7 roundtable: {ROUNDTABLE_TOPIC} (")]
        [mt] = [k for k in lines if k.startswith("#8 meeting: Should we cut our burn by a third? (")]
        for label, item in ((rt, 7), (mt, 8)):
            spent = rows(tmp_path, "SELECT SUM(cost_usd), COUNT(*) FROM llm_calls WHERE schedule_item = ?", item)[0]
            assert re.search(rf"\s{spent[1]}\s.*\s{float(str(spent[0])):.4f}\s", lines[label]), lines[label]
    finally:
        await sabha.close()


async def test_a_standing_meeting_over_the_daily_budget_is_skipped_with_one_line(tmp_path: Path,
                                                                                  fake: FakeTelegramAPI) -> None:
    budget = ["budget:", "  daily_usd: 0.0001"]  # below any meeting's estimate at the offline model's price
    sabha = SabhaProcess(write_config(tmp_path, fake, None, extra=[*PRICED, *ONE_ROUND, *budget]))
    try:
        await sabha.start()
        key = await run_standing(tmp_path, "meeting", MEETING_TOPIC, 9)
        await eventually(lambda: work_done(tmp_path, key), "the run's row done", timeout=120)
        await fake.wait_until(lambda: any("Skipped the standing meeting #9" in m.text for m in fake.sent_messages),
                              "the one line", timeout=60)
        said = [m for m in fake.sent_messages if "standing meeting #9" in m.text]
        opening = f"Skipped the standing meeting #9 on \u201c{MEETING_TOPIC}\u201d: it is expected to cost about $"
        assert len(said) == 1 and opening in said[0].text
        assert "daily budget (budget.daily_usd)" in said[0].text and "Nothing was spent" in said[0].text
        assert (int(said[0].chat_id), said[0].message_thread_id) == (FORUM, None)  # in its place
        assert rows(tmp_path, "SELECT COUNT(*), COALESCE(SUM(cost_usd), 0) FROM llm_calls") == [(0, 0)]  # $0
        assert rows(tmp_path, "SELECT COUNT(*) FROM meetings") == [(0,)]
        assert not [t for t in fake.created_topics if t["name"].startswith("🏛")]
    finally:
        await sabha.close()


async def test_a_standing_meeting_killed_mid_round_resumes_once_with_its_calls_still_tagged(
        tmp_path: Path, fake: FakeTelegramAPI) -> None:
    meetings = ["board:", "  meetings:", "    max_turns_per_agent: 2", "    agent_timeout_s: 600",
                "    max_duration_s: 3600", "    budget_usd: 100"]
    async with MeetingModel() as model:
        model.hold("round 2")
        config = write_config(tmp_path, fake, model, stream=False, price=True, extra=meetings)  # type: ignore[arg-type]
        first, second = SabhaProcess(config), SabhaProcess(config)
        try:
            await first.start()
            key = await run_standing(tmp_path, "meeting", MEETING_TOPIC, 11)
            await model.wait_for("round 2 at the model", lambda: len(model.waiting) == len(SPECIALISTS))
            await eventually(lambda: work_done(tmp_path, key), "the run's row done", timeout=120)
            # round 1 at Telegram and recorded as sent, so the restart has nothing of it to post again
            await eventually(lambda: len(rows(tmp_path, "SELECT 1 FROM meeting_posts WHERE channel = 'telegram' AND "
                                                        "item LIKE 'statement:1:%' AND status = 'sent'"))
                             == len(SPECIALISTS), "round 1's posts recorded as sent", timeout=120)
            before = rows(tmp_path, "SELECT COUNT(*) FROM llm_calls WHERE schedule_item = 11")[0][0]
            first._kill_now()
            await first.wait()
            model.release()
            await second.start()
            await eventually(lambda: (meeting_of(tmp_path, 11) or ("", ""))[1] == "ended", "the meeting's end",
                             timeout=300)
            meeting_id, _ = meeting_of(tmp_path, 11) or ("", "")
            assert rows(tmp_path, "SELECT COUNT(*) FROM meetings") == [(1,)]  # resumed, never held twice
            assert f"meeting {meeting_id}: resumed at " in second.log
            after = rows(tmp_path, "SELECT COUNT(*) FROM llm_calls WHERE schedule_item = 11")[0][0]
            assert int(str(after)) > int(str(before))  # round 2 and the synthesis, after the restart: tagged
            assert rows(tmp_path, "SELECT COUNT(*) FROM llm_calls WHERE meeting_id = ? AND schedule_item IS NULL",
                        meeting_id) == [(0,)]
            assert rows(tmp_path, "SELECT COUNT(*) FROM llm_calls WHERE meeting_id = ?", meeting_id) == [(after,)]
        finally:
            await first.close()
            await second.close()
