"""Due dates of action items (issue 27): what the date reader understands and refuses, a decision's
written due dates read at the meeting's end, /due /snooze /done /actions on a board with a fake clock,
and the reminder itself: once, in the meeting's place, with Done and Snooze."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from board.clock import FakeClock, FileClock
from board.commands.followup import overdue_lines
from board.decisions.reminders import reminder_key
from board.room.record import due_label
from board.schedule import ScheduleRunner, WorkStatus
from board.schedule.dates import DateProblem, describe, parse_duration, parse_when
from tests.support.board import on_both_backends
from tests.support.reminders import STRANGER, TASKS, TOPIC, board_on, hold_meeting, say_to, scripted
from tests.support.schedule import START, RecordingDeliver

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)  # a Wednesday


@pytest.mark.parametrize(("text", "expected"), [
    ("+10m", "Wed 2026-11-25 12:10 UTC"),
    ("+5s", "Wed 2026-11-25 12:00:05 UTC"),
    ("+2h", "Wed 2026-11-25 14:00 UTC"),
    ("+3d", "Sat 2026-11-28 12:00 UTC"),
    ("in two weeks", "Wed 2026-12-09 12:00 UTC"),
    ("in an hour", "Wed 2026-11-25 13:00 UTC"),
    ("friday", "Fri 2026-11-27 09:00 UTC"),
    ("next friday", "Fri 2026-11-27 09:00 UTC"),
    ("wednesday", "Wed 2026-12-02 09:00 UTC"),  # never today: a week on
    ("by 2026-12-15", "Tue 2026-12-15 09:00 UTC"),
    ("2026-12-15 17:00", "Tue 2026-12-15 17:00 UTC"),
    ("15 Dec", "Tue 2026-12-15 09:00 UTC"),
    ("Dec 15, 2027", "Wed 2027-12-15 09:00 UTC"),
    ("3 Jan", "Sun 2027-01-03 09:00 UTC"),  # a date without a year: the next to come
    ("tomorrow 9am", "Thu 2026-11-26 09:00 UTC"),
    ("by friday 5pm", "Fri 2026-11-27 17:00 UTC"),
    ("next week", "Mon 2026-11-30 09:00 UTC"),
    ("today 18:00", "Wed 2026-11-25 18:00 UTC"),
])
def test_dates_people_write_are_read_relative_to_the_clock(text: str, expected: str) -> None:
    assert parse_when(text, NOW).said == expected


@pytest.mark.parametrize(("text", "says"), [
    ("soonish", "I can't read 'soonish' as a date. I understand: +10m, +2h, +3d, in two weeks"),
    ("12/11", "ambiguous (day or month first?)"),
    ("2020-01-01", "which has passed (it is now Wed 2026-11-25 12:00 UTC)"),
    ("today 08:00", "today has passed"),
    ("2026-02-30", "is not a date on the calendar"),
    ("friday 25:00", "is not a time of day"),
    ("", "Give a date or a time"),
    ("+99999999999d", "'+99999999999d' is too far ahead: give at most ten years."),  # was an OverflowError
    ("in 600 weeks", "is too far ahead"),
    ("2040-01-01", "'2040-01-01' is too far ahead: give at most ten years."),
    ("9999-12-31 23:59", "is too far ahead"),
])
def test_what_is_not_a_date_is_refused_saying_what_is_understood(text: str, says: str) -> None:
    with pytest.raises(DateProblem) as refused:
        parse_when(text, NOW)
    assert says in str(refused.value)


def test_days_and_times_are_read_in_the_owners_time_zone() -> None:
    kolkata = ZoneInfo("Asia/Kolkata")
    friday = parse_when("friday 17:00", NOW, kolkata)
    assert friday.at == datetime(2026, 11, 27, 11, 30, tzinfo=UTC)
    assert friday.said == "Fri 2026-11-27 17:00 Asia/Kolkata"
    assert describe(parse_when("+10m", NOW, kolkata).at, kolkata) == "Wed 2026-11-25 17:40 Asia/Kolkata"


def test_far_dates_never_overflow_in_a_zone_west_or_east_of_utc() -> None:
    for zone in (ZoneInfo("America/Los_Angeles"), ZoneInfo("Pacific/Kiritimati")):
        for text in ("9999-12-31 23:59", "+3000000d", "Dec 31, 9999"):
            with pytest.raises(DateProblem, match=r"too far ahead|out of range"):
                parse_when(text, NOW, zone)
        assert parse_when("+520w", NOW, zone).at == NOW + timedelta(weeks=520)  # ten years is fine
    assert describe(datetime(9999, 12, 31, 23, 59, tzinfo=UTC), ZoneInfo("Pacific/Kiritimati")).endswith("UTC")
    with pytest.raises(DateProblem, match="too far ahead"):
        parse_duration("99999999999d")


def test_snooze_lengths() -> None:
    assert parse_duration("2h") == timedelta(hours=2)
    assert parse_duration("+30m") == timedelta(minutes=30)
    assert parse_duration("1 day") == timedelta(days=1)
    assert parse_duration("a week") == timedelta(weeks=1)
    with pytest.raises(DateProblem, match="as a length of time"):
        parse_duration("later")


@on_both_backends
async def test_a_decisions_due_dates_are_read_when_it_is_recorded(workspace: Path, data_dir: Path) -> None:
    board = await board_on(workspace, data_dir, scripted(("by 2026-12-15", "in two weeks", "soonish")))
    try:
        ids = await hold_meeting(board)
        rows = {r.id: r for r in await board.parts.room.store.actions()}
        assert rows[ids[0]].due_at == "2026-12-15T09:00:00.000000Z"
        assert rows[ids[1]].due_at == "2026-12-09T09:00:00.000000Z"  # two weeks from the clock's now
        assert rows[ids[2]].due_at is None and rows[ids[2]].due_text == "soonish"
        reminders = [await board.parts.schedule.get(reminder_key(i)) for i in ids]
        assert [r.due_at if r else None for r in reminders] == [
            datetime(2026, 12, 15, 9, tzinfo=UTC), datetime(2026, 12, 9, 9, tzinfo=UTC), None]
        first = reminders[0]
        assert first is not None and (first.place.channel, first.place.chat_id, first.place.thread_id) == (
            "telegram", "-100777", 42)  # where the meeting ran: the same topic
        listed = await say_to(board, "/actions")
        assert "due Tue 2026-12-15 09:00 UTC" in listed
        assert f"due 'soonish' (not a date I can read: /due {ids[2]} <when>)" in listed
    finally:
        await board.close()


@on_both_backends
async def test_due_snooze_done_and_bad_input_change_nothing(workspace: Path, data_dir: Path) -> None:
    clock = FakeClock(START)
    board = await board_on(workspace, data_dir, scripted((None, None, None)), clock)
    try:
        first, second, _ = await hold_meeting(board)
        assert await say_to(board, "/due 99 friday") == "No open action item #99; /actions lists them."
        soonish = await say_to(board, f"/due {first} soonish")
        assert "I can't read 'soonish' as a date" in soonish and "Nothing changed." in soonish
        past = await say_to(board, f"/due {first} 2020-01-01")
        assert "which has passed" in past
        assert "Say which item and when" in await say_to(board, "/due friday")
        assert (await board.parts.room.store.action(first)).due_at is None  # type: ignore[union-attr]
        assert await board.parts.schedule.get(reminder_key(first)) is None

        said = await say_to(board, f"/due {first} friday")
        assert said == (f"#{first} {TASKS[0]} (owed by Finance) is now due Fri 2026-11-27 09:00 UTC; "
                        "I will remind you here then.")
        work = await board.parts.schedule.get(reminder_key(first))
        assert work is not None and work.due_at == datetime(2026, 11, 27, 9, tzinfo=UTC)
        moved = await say_to(board, f"/due {first} +2h")  # changing the date moves the reminder
        assert "is now due Wed 2026-11-25 11:00 UTC" in moved
        work = await board.parts.schedule.get(reminder_key(first))
        assert work is not None and work.due_at == START + timedelta(hours=2)

        # a stranger elsewhere cannot touch the owner's items (fix27: dates and closing are the owner's)
        assert "/due is for the board's owner only" in await say_to(board, f"/due {first} +1h", STRANGER)
        assert "/done is for the board's owner only" in await say_to(board, f"/done {first}", STRANGER)

        snoozed = await say_to(board, f"/snooze {first} 3h")
        assert snoozed == f"Snoozed #{first} {TASKS[0]}: I will remind you again Wed 2026-11-25 12:00 UTC."
        assert "as a length of time" in await say_to(board, f"/snooze {first} later")
        for huge in (f"/due {first} +99999999999d", f"/snooze {first} 99999999999d", f"/due {first} 9999-12-31"):
            said = await say_to(board, huge)
            assert "too far ahead: give at most ten years. Nothing changed." in said, huge  # was a crash
        default = await say_to(board, f"/snooze {second}")
        assert "again Thu 2026-11-26 09:00 UTC" in default  # a day from now

        done = await say_to(board, f"/done {first}")
        assert done.startswith(f"Done: #{first} {TASKS[0]}")
        work = await board.parts.schedule.get(reminder_key(first))
        assert work is not None and work.status is WorkStatus.CANCELLED
        assert "it is done already; nothing changed" in await say_to(board, f"/done {first}")  # pressed twice
        assert "it is done already" in await say_to(board, f"/snooze {first}")
    finally:
        await board.close()


@on_both_backends
async def test_a_due_item_is_reminded_once_in_its_place_with_done_and_snooze(workspace: Path, data_dir: Path,
                                                                            ) -> None:
    clock = FakeClock(START)
    board = await board_on(workspace, data_dir, scripted(("+5s", "+1h", None)), clock)
    try:
        first, second, third = await hold_meeting(board)
        deliver = RecordingDeliver()
        runner = ScheduleRunner(board.parts.schedule, deliver)
        clock.advance(4)
        assert await runner.run_due() == 0
        clock.advance(1)
        assert await runner.run_due() == 1
        assert await runner.run_due() == 0  # once
        key, reply = deliver.sent[0]
        assert key == reminder_key(first)
        assert (reply.channel, reply.chat_id, reply.thread_id) == ("telegram", "-100777", 42)
        assert reply.text.startswith(f"\u23f0 Your reminder: Finance owes action #{first} ")
        assert "due Wed 2026-11-25 09:00:05 UTC." in reply.text  # on time: not "overdue"
        assert TASKS[0] in reply.text and f"/done {first}" not in reply.text  # the buttons say it
        assert [(b.label, b.command) for b in reply.buttons] == [("Done", f"/done {first}"),
                                                                 ("Snooze", f"/snooze {first}")]
        # overdue: /actions lists it first, /status says so
        listed = await say_to(board, "/actions")
        assert "1 overdue" in listed and listed.splitlines()[1].startswith(f"#{first} ")
        assert "due Wed 2026-11-25 09:00:05 UTC, overdue by" not in listed  # 0 s late: on time
        row = await board.parts.room.store.action(first)
        assert row is not None and due_label(row, START + timedelta(hours=1, seconds=5)) == \
            "due Wed 2026-11-25 09:00:05 UTC, overdue by 1 hour"  # an hour on: how late it is
        lines = await overdue_lines(board.parts.room.store, board.parts.reminders)
        assert lines[0] == "Action items overdue (1; /actions lists them all):" and f"#{first}" in lines[1]
        # Done before its time: the second is never reminded; snoozed, the first comes again once
        await say_to(board, f"/done {second}")
        await say_to(board, f"/snooze {first} 2h")
        clock.advance(hours=1, seconds=30)
        assert await runner.run_due() == 0
        clock.advance(hours=1)
        assert await runner.run_due() == 1
        assert deliver.keys() == [reminder_key(first), reminder_key(first)]
        assert await board.parts.schedule.get(reminder_key(third)) is None  # no date, no reminder
    finally:
        await board.close()


@on_both_backends
async def test_a_reminder_for_an_item_closed_meanwhile_sends_nothing(workspace: Path, data_dir: Path) -> None:
    clock = FakeClock(START)
    board = await board_on(workspace, data_dir, scripted(("+1m", None, None)), clock)
    try:
        first, *_ = await hold_meeting(board)
        await board.parts.db.execute("UPDATE action_items SET status = 'dropped' WHERE id = ?", (first,))  # a veto
        deliver = RecordingDeliver()
        clock.advance(60)
        assert await ScheduleRunner(board.parts.schedule, deliver).run_due() == 1
        assert deliver.sent == []
        work = await board.parts.schedule.get(reminder_key(first))
        assert work is not None and work.status is WorkStatus.DONE and work.outcome == "acted"
    finally:
        await board.close()


@on_both_backends
async def test_a_decision_whose_reminders_were_not_scheduled_gets_them_at_start(workspace: Path, data_dir: Path,
                                                                               ) -> None:
    clock = FakeClock(START)
    board = await board_on(workspace, data_dir, scripted(("+1h", "in two weeks", None)), clock)
    try:
        _, second, _ = await hold_meeting(board)
        await board.parts.db.execute("DELETE FROM scheduled_work")  # as if the process died before scheduling them
        await board.parts.db.execute("UPDATE action_items SET due_at = NULL WHERE id = ?", (second,))
        assert await board.parts.reminders.sync() == 2
        assert await board.parts.reminders.sync() == 0  # once
        work = await board.parts.schedule.get(reminder_key(second))
        assert work is not None and work.status is WorkStatus.PENDING
    finally:
        await board.close()


@on_both_backends
async def test_the_board_timezone_is_used_and_named(workspace: Path, data_dir: Path) -> None:
    board = await board_on(workspace, data_dir, scripted((None, None, None)), timezone="Europe/Berlin")
    try:
        first, *_ = await hold_meeting(board)
        said = await say_to(board, f"/due {first} friday 17:00")
        assert "is now due Fri 2026-11-27 17:00 Europe/Berlin" in said
        work = await board.parts.schedule.get(reminder_key(first))
        assert work is not None and work.due_at == datetime(2026, 11, 27, 16, 0, tzinfo=UTC)
    finally:
        await board.close()


def _sabha(args: list[str], cwd: Path, clock: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(SABHA_TEST_MODE="1", SABHA_TEST_CLOCK=str(clock), XDG_DATA_HOME=str(cwd / "xdg"),
               PYTHONPATH=str(Path(__file__).resolve().parents[3]))  # this checkout's sabha
    return subprocess.run([sys.executable, "-m", "bot.cli.main", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env)


def test_sabha_actions_lists_due_dates_and_sets_them(tmp_path: Path) -> None:
    clock = tmp_path / "clock"
    FileClock.write(clock, START)  # Wed 2026-11-25 09:00 UTC
    assert _sabha(["init", "proj"], tmp_path, clock).returncode == 0
    home = tmp_path / "proj"
    held = _sabha(["meeting", "Should we expand to Europe?"], home, clock)
    assert held.returncode == 0, held.stderr
    assert ", due +2m)" in held.stdout  # the offline chair dates its items
    listed = _sabha(["actions"], home, clock).stdout
    assert "due Wed 2026-11-25 09:02 UTC" in listed and "due Wed 2026-12-09 09:00 UTC" in listed
    assert "set its date with sabha actions due <n> <when>" in listed
    first, second = (int(n) for n in re.findall(r"^#(\d+) ", listed, re.MULTILINE)[:2])

    moved = _sabha(["actions", "due", str(second), "2026-12-15"], home, clock)
    assert moved.returncode == 0, moved.stderr
    assert f"#{second} " in moved.stdout and "is now due Tue 2026-12-15 09:00 UTC" in moved.stdout
    assert "its reminder goes to the terminal" in moved.stdout and "`sabha chat`" in moved.stdout  # fix27
    bad = _sabha(["actions", "due", str(second), "soonish"], home, clock)
    assert bad.returncode == 2 and "I can't read 'soonish' as a date" in bad.stderr and "Nothing changed" in bad.stderr
    unknown = _sabha(["actions", "due", "99", "friday"], home, clock)
    assert unknown.returncode == 2 and "No open action item #99; `sabha actions` lists them." in unknown.stderr
    assert _sabha(["actions", "due", str(second)], home, clock).returncode == 2  # no date: the usage line
    huge = _sabha(["actions", "due", str(second), "+99999999999d"], home, clock)  # was a traceback
    assert huge.returncode == 2 and "is too far ahead: give at most ten years" in huge.stderr, huge.stderr
    assert "Traceback" not in huge.stderr

    FileClock.write(clock, START + timedelta(minutes=3))
    overdue = _sabha(["actions"], home, clock).stdout
    assert "1 overdue" in overdue and f"#{first} " in overdue.splitlines()[1]
    assert "due Wed 2026-11-25 09:02 UTC, overdue by 1 minute" in overdue
    status = _sabha(["status"], home, clock).stdout
    assert f"next: reminder reminder:action:{first} (due 2026-11-25T09:02:00+00:00, overdue by 1 minute)" in status
    assert (f"reminder reminder:action:{first} (due 2026-11-25T09:02:00+00:00, overdue by 1 minute): waits for "
            "`sabha chat`") in status
    done = _sabha(["actions", "done", str(first)], home, clock)
    assert done.returncode == 0 and f"Done: #{first}" in done.stdout
    assert f"reminder:action:{first}" not in _sabha(["status"], home, clock).stdout  # its reminder is cancelled


def test_a_decisions_due_date_is_kept_as_written_blank_means_none_and_never_fails_a_decision() -> None:
    from board.room.decision import ActionItem

    assert ActionItem(task="Model VAT", owner="finance", due="  by   friday ").due == "by friday"
    assert ActionItem(task="Model VAT", owner="finance", due="TBD").due is None
    assert ActionItem(task="Model VAT", owner="finance").due is None
    assert len(ActionItem(task="Model VAT", owner="finance", due="soon " * 40).due or "") == 80


@on_both_backends
async def test_a_member_of_the_meetings_own_topic_cannot_date_snooze_or_close_the_owners_items(
        workspace: Path, data_dir: Path) -> None:
    """Only the owner sets or changes due dates and closes items; a member pressing a reminder's
    Done or Snooze (the same commands) is refused and nothing changes."""
    member = dict(TOPIC, sender="2", is_owner=False)
    board = await board_on(workspace, data_dir, scripted(("+5s", "+1h", None)), FakeClock(START))
    try:
        first, second, third = await hold_meeting(board)
        before = {key: await board.parts.schedule.get(reminder_key(key)) for key in (first, second)}
        for command in (f"/snooze {first} 100w", f"/due {second} 2030-01-01", f"/due {third} friday",
                        f"/done {third}", f"/done {first}"):
            said = await say_to(board, command, member)
            assert said == f"/{command[1:].split()[0]} is for the board's owner only.", (command, said)
        for key, work in before.items():
            assert work is not None and await board.parts.schedule.get(reminder_key(key)) == work
        rows = {row.id: row for row in await board.parts.room.store.actions(limit=10)}
        assert [rows[n].done_at for n in (first, second, third)] == [None, None, None]
        assert rows[third].due_at is None
        assert TASKS[2] in await say_to(board, "/actions", member)  # members still see the items
        assert "is now due" in await say_to(board, f"/due {third} friday")  # the owner may
    finally:
        await board.close()


@on_both_backends
async def test_a_snooze_while_the_reminder_is_being_sent_reminds_again_at_the_new_date(
        workspace: Path, data_dir: Path) -> None:
    """fix27: a row being sent cannot move, so the snooze was lost; now the reminder is armed again
    once that send is over (or, after a stop mid-send, at the next start)."""
    from board.schedule import Delivered, Delivery

    clock = FakeClock(START)
    board = await board_on(workspace, data_dir, scripted(("+5s", "+1h", None)), clock)
    try:
        first, second, third = await hold_meeting(board)
        snoozed: list[str] = []

        class SnoozeMidSend(RecordingDeliver):
            async def __call__(self, work, reply, sending):  # type: ignore[no-untyped-def]
                await sending()  # the row is "sending" now: the owner presses Snooze
                snoozed.append(await say_to(board, f"/snooze {work.payload['action']} 2h"))
                self.sent.append((work.key, reply))
                return Delivered(Delivery.SENT)

        deliver = SnoozeMidSend()
        runner = ScheduleRunner(board.parts.schedule, deliver)
        clock.advance(5)
        assert await runner.run_due() == 1
        assert snoozed == [f"Snoozed #{first} {TASKS[0]}: I will remind you again Wed 2026-11-25 11:00:05 UTC."]
        work = await board.parts.schedule.get(reminder_key(first))
        assert work is not None and work.status is WorkStatus.PENDING
        assert work.due_at == START + timedelta(hours=2, seconds=5)
        clock.advance(hours=2)
        plain = RecordingDeliver()
        assert await ScheduleRunner(board.parts.schedule, plain).run_due() == 2
        assert [key for key, _ in plain.sent] == [reminder_key(second), reminder_key(first)]  # again, once
        assert await ScheduleRunner(board.parts.schedule, plain).run_due() == 0

        # a stop while it is being sent: "may have arrived" at the next start, then armed again
        assert "is now due" in await say_to(board, f"/due {third} +1m")
        crashing = RecordingDeliver(crash_after_sending=True)
        clock.advance(minutes=1)
        with pytest.raises(asyncio.CancelledError):
            await ScheduleRunner(board.parts.schedule, crashing).run_due()
        assert "I will remind you again" in await say_to(board, f"/snooze {third} 3h")  # while "sending"
        restarted = ScheduleRunner(board.parts.schedule, RecordingDeliver())
        await restarted.recover()
        await board.parts.schedule.starting()
        work = await board.parts.schedule.get(reminder_key(third))
        assert work is not None and work.status is WorkStatus.PENDING
        assert work.due_at == clock.now() + timedelta(hours=3)
    finally:
        await board.close()
