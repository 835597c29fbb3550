"""Standing meetings and roundtables set by ``/every``, end to end (issue 42, "Must show"): a real ``sabha run``
on the fake Telegram Bot API (a forum) and the offline model with a price (so spend is counted), its time read
from a file the test writes (``SABHA_TEST_CLOCK``), so nothing here sleeps for time to pass.

The owner sets, in the finance topic, a weekly roundtable, a monthly meeting and a weekly brief. At each item's
time it runs once: the roundtable and the meeting open their own topic (what ``/meeting`` does in a forum) and end
there with their decision (the roundtable's: its summary), the topic they were set in gets one line pointing to
it; the roundtable's tasks are in ``/actions`` with owners; the brief, which found them, is written by a model
call tagged with its item; ``sabha cost --by schedule`` shows each run on its own line with its spend, and
``/standing`` shows each item's next run and this month's cost. A standing meeting whose estimate passes
``budget.daily_usd`` is skipped with one line in its place and $0. A ``kill -9`` at a standing meeting's moment
leaves one meeting and one decision; what was on its way to Telegram then comes once more, headed as possibly
repeated, never as a plain second copy.

The ledger stamps a call with the machine's time, not the board's clock, so the clock here is set in October 2026
(before any day this runs): a month's cost summed at the board's time then holds every call of the test.
"""

from __future__ import annotations

import re
import signal
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes.telegram_api import FakeTelegramAPI, SentMessage
from tests.support.kill import MARK
from tests.support.meeting_model import MeetingModel, statement_marker
from tests.support.standing import StandingBoard, sabha_cli
from tests.support.telegram import FORUM, SPECIALISTS

#: USD per million tokens of the offline model: a meeting's call costs a fraction of a cent
PRICED = ["llm:", "  model: offline", "  prices:", "    offline: {input: 15, output: 45}"]
ONE_ROUND = ["board:", "  meetings:", "    max_turns_per_agent: 1"]
WEDNESDAY = datetime(2026, 10, 28, 9, 0, tzinfo=UTC)
FRIDAY = datetime(2026, 10, 30, 10, 0, tzinfo=UTC)  # the roundtable's time
SATURDAY = datetime(2026, 10, 31, 9, 0, tzinfo=UTC)  # the brief's
FIRST = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)  # the meeting's: the 1st of the month
LONG = 300.0  # a whole meeting on a loaded machine: a bound for a hung daemon only
DECISION = "🏛 Board decision"
#: the decision, or its copy sent once more after a restart (under the possibly-repeated line)
DECIDED = rf"^(?:{re.escape(MARK)}\s+)?{DECISION}"
POINTER = "In the meeting on “review our burn”"


@pytest.fixture
async def board(tmp_path: Path, fake: FakeTelegramAPI) -> AsyncIterator[StandingBoard]:
    running = StandingBoard(tmp_path, fake, extra=[*PRICED, *ONE_ROUND])
    running.at(WEDNESDAY)
    try:
        yield running
    finally:
        await running.sabha.close()


#: What a meeting's topic opened again after a restart cut its creation short is named after (``🏛 <topic> (again)``)
AGAIN = " (again)"
#: What the log says then
REOPENED = "Sabha stopped while Telegram was creating its topic"


def meeting_topics(board: StandingBoard, topic: str) -> list[dict[str, Any]]:
    """The forum topics made for the meeting on ``topic``, in order: its own, and the one opened again after a
    restart that cut the creation of the first short (when the first may or may not exist: a kill -9 then)."""
    names = {f"🏛 {topic}", f"🏛 {topic}{AGAIN}"}
    return [t for t in board.telegram.created_topics if t["name"] in names]


def meeting_topic(board: StandingBoard, topic: str) -> int:
    """The thread id of the forum topic the meeting on ``topic`` posts in: the one it opened, or the one it opened
    again after a restart cut that one's creation short (the log said so; the first was made if the kill came after
    its request reached Telegram, not if it came before); never more."""
    made = meeting_topics(board, topic)
    names = [t["name"] for t in made]
    first, again = f"🏛 {topic}", f"🏛 {topic}{AGAIN}"
    assert names in ([first], [first, again], [again]), names
    assert names == [first] or REOPENED in board.sabha.log, board.sabha.log
    return int(made[-1]["message_thread_id"])


def on_its_way(board: StandingBoard) -> frozenset[str]:
    """The meeting posts whose request was out when Sabha stopped (``sending`` in the posted record): each may be
    on Telegram already, and is sent once more, marked, after the restart."""
    return frozenset(r[0] for r in board.query("SELECT item FROM meeting_posts WHERE channel = 'telegram' AND "
                                                "status = 'sending'"))


def once(found: list[SentMessage], may_repeat: bool) -> None:
    """One of ``found`` plain (none when its request was out and never reached Telegram), and a copy headed as
    possibly repeated only when it may have arrived (``may_repeat``); never two plain ones."""
    plain = [m.text for m in found if not m.text.startswith(MARK)]
    marked = [m.text for m in found if m.text.startswith(MARK)]
    assert len(plain) <= 1 and len(marked) <= int(may_repeat) and plain + marked, (plain, marked)


def in_thread(board: StandingBoard, thread: int, pattern: str) -> list[SentMessage]:
    regex = re.compile(pattern)
    return [m for m in board.telegram.sent_to(FORUM, thread) if regex.search(m.text)]


async def held(board: StandingBoard, item: int) -> str:
    """Wait for standing item ``item``'s meeting to end and its run to be recorded; the meeting's id."""
    ended = ("SELECT m.status FROM standing_meetings s JOIN meetings m ON m.id = s.meeting_id WHERE s.item_id = ?")
    await board.wait_db(ended, "ended", (item,), timeout=LONG)
    await board.wait_db("SELECT outcome FROM standing_runs WHERE item_id = ?", "ran", (item,))
    return str(board.query("SELECT meeting_id FROM standing_meetings WHERE item_id = ?", (item,))[0][0])


async def decided(board: StandingBoard, topic: str) -> tuple[int, SentMessage]:
    """Wait for the decision in the topic of the meeting on ``topic``: (its thread, the decision)."""
    def decision_threads() -> list[int]:
        threads = [int(t["message_thread_id"]) for t in meeting_topics(board, topic)]
        return [thread for thread in threads if in_thread(board, thread, DECIDED)]

    await board.telegram.wait_until(decision_threads, f"{topic!r} decided in its topic", LONG)
    thread = meeting_topic(board, topic)
    assert decision_threads() == [thread]
    return thread, in_thread(board, thread, DECIDED)[0]


def cost_lines(report: str) -> dict[str, str]:
    return {line.split("  ")[0]: line for line in report.splitlines()}


def spent(board: StandingBoard, item: int) -> tuple[int, float]:
    row = board.query("SELECT COUNT(*), COALESCE(SUM(cost_usd), 0) FROM llm_calls WHERE schedule_item = ?", (item,))
    return int(row[0][0]), float(row[0][1])


async def test_a_roundtable_and_a_meeting_set_by_every_run_at_their_time_and_end_in_their_place(
        board: StandingBoard) -> None:
    await board.start()
    said = await board.say("/every friday 10am roundtable growth ideas for Q1", "Standing item")
    assert "Standing item #1: a roundtable on “growth ideas for Q1” every Friday at 10:00 (UTC), here." in said, said
    assert "First run Fri 2026-10-30 10:00 UTC" in said
    said = await board.say("/every 1st of month 9am meeting review our burn", "Standing item")
    assert "Standing item #2: " in said and "First run Sun 2026-11-01 09:00 UTC" in said, said
    said = await board.say("/every saturday 9am brief", "Standing item")
    assert "Standing item #3: " in said and "First run Sat 2026-10-31 09:00 UTC" in said, said
    listed = await board.say("/standing", "Standing work")
    assert "#1 " in listed and "next Fri 2026-10-30 10:00 UTC; $0.00 this month" in listed, listed
    assert "next Sun 2026-11-01 09:00 UTC; $0.00 this month" in listed, listed

    # Friday 10:00: the roundtable, in its own topic, a pointer where it was set
    board.at(FRIDAY)
    roundtable = await held(board, 1)
    thread, summary = await decided(board, "growth ideas for Q1")
    inside = [m.text for m in board.telegram.sent_to(FORUM, thread)]
    assert inside[0].startswith("🏛 Board meeting: growth ideas for Q1"), inside[:2]
    assert len(in_thread(board, thread, f"^{DECISION}")) == 1
    pointer = board.in_topic("In the meeting on “growth ideas for Q1”")
    assert len(pointer) == 1 and f"/{thread}" in pointer[0].text, [m.text for m in board.in_topic(".")]
    assert board.query("SELECT chair, roster FROM meetings WHERE id = ?", (roundtable,))[0][:] == (
        "summarizer", "roundtable")
    tasks = board.query("SELECT id, task, owner FROM action_items WHERE meeting_id = ?", (roundtable,))
    assert 3 <= len(tasks) <= 5 and all(str(t["task"]) in summary.text for t in tasks)
    assert board.query("SELECT COUNT(*) FROM standing_meetings WHERE item_id = 1")[0][0] == 1  # once
    # its tasks are action items with owners
    actions = await board.say("/actions", "Open action items")
    for task in tasks:
        [line] = [line for line in actions.splitlines() if line.startswith(f"#{task['id']} ")]
        assert str(task["task"])[:30] in line and f"({task['owner']} owes it)".lower() in line.lower(), line
    listed = await board.say("/standing", "Standing work")
    [line] = [line for line in listed.splitlines() if line.startswith("#1 ")]
    assert "next Fri 2026-11-06 10:00 UTC" in line, line
    assert spent(board, 1)[1] >= 0.01 and f"${spent(board, 1)[1]:.2f} this month" in line, (line, spent(board, 1))

    # Saturday 9:00: the brief names the roundtable's tasks, written by one tagged model call
    seen = len(board.telegram.sent_messages)
    board.at(SATURDAY)
    brief = await board.wait_for("Brief: what changed", after=seen)
    assert brief.message_thread_id == board.topic
    await board.wait_db("SELECT COUNT(*) FROM llm_calls WHERE purpose = 'brief' AND schedule_item = 3", 1)

    # the 1st, 9:00: the meeting, its decision in its own topic
    board.at(FIRST)
    meeting = await held(board, 2)
    mthread, _ = await decided(board, "review our burn")
    assert board.query("SELECT chair, roster FROM meetings WHERE id = ?", (meeting,))[0][:] == ("general", "board")
    assert len(board.in_topic("In the meeting on “review our burn”")) == 1
    assert len(in_thread(board, mthread, f"^{DECISION}")) == 1

    # each run its own line in sabha cost --by schedule, with what it spent
    code, report = await sabha_cli(board, "cost", "--by", "schedule", "--since", "all")
    assert code == 0, report
    lines = cost_lines(report)
    for item, start in ((1, "#1 roundtable: growth ideas for Q1 (2026-10-30 10:00Z)"),
                        (2, "#2 meeting: review our burn (2026-11-01 09:00Z)"), (3, "#3 brief (2026-10-31 09:00Z)")):
        labels = [k for k in lines if k.startswith(start)]
        assert len(labels) == 1, (start, report)
        calls, usd = spent(board, item)
        assert calls > 0 and usd > 0, (item, calls, usd)
        assert re.search(rf"\s{calls}\s.*\s{usd:.4f}\s", lines[labels[0]]), (lines[labels[0]], calls, usd)
    # /standing: the next runs, and what this month (November) cost
    listed = await board.say("/standing", "Standing work")
    [line] = [line for line in listed.splitlines() if line.startswith("#2 ")]
    assert "next Tue 2026-12-01 09:00 UTC" in line, line
    assert spent(board, 2)[1] >= 0.01 and f"${spent(board, 2)[1]:.2f} this month" in line, (line, spent(board, 2))
    status = await board.say("/status", "Standing work")  # and /status: each item, its next run, its month
    for item, when in ((1, "next Fri 2026-11-06 10:00 UTC"), (2, "next Tue 2026-12-01 09:00 UTC"),
                       (3, "next Sat 2026-11-07 09:00 UTC")):
        [line] = [line for line in status.splitlines() if re.match(rf"\s*#{item} a .* in telegram chat ", line)]
        assert f"{when}; ${spent(board, item)[1]:.2f} this month" in line, (line, spent(board, item))


@pytest.fixture
async def capped(tmp_path: Path, fake: FakeTelegramAPI) -> AsyncIterator[StandingBoard]:
    budget = ["budget:", "  daily_usd: 0.0001"]  # below any meeting's estimate at the offline model's price
    running = StandingBoard(tmp_path, fake, extra=[*PRICED, *ONE_ROUND, *budget])
    running.at(WEDNESDAY)
    try:
        yield running
    finally:
        await running.sabha.close()


async def test_a_standing_meeting_set_by_every_over_the_daily_budget_is_skipped_with_one_line_and_0_usd(
        capped: StandingBoard) -> None:
    board = capped
    await board.start()
    said = await board.say("/every friday 10am meeting review our burn", "Standing item")
    assert "Standing item #1: " in said and "First run Fri 2026-10-30 10:00 UTC" in said, said
    seen = len(board.telegram.sent_messages)
    board.at(FRIDAY)
    line = await board.wait_for("Skipped the standing meeting #1", after=seen)
    await board.wait_db("SELECT status FROM scheduled_work WHERE key LIKE 'standing:1:2026-10-30%'", "done")
    await board.wait_db("SELECT COUNT(*) FROM standing_runs WHERE item_id = 1", 1)
    assert line.message_thread_id == board.topic  # in its place
    assert line.text.endswith("Skipped the standing meeting #1 on “review our burn”: it is expected to cost about "
                              f"${line.text.split('about $')[1].split(' ')[0]} and today has spent $0.00 of the "
                              "$0.0001 daily budget (budget.daily_usd). Nothing was spent; it runs again at its next "
                              "time."), line.text
    assert len(board.in_topic("standing meeting #1")) == 1  # one line
    assert board.query("SELECT COUNT(*), COALESCE(SUM(cost_usd), 0) FROM llm_calls")[0][:] == (0, 0)  # $0
    assert board.query("SELECT COUNT(*) FROM meetings")[0][0] == 0
    assert not [t for t in board.telegram.created_topics if t["name"].startswith("🏛")]
    listed = await board.say("/standing", "Standing work")
    assert "next Fri 2026-11-06 10:00 UTC; $0.00 this month" in listed, listed
    code, report = await sabha_cli(board, "cost", "--by", "schedule", "--since", "all")
    assert code == 0 and "#1 meeting" not in report, report


@pytest.mark.parametrize("offset", [-1, 0, 1], ids=["1s-before", "at", "1s-after"])
async def test_kill_9_around_a_standing_meetings_moment_holds_one_meeting_and_posts_one_decision(
        board: StandingBoard, offset: int) -> None:
    await board.start()
    said = await board.say("/every friday 10am meeting review our burn", "Standing item")
    assert "First run Fri 2026-10-30 10:00 UTC" in said, said
    board.at(FRIDAY + timedelta(seconds=offset))
    if offset > 0:  # its run done (the durable mark: the meeting is on record and under way), then killed
        await board.wait_db("SELECT status FROM scheduled_work WHERE key LIKE 'standing:1:2026-10-30%'", "done")
    await board.sabha.signal(signal.SIGKILL)  # at its moment: claimed or not, started or not (a race by design)
    before = board.query("SELECT COUNT(*) FROM meetings")[0][0]
    assert before == (1 if offset > 0 else 0) or offset == 0
    on_way = on_its_way(board)  # a post (the pointer where it was set ...) may have been on its way: a race too
    await board.sabha.start()
    board.at(FRIDAY + timedelta(seconds=2))  # the run is due (or done), within schedule.catch_up_s
    await one_meeting_one_decision(board, before, on_way)


async def pointer_held(board: StandingBoard) -> None:
    """Started, the weekly meeting set, its time come: Telegram has posted the line pointing to the meeting's topic
    where it was set, and holds its answer (the meeting's later posts wait behind it)."""
    await board.start()
    await board.say("/every friday 10am meeting review our burn", "Standing item")
    board.telegram.hold("sendMessage", containing=POINTER)
    board.at(FRIDAY)
    await board.telegram.wait_until(lambda: board.telegram.held["sendmessage"] == 1,
                                    "the pointer posted, its answer held", LONG)


async def test_kill_9_while_the_pointer_to_a_running_standing_meeting_is_on_its_way_sends_it_once_more_marked(
        tmp_path: Path, fake: FakeTelegramAPI) -> None:
    """Killed after Telegram posted the line pointing to the meeting's topic where the item was set, before Sabha
    heard (the fake holds that answer), the meeting still running (its round 1 held at the model): after the
    restart the meeting goes on and the line comes once more under the possibly-repeated line, never as a plain
    second copy (CI saw two plain ones); one decision."""
    async with MeetingModel() as model:
        model.hold("round 1")
        rounds = ["board:", "  meetings:", "    max_turns_per_agent: 1", "    agent_timeout_s: 600",
                  "    max_duration_s: 3600", "    budget_usd: 100"]
        board = StandingBoard(tmp_path, fake, extra=rounds, model=model)
        board.at(WEDNESDAY)
        try:
            await pointer_held(board)
            await model.wait_for("round 1 at the model", lambda: len(model.waiting) == len(SPECIALISTS))
            await board.sabha.signal(signal.SIGKILL)
            on_way = on_its_way(board)
            assert "pointer:origin" in on_way and board.query("SELECT status FROM meetings")[0][0] == "running"
            board.telegram.release("sendMessage")
            model.release()
            await board.sabha.start()
            board.at(FRIDAY + timedelta(seconds=2))
            await one_meeting_one_decision(board, 1, on_way)
            assert [m.text.startswith(MARK) for m in board.in_topic(POINTER)] == [False, True]
            assert re.search(r"the pointer:origin of meeting \S+ may have arrived before Sabha stopped; sending it "
                             r"once more", board.sabha.log), board.sabha.log
        finally:
            await board.sabha.close()


async def test_kill_9_after_a_standing_meeting_ended_with_its_posts_still_queued_posts_them_after_the_restart(
        board: StandingBoard) -> None:
    """The meeting ends while its posts wait behind one whose answer Telegram holds (as Telegram's flood control
    keeps a forum's posts minutes behind a fast meeting), and Sabha is killed then: the next start posts what was
    not (the line where it was set once more, marked; every statement, the decision and the minutes, each once),
    and a start after that posts nothing of it again."""
    await pointer_held(board)
    meeting = await held(board, 1)  # ended, its run recorded: the rest of its posts wait behind the pointer
    await board.sabha.signal(signal.SIGKILL)
    on_way = on_its_way(board)
    assert on_way == {"pointer:origin"}, on_way
    board.telegram.release("sendMessage")
    await board.sabha.start()
    await one_meeting_one_decision(board, 1, on_way)
    assert f"the end of 1 meeting(s) that ended before this start once more (each posts what it had not): " \
           f"{meeting}" in board.sabha.log, board.sabha.log
    thread = meeting_topic(board, "review our burn")
    await board.wait_db("SELECT status FROM meeting_posts WHERE item = 'done' AND meeting_id = ?", "sent", (meeting,))
    stored = board.query("SELECT round, role FROM meeting_statements WHERE meeting_id = ?", (meeting,))
    assert stored
    said = in_thread(board, thread, " · board meeting, round ")  # every statement once, none marked (none was on
    heads = [m.text.split("\n")[0] for m in said]  # its way): each under its speaker's name and round
    assert len(heads) == len(stored) == len(set(heads)) and not any(m.text.startswith(MARK) for m in said), heads
    assert len(in_thread(board, thread, "^📝 Minutes")) == 1
    assert [m.text.startswith(MARK) for m in board.in_topic(POINTER)] == [False, True]

    posted, edited = len(board.telegram.sent_messages), len(board.telegram.edited_messages)
    await board.sabha.signal(signal.SIGTERM)
    await board.sabha.start()  # it is told the meeting again: its record says all of it was shown
    await board.sabha.wait_for_log(rf"the end of 1 meeting\(s\) that ended before this start once more .*{meeting}")
    await board.sabha.wait_for_log(rf"meeting {meeting} was all shown before this start; nothing of it is posted")
    answer = await board.say("/standing", "Standing work")  # a marker: anything it still sent came before it
    assert answer and board.telegram.sent_messages[posted:][-1].text == answer
    assert len(board.telegram.sent_messages) == posted + 1, [m.text[:80] for m in board.telegram.sent_messages[posted:]]
    assert len(board.telegram.edited_messages) == edited


async def test_kill_9_while_a_standing_meetings_topic_is_created_opens_one_more_marked_topic_and_decides_once(
        board: StandingBoard) -> None:
    """Killed after Telegram made the meeting's topic and before Sabha heard its id (the fake holds the answer to
    ``createForumTopic``): the Bot API cannot list topics, so after the restart the meeting opens another topic,
    named as opened again, says so in the log, and holds its one meeting and one decision there."""
    await board.start()
    await board.say("/every friday 10am meeting review our burn", "Standing item")
    board.telegram.hold("createForumTopic")
    board.at(FRIDAY)
    await board.telegram.wait_until(lambda: board.telegram.held["createforumtopic"] == 1,
                                    "the meeting's topic made, the answer held", LONG)
    assert [t["name"] for t in meeting_topics(board, "review our burn")] == ["🏛 review our burn"]
    await board.sabha.signal(signal.SIGKILL)
    board.telegram.release("createForumTopic")
    await board.sabha.start()
    board.at(FRIDAY + timedelta(seconds=2))
    meeting = await one_meeting_one_decision(board, 1)
    assert [t["name"] for t in meeting_topics(board, "review our burn")] == ["🏛 review our burn",
                                                                             f"🏛 review our burn{AGAIN}"]
    assert re.search(rf"meeting {meeting}: {REOPENED} '🏛 review our burn'.*opening another, named "
                     rf"'🏛 review our burn{re.escape(AGAIN)}'", board.sabha.log), board.sabha.log
    first = int(meeting_topics(board, "review our burn")[0]["message_thread_id"])
    assert board.telegram.sent_to(FORUM, first) == []  # nothing of the meeting went to the first one


async def test_killed_twice_while_its_topic_is_created_a_meeting_is_shown_in_general_never_in_a_third_topic(
        board: StandingBoard) -> None:
    await board.start()
    await board.say("/every friday 10am meeting review our burn", "Standing item")
    board.telegram.hold("createForumTopic")
    board.at(FRIDAY)
    for made in (1, 2):  # its topic, then the one opened again: each made, its answer held, killed
        await board.telegram.wait_until(lambda made=made: len(meeting_topics(board, "review our burn")) == made,
                                        f"topic {made} made, the answer held", LONG)
        await board.sabha.signal(signal.SIGKILL)
        await board.sabha.start()
        board.at(FRIDAY + timedelta(seconds=made + 1))
    board.telegram.release("createForumTopic")
    meeting = await held(board, 1)
    await board.wait_db("SELECT status FROM meeting_posts WHERE channel = 'telegram' AND meeting_id = ? AND "
                        "item = 'decision'", "sent", (meeting,))
    assert [t["name"] for t in meeting_topics(board, "review our burn")] == ["🏛 review our burn",
                                                                             f"🏛 review our burn{AGAIN}"]
    decisions = [m for m in board.telegram.sent_messages if m.text.startswith(DECISION)]
    assert [(m.chat_id, m.message_thread_id) for m in decisions] == [(FORUM, None)], decisions  # General, once
    assert f"meeting {meeting}: Sabha stopped twice while Telegram was creating its topic" in board.sabha.log
    assert board.query("SELECT COUNT(*) FROM meetings")[0][0] == 1


async def test_kill_9_while_a_standing_meeting_runs_resumes_it_once_after_the_restart(
        tmp_path: Path, fake: FakeTelegramAPI) -> None:
    rounds = ["board:", "  meetings:", "    max_turns_per_agent: 2", "    agent_timeout_s: 600",
              "    max_duration_s: 3600", "    budget_usd: 100"]
    async with MeetingModel() as model:
        model.hold("round 2")
        board = StandingBoard(tmp_path, fake, extra=rounds, model=model)
        board.at(WEDNESDAY)
        try:
            await board.start()
            await board.say("/every friday 10am meeting review our burn", "Standing item")
            board.at(FRIDAY)
            await model.wait_for("round 2 at the model", lambda: len(model.waiting) == len(SPECIALISTS))
            await board.wait_db("SELECT status FROM scheduled_work WHERE key LIKE 'standing:1:2026-10-30%'", "done")
            await board.wait_db("SELECT COUNT(*) FROM meeting_posts WHERE channel = 'telegram' AND item LIKE "
                                "'statement:1:%' AND status = 'sent'", len(SPECIALISTS))  # round 1 is out
            await board.sabha.signal(signal.SIGKILL)
            model.release()
            await board.sabha.start()
            meeting = await one_meeting_one_decision(board, 1)
            assert f"meeting {meeting}: resumed at " in board.sabha.log
            thread = meeting_topic(board, "review our burn")
            for role in SPECIALISTS:  # round 1 went out before the kill, round 2 after it: each statement once
                for round_no in (1, 2):
                    said = in_thread(board, thread, rf"round {round_no}\n{statement_marker(role, round_no)}:")
                    assert len(said) == 1, (role, round_no, [m.text[:300] for m in said])
            assert board.query("SELECT COUNT(*) FROM llm_calls WHERE meeting_id = ? AND schedule_item IS NULL",
                               (meeting,))[0][0] == 0  # its calls after the restart still carry its item
        finally:
            await board.sabha.close()


async def one_meeting_one_decision(board: StandingBoard, before: object, on_way: frozenset[str] = frozenset()) -> str:
    """After the restart: standing item #1's one meeting ended with one decision in its topic, one pointer where
    it was set (each once more, marked, when ``on_way`` says its request was out at the kill), its run done once
    and the next one pending; the meeting's id."""
    meeting = await held(board, 1)
    thread, _ = await decided(board, "review our burn")
    await board.wait_db("SELECT status FROM meeting_posts WHERE channel = 'telegram' AND meeting_id = ? AND "
                        "item = 'decision'", "sent", (meeting,))
    await board.wait_db("SELECT status FROM scheduled_work WHERE key LIKE 'standing:1:2026-10-30%'", "done")
    assert board.query("SELECT COUNT(*) FROM meetings")[0][0] == 1, (before, board.sabha.log)
    assert board.query("SELECT COUNT(*) FROM standing_meetings")[0][0] == 1
    once(in_thread(board, thread, DECIDED), "decision" in on_way)
    assert meeting_topic(board, "review our burn") == thread  # its own topic, or one opened again (and said so)
    once(board.in_topic(POINTER), "pointer:origin" in on_way)
    runs = board.query("SELECT key, status FROM scheduled_work WHERE kind = 'standing' ORDER BY due_at")
    assert [r["status"] for r in runs] == ["done", "pending"], [tuple(r) for r in runs]
    assert board.query("SELECT COUNT(*) FROM standing_runs WHERE item_id = 1")[0][0] == 1
    return meeting
