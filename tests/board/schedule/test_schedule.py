"""Scheduled work (board.schedule): one row per key, claimed before it is sent, done exactly once
across crashes, cancel / reschedule / hold / retry, the runner woken by nearer work, on a fake
clock (no test sleeps for time); on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from pathlib import Path

import pytest

from board.app import Board
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
from board.storage import Database, Dialect, StateURL, open_database, parse_state_url
from tests.support.schedule import PLACE, START, RecordingDeliver, nudge, open_schedule, work

pytestmark = pytest.mark.backends


async def test_the_same_key_twice_is_one_row(database: Database) -> None:
    db, schedule, _ = await open_schedule(database)
    async with db:
        first = await schedule.add(work("reminder:action:1", n=1))
        again = await schedule.add(work("reminder:action:1", seconds=999, n=2))
        assert again.id == first.id and again.due_at == first.due_at and again.payload == {"n": 1}
        rows = await db.fetchall("SELECT key FROM scheduled_work")
        assert [r["key"] for r in rows] == ["reminder:action:1"]


async def test_nothing_is_done_before_its_time_and_a_due_row_exactly_once(database: Database) -> None:
    db, schedule, clock = await open_schedule(database)
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


async def test_two_runners_never_both_claim_a_row(database: Database) -> None:
    db, schedule, clock = await open_schedule(database)
    async with db:
        schedule.register(WorkKind.REMINDER, nudge)
        first, second = RecordingDeliver(), RecordingDeliver()
        for i in range(20):
            await schedule.add(work(f"k{i}", seconds=i))
        clock.advance(60)
        await asyncio.gather(ScheduleRunner(schedule, first).run_due(), ScheduleRunner(schedule, second).run_due())
        keys = first.keys() + second.keys()
        assert sorted(keys) == sorted(f"k{i}" for i in range(20)) and len(set(keys)) == 20


async def test_a_claim_that_never_reached_sending_is_done_again_after_a_crash(database: Database) -> None:
    db, schedule, clock = await open_schedule(database)
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


async def test_a_row_that_was_being_sent_is_never_sent_again(database: Database, caplog: pytest.LogCaptureFixture,
                                                            ) -> None:
    db, schedule, clock = await open_schedule(database)
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


async def test_cancel_and_reschedule(database: Database) -> None:
    db, schedule, clock = await open_schedule(database)
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


async def test_work_cancelled_while_claimed_sends_nothing(database: Database) -> None:
    db, schedule, clock = await open_schedule(database)
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


async def test_a_place_that_cannot_be_reached_waits_and_says_why_until_released(database: Database) -> None:
    db, schedule, clock = await open_schedule(database)
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


async def test_a_failed_send_is_tried_again_later_then_given_up(database: Database) -> None:
    db, schedule, clock = await open_schedule(database)
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


async def test_a_handler_error_is_retried_and_an_action_handler_sends_nothing(database: Database) -> None:
    db, schedule, clock = await open_schedule(database)
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


async def test_work_of_a_kind_without_a_handler_waits(database: Database) -> None:
    db, schedule, _ = await open_schedule(database)
    async with db:
        runner = ScheduleRunner(schedule, RecordingDeliver())
        await schedule.add(work("r", seconds=0, kind=WorkKind.RESOLUTION))
        await runner.run_due()
        row = await schedule.get("r")
        assert row is not None and row.status is WorkStatus.PENDING and "no handler for resolution" in (row.held or "")


async def test_the_runner_sleeps_on_the_clock_and_wakes_for_nearer_work(database: Database) -> None:
    db, schedule, clock = await open_schedule(database)
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


async def test_a_channel_that_is_not_running_makes_the_row_wait_saying_so(database: Database) -> None:
    from bot.scheduled import ChannelDeliver

    db, schedule, _ = await open_schedule(database)
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


# -- replicas sharing one table (issue 29) -------------------------------------------------------------------


@pytest.fixture
async def replica_db(state_url: StateURL | None, data_dir: Path) -> AsyncIterator[Database]:
    """A second, separately opened connection (pool) to the test's ``database``: another replica's."""
    from board.app import BOARD_MIGRATIONS
    from bot.app import all_migrations

    url = state_url or parse_state_url("", data_dir=data_dir, env={})
    db = await open_database(url, [*BOARD_MIGRATIONS, *all_migrations()], pool_size=4)
    try:
        yield db
    finally:
        await db.close()


LEASE = RunnerSettings(claim_lease_s=30.0)


async def test_two_replicas_racing_for_the_same_due_rows_send_each_once(database: Database,
                                                                       replica_db: Database) -> None:
    _, schedule, clock = await open_schedule(database)
    _, other, _ = await open_schedule(replica_db, clock)
    for s in (schedule, other):
        s.register(WorkKind.REMINDER, nudge)
    for i in range(40):
        await schedule.add(work(f"k{i}", seconds=i % 7))
    clock.advance(60)
    delivers = [RecordingDeliver() for _ in range(4)]
    runners = [ScheduleRunner(s, d, LEASE) for s, d in zip((schedule, other, schedule, other), delivers, strict=True)]
    taken = await asyncio.gather(*(r.run_due() for r in runners))
    keys = [key for d in delivers for key, _ in d.sent]
    assert sorted(keys) == sorted(f"k{i}" for i in range(40)) and sum(taken) == 40  # none twice, none left
    assert {r.status for r in await schedule.store.open_rows()} == set()


async def test_a_starting_replica_leaves_a_live_runners_claim_alone(database: Database, replica_db: Database) -> None:
    _, schedule, clock = await open_schedule(database)
    _, other, _ = await open_schedule(replica_db, clock)
    for s in (schedule, other):
        s.register(WorkKind.REMINDER, nudge)
    await schedule.add(work("a"))
    clock.advance(60)
    slow = RecordingDeliver(gate=asyncio.Event())
    busy = asyncio.ensure_future(ScheduleRunner(schedule, slow, LEASE).run_due())
    await slow.entered.wait()  # claimed, its reply about to leave
    starting, fresh = ScheduleRunner(other, RecordingDeliver(), LEASE), RecordingDeliver()
    await starting.recover()
    assert await ScheduleRunner(other, fresh, LEASE).run_due() == 0
    row = await other.get("a")
    assert row is not None and row.status is WorkStatus.CLAIMED
    assert slow.gate is not None
    slow.gate.set()
    assert await busy == 1
    assert slow.keys() == ["a"] and fresh.keys() == []


async def test_a_dead_replicas_claims_are_taken_back_after_the_lease(database: Database,
                                                                     replica_db: Database) -> None:
    _, schedule, clock = await open_schedule(database)
    _, other, _ = await open_schedule(replica_db, clock)
    other.register(WorkKind.REMINDER, nudge)
    await schedule.add(work("claimed"))
    await schedule.add(work("sending"))
    clock.advance(60)
    # a replica claimed both, marked one "sending", then died (kill -9: nothing after that runs)
    first = await schedule.store.claim_due(clock.now(), "dead-1")
    second = await schedule.store.claim_due(clock.now(), "dead-2")
    assert first is not None and second is not None
    assert await schedule.store.sending(second, clock.now())
    deliver = RecordingDeliver()
    survivor = ScheduleRunner(other, deliver, LEASE)
    clock.advance(29)
    assert await survivor.run_due() == 0  # within the lease: the claims may be a live runner's
    clock.advance(2)
    assert await survivor.run_due() == 1  # past it: taken back
    assert deliver.keys() == [first.key]
    uncertain = await other.get(second.key)
    assert uncertain is not None and uncertain.status is WorkStatus.DONE
    assert uncertain.outcome == Outcome.MAY_HAVE_ARRIVED  # it may have left: never sent again
    assert await survivor.run_due() == 0 and deliver.keys() == [first.key]


async def test_a_runner_holding_a_row_longer_than_the_lease_keeps_it(database: Database) -> None:
    _, schedule, clock = await open_schedule(database)
    schedule.register(WorkKind.REMINDER, nudge)
    await schedule.add(work("a"))
    clock.advance(60)
    slow = RecordingDeliver(gate=asyncio.Event())
    holder = ScheduleRunner(schedule, slow, RunnerSettings(claim_lease_s=0.3))
    busy = asyncio.ensure_future(holder.run_due())
    await slow.entered.wait()
    for _ in range(4):  # the holder touches its row every 0.1 s (a third of the lease) while the clock moves on
        clock.advance(0.2)
        await asyncio.sleep(0.15)
        other = RecordingDeliver()
        assert await ScheduleRunner(schedule, other, RunnerSettings(claim_lease_s=0.3)).run_due() == 0
    assert slow.gate is not None
    slow.gate.set()
    assert await busy == 1 and slow.keys() == ["a"]


async def test_a_claim_passes_over_a_row_another_replica_is_claiming(database: Database, replica_db: Database,
                                                                     backend: Dialect) -> None:
    if backend is Dialect.SQLITE:
        pytest.skip("SQLite has one writer at a time: there is no row being claimed to pass over")
    _, schedule, clock = await open_schedule(database)
    _, other, _ = await open_schedule(replica_db, clock)
    await schedule.add(work("first", seconds=1))
    await schedule.add(work("second", seconds=2))
    clock.advance(60)
    async with database.transaction() as tx:  # another replica's claim of "first", not committed yet
        await tx.fetchone("SELECT id FROM scheduled_work WHERE key = ? FOR UPDATE", ("first",))
        async with asyncio.timeout(5):  # no waiting for that replica: the next row is taken
            taken = await other.store.claim_due(clock.now(), "other-1")
    assert taken is not None and taken.key == "second"


async def test_the_daemons_runner_claims_under_replicas_lease_s_on_postgresql_only(board: Board,
                                                                                   backend: Dialect) -> None:
    from bot.scheduled import ScheduledWorkService

    service = ScheduledWorkService(board, [], lease_s=7.0)
    assert service.runner.settings.claim_lease_s == (7.0 if backend is Dialect.POSTGRES else None)
