"""Scheduled work (board.schedule): one row per key, claimed before it is sent, done exactly once
across crashes, cancel / reschedule / hold / retry, the runner woken by nearer work, on a fake
clock (no test sleeps for time)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from board.clock import ClockRefused, FakeClock, FileClock, SystemClock, clock_from_env
from board.schedule import (
    Delivered,
    Delivery,
    NewWork,
    Outcome,
    RunnerSettings,
    ScheduledWork,
    ScheduleRunner,
    WorkKind,
    WorkStatus,
)
from board.schedule.report import status_lines
from tests.schedule_support import PLACE, START, RecordingDeliver, nudge, open_schedule, work


async def test_the_same_key_twice_is_one_row(tmp_path: Path) -> None:
    db, schedule, _ = await open_schedule(tmp_path)
    async with db:
        first = await schedule.add(work("reminder:action:1", n=1))
        again = await schedule.add(work("reminder:action:1", seconds=999, n=2))
        assert again.id == first.id and again.due_at == first.due_at and again.payload == {"n": 1}
        rows = await db.fetchall("SELECT key FROM scheduled_work")
        assert [r["key"] for r in rows] == ["reminder:action:1"]


async def test_nothing_is_done_before_its_time_and_a_due_row_exactly_once(tmp_path: Path) -> None:
    db, schedule, clock = await open_schedule(tmp_path)
    async with db:
        schedule.register(WorkKind.REMINDER, nudge)
        deliver = RecordingDeliver()
        runner = ScheduleRunner(schedule, deliver)
        await schedule.add(work("a", seconds=10))
        assert await runner.run_due() == 0
        clock.advance(9.999)
        assert await runner.run_due() == 0
        clock.advance(0.001)
        assert await runner.run_due() == 1
        assert await runner.run_due() == 0
        assert deliver.keys() == ["a"]
        reply = deliver.sent[0][1]
        assert (reply.channel, reply.chat_id, reply.thread_id) == ("telegram", "-1001", 7)
        row = await schedule.get("a")
        assert row is not None and row.status is WorkStatus.DONE and row.outcome == Outcome.SENT


async def test_two_runners_never_both_claim_a_row(tmp_path: Path) -> None:
    db, schedule, clock = await open_schedule(tmp_path)
    async with db:
        schedule.register(WorkKind.REMINDER, nudge)
        first, second = RecordingDeliver(), RecordingDeliver()
        for i in range(20):
            await schedule.add(work(f"k{i}", seconds=i))
        clock.advance(60)
        await asyncio.gather(ScheduleRunner(schedule, first).run_due(), ScheduleRunner(schedule, second).run_due())
        keys = first.keys() + second.keys()
        assert sorted(keys) == sorted(f"k{i}" for i in range(20)) and len(set(keys)) == 20


async def test_a_claim_that_never_reached_sending_is_done_again_after_a_crash(tmp_path: Path) -> None:
    db, schedule, clock = await open_schedule(tmp_path)
    async with db:
        await schedule.add(work("a"))
        clock.advance(60)
        claimed = await schedule.store.claim_due(clock.now(), "dead-runner-1")  # then the process died
        assert claimed is not None and claimed.status is WorkStatus.CLAIMED
        schedule.register(WorkKind.REMINDER, nudge)
        deliver = RecordingDeliver()
        runner = ScheduleRunner(schedule, deliver)
        await runner.recover()
        assert await runner.run_due() == 1
        assert deliver.keys() == ["a"]


async def test_a_row_that_was_being_sent_is_never_sent_again(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                            ) -> None:
    db, schedule, clock = await open_schedule(tmp_path)
    async with db:
        schedule.register(WorkKind.REMINDER, nudge)
        await schedule.add(work("a"))
        clock.advance(60)
        dying = ScheduleRunner(schedule, RecordingDeliver(crash_after_sending=True))
        with pytest.raises(asyncio.CancelledError):
            await dying.run_due()
        row = await schedule.get("a")
        assert row is not None and row.status is WorkStatus.SENDING
        deliver = RecordingDeliver()
        runner = ScheduleRunner(schedule, deliver)
        await runner.recover()
        assert await runner.run_due() == 0
        assert deliver.sent == []
        row = await schedule.get("a")
        assert row is not None and row.status is WorkStatus.DONE and row.outcome == Outcome.MAY_HAVE_ARRIVED
        assert "may have arrived, so it is not sent again" in caplog.text


async def test_cancel_and_reschedule(tmp_path: Path) -> None:
    db, schedule, clock = await open_schedule(tmp_path)
    async with db:
        schedule.register(WorkKind.REMINDER, nudge)
        deliver = RecordingDeliver()
        runner = ScheduleRunner(schedule, deliver)
        await schedule.add(work("gone"))
        await schedule.add(work("later"))
        assert await schedule.cancel("gone")
        assert not await schedule.cancel("gone")  # twice: nothing more to cancel
        assert not await schedule.cancel("no-such-key")
        moved = await schedule.reschedule("later", START + timedelta(hours=2))
        assert moved is not None and moved.due_at == START + timedelta(hours=2)
        clock.advance(3600)
        assert await runner.run_due() == 0
        clock.advance(3600)
        assert await runner.run_due() == 1
        assert deliver.keys() == ["later"]
        # a done row moved again (a new due date) is armed again, and sent again at the new time
        assert await schedule.reschedule("later", clock.now() + timedelta(days=1)) is not None
        clock.advance(days=1)
        assert await runner.run_due() == 1
        assert deliver.keys() == ["later", "later"]
        assert await schedule.reschedule("no-such-key", clock.now()) is None


async def test_work_cancelled_while_claimed_sends_nothing(tmp_path: Path) -> None:
    db, schedule, clock = await open_schedule(tmp_path)
    async with db:
        schedule.register(WorkKind.REMINDER, nudge)
        deliver = RecordingDeliver(gate=asyncio.Event())
        runner = ScheduleRunner(schedule, deliver)
        await schedule.add(work("a"))
        clock.advance(60)
        task = asyncio.create_task(runner.run_due())
        await deliver.entered.wait()  # claimed, about to send
        assert await schedule.cancel("a", "the item was closed")
        assert deliver.gate is not None
        deliver.gate.set()
        await task
        assert deliver.sent == []
        row = await schedule.get("a")
        assert row is not None and row.status is WorkStatus.CANCELLED


async def test_a_place_that_cannot_be_reached_waits_and_says_why_until_released(tmp_path: Path) -> None:
    db, schedule, clock = await open_schedule(tmp_path)
    async with db:
        schedule.register(WorkKind.REMINDER, nudge)
        deliver = RecordingDeliver(script=[Delivered(Delivery.WAIT, "the telegram channel is not running")])
        runner = ScheduleRunner(schedule, deliver)
        await schedule.add(work("a"))
        clock.advance(60)
        assert await runner.run_due() == 1
        assert await runner.run_due() == 0  # held: not taken again
        lines = await status_lines(schedule.store)
        assert any("the telegram channel is not running" in line for line in lines), lines
        assert await schedule.release("telegram", "-1001") == 1
        assert await runner.run_due() == 1
        assert deliver.keys() == ["a"]
        assert await status_lines(schedule.store) == ["Scheduled: nothing pending"]


async def test_a_failed_send_is_tried_again_later_then_given_up(tmp_path: Path) -> None:
    db, schedule, clock = await open_schedule(tmp_path)
    async with db:
        schedule.register(WorkKind.REMINDER, nudge)
        failed = Delivered(Delivery.NOT_SENT, "Telegram is down")
        deliver = RecordingDeliver(script=[failed, failed, failed])
        runner = ScheduleRunner(schedule, deliver, RunnerSettings(retry_s=(10.0, 20.0), max_attempts=3))
        await schedule.add(work("a", seconds=0))
        assert await runner.run_due() == 1
        clock.advance(9)
        assert await runner.run_due() == 0
        clock.advance(1)
        assert await runner.run_due() == 1  # 2nd try fails too: next in 20 s
        clock.advance(20)
        assert await runner.run_due() == 1  # 3rd: given up
        row = await schedule.get("a")
        assert row is not None and row.status is WorkStatus.FAILED and row.detail == "Telegram is down"
        assert any("Telegram is down" in line for line in await status_lines(schedule.store))
        assert deliver.sent == []


async def test_a_handler_error_is_retried_and_an_action_handler_sends_nothing(tmp_path: Path) -> None:
    db, schedule, clock = await open_schedule(tmp_path)
    async with db:
        calls: list[str] = []

        async def flaky(row: ScheduledWork) -> None:
            calls.append(row.key)
            if len(calls) == 1:
                raise RuntimeError("the meeting could not start")

        schedule.register(WorkKind.REVIEW, flaky)
        deliver = RecordingDeliver()
        runner = ScheduleRunner(schedule, deliver, RunnerSettings(retry_s=(5.0,), max_attempts=3))
        await schedule.add(work("review:1", seconds=0, kind=WorkKind.REVIEW))
        await runner.run_due()
        clock.advance(5)
        await runner.run_due()
        assert calls == ["review:1", "review:1"] and deliver.sent == []
        row = await schedule.get("review:1")
        assert row is not None and row.status is WorkStatus.DONE and row.outcome == Outcome.ACTED


async def test_work_of_a_kind_without_a_handler_waits(tmp_path: Path) -> None:
    db, schedule, _ = await open_schedule(tmp_path)
    async with db:
        runner = ScheduleRunner(schedule, RecordingDeliver())
        await schedule.add(work("r", seconds=0, kind=WorkKind.RESOLUTION))
        await runner.run_due()
        row = await schedule.get("r")
        assert row is not None and row.status is WorkStatus.PENDING and "no handler for resolution" in (row.held or "")


async def test_the_runner_sleeps_on_the_clock_and_wakes_for_nearer_work(tmp_path: Path) -> None:
    db, schedule, clock = await open_schedule(tmp_path)
    async with db:
        schedule.register(WorkKind.REMINDER, nudge)
        deliver = RecordingDeliver()
        runner = ScheduleRunner(schedule, deliver)
        stop = asyncio.Event()
        await schedule.add(work("tomorrow", seconds=86400))
        task = asyncio.create_task(runner.run(stop))
        try:
            await schedule.add(work("soon", seconds=5))  # nearer than the runner's wake-up: it looks again
            clock.advance(5)
            await _until(lambda: deliver.keys() == ["soon"])
            clock.advance(86400)
            await _until(lambda: deliver.keys() == ["soon", "tomorrow"])
        finally:
            stop.set()
            await asyncio.wait_for(task, 5)


async def _until(check: Callable[[], bool], limit: float = 5.0) -> None:
    """Wait (yielding to the loop, not for time to pass on the board's clock) until ``check()``."""
    async with asyncio.timeout(limit):
        while not check():  # noqa: ASYNC110 - the runner's progress is polled, it signals nothing
            await asyncio.sleep(0.01)


async def test_new_work_must_have_a_key_and_json_payload() -> None:
    with pytest.raises(ValueError, match="idempotency key"):
        NewWork(WorkKind.REMINDER, " ", START, PLACE)
    with pytest.raises(TypeError):
        NewWork(WorkKind.REMINDER, "k", START, PLACE, {"x": object()})


async def test_the_test_clock_is_refused_outside_test_mode(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    FileClock.write(path, START)
    assert isinstance(clock_from_env({}), SystemClock)
    with pytest.raises(ClockRefused, match="SABHA_TEST_MODE=1"):
        clock_from_env({"SABHA_TEST_CLOCK": str(path)})
    clock = clock_from_env({"SABHA_TEST_CLOCK": str(path), "SABHA_TEST_MODE": "1"})
    assert isinstance(clock, FileClock) and clock.now() == START
    waiter = asyncio.create_task(clock.sleep_until(START + timedelta(seconds=30)))
    await asyncio.sleep(0.05)
    assert not waiter.done()
    FileClock.write(path, START + timedelta(seconds=30))
    await asyncio.wait_for(waiter, 2)
    FileClock.write(path, START)  # a clock never runs backwards
    assert clock.now() == START + timedelta(seconds=30)


async def test_a_fake_clock_drives_the_wait() -> None:
    clock = FakeClock(START)
    waiter = asyncio.create_task(clock.sleep_until(START + timedelta(minutes=1)))
    await asyncio.sleep(0)
    assert not waiter.done()
    clock.advance(minutes=1)
    await asyncio.wait_for(waiter, 1)
    with pytest.raises(ValueError, match="does not run backwards"):
        clock.set(START)


async def test_a_channel_that_is_not_running_makes_the_row_wait_saying_so(tmp_path: Path) -> None:
    from bot.scheduled import ChannelDeliver

    db, schedule, _ = await open_schedule(tmp_path)
    async with db:
        schedule.register(WorkKind.REMINDER, nudge)
        runner = ScheduleRunner(schedule, ChannelDeliver([]))  # a daemon whose Telegram is not configured
        await schedule.add(work("a", seconds=0))
        assert await runner.run_due() == 1
        row = await schedule.get("a")
        assert row is not None and row.status is WorkStatus.PENDING
        assert row.held == "the telegram channel is not running"
        assert "    reminder a (due 2026-11-25T09:00:00+00:00): the telegram channel is not running" in \
            await status_lines(schedule.store)
