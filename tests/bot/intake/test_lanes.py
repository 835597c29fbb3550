"""The intake's scheduler: order within a conversation, concurrency across, a global cap, fair turns."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from bot.intake.lanes import Lanes, giving_place_up, stepping_aside


class Recorder:
    """Makes jobs that log ``start <name>`` and ``end <name>`` and counts how many run at once."""

    def __init__(self, work_s: float = 0.0) -> None:
        self.log: list[str] = []
        self.running = 0
        self.peak = 0
        self.work_s = work_s

    def job(self, name: str, wait: asyncio.Event | None = None) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            self.log.append(f"start {name}")
            self.running += 1
            self.peak = max(self.peak, self.running)
            try:
                if wait is not None:
                    await wait.wait()
                await asyncio.sleep(self.work_s)
            finally:
                self.running -= 1
            self.log.append(f"end {name}")
        return run

    @property
    def started(self) -> list[str]:
        """The names of the jobs in the order they started."""
        return [line.removeprefix("start ") for line in self.log if line.startswith("start ")]


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_order_within_a_lane_and_lanes_concurrent() -> None:
    lanes = Lanes(cap=8, name="test")
    jobs = Recorder()
    gate = asyncio.Event()
    lanes.submit("a", jobs.job("a1", gate))
    lanes.submit("a", jobs.job("a2"))
    lanes.submit("b", jobs.job("b1"))
    await settle()
    assert "end b1" in jobs.log and "start a2" not in jobs.log
    gate.set()
    await settle()
    assert jobs.log.index("end a1") < jobs.log.index("start a2")
    assert await lanes.drain(1.0)
    assert lanes.lanes == 0 and not lanes.submit("a", jobs.job("late"))


async def test_a_failing_job_does_not_stall_its_lane() -> None:
    lanes = Lanes(cap=2, name="test")
    done: list[int] = []

    async def boom() -> None:
        raise RuntimeError("bad job")

    async def ok() -> None:
        done.append(1)

    lanes.submit("x", boom)
    lanes.submit("x", ok)
    await settle()
    assert await lanes.drain(1.0)
    assert done == [1]


async def test_the_cap_holds_and_lanes_take_turns() -> None:
    """A busy conversation (10 queued) and nine quiet ones (1 each) under a cap of 2:
    the quiet ones are not starved behind the busy one, and never more than 2 run."""
    lanes = Lanes(cap=2, name="test")
    jobs = Recorder(work_s=0.001)
    for i in range(10):
        lanes.submit("busy", jobs.job(f"busy{i}"))
    for i in range(9):
        lanes.submit(f"quiet{i}", jobs.job(f"quiet{i}"))
    for _ in range(200):
        await asyncio.sleep(0.002)
        if len(jobs.started) == 19:
            break
    order = jobs.started
    assert len(order) == 19 and jobs.peak == 2 and lanes.peak == 2
    last_quiet = max(order.index(f"quiet{i}") for i in range(9))
    assert last_quiet < 12, order  # round robin: the busy lane got about one turn per round
    assert [n for n in order if n.startswith("busy")] == [f"busy{i}" for i in range(10)]


async def test_drain_cancels_what_outlives_the_grace_and_drops_the_queue() -> None:
    lanes = Lanes(cap=1, name="test")
    jobs = Recorder()
    lanes.submit("a", jobs.job("slow", asyncio.Event()))  # never set
    lanes.submit("b", jobs.job("queued"))
    await settle()
    assert lanes.running == 1 and lanes.waiting == 1
    assert not await lanes.drain(0.05)
    assert jobs.log == ["start slow"]  # cancelled; the queued job never started


async def test_a_hold_defers_new_jobs_until_the_receipt_is_done() -> None:
    scheduler, rec = Lanes(cap=4, max_defer=5.0), Recorder()
    release = asyncio.Event()
    scheduler.submit("a", rec.job("a1", release))
    await settle()
    with scheduler.hold():  # a webhook is being received and stored
        scheduler.submit("b", rec.job("b1"))
        scheduler.submit("c", rec.job("c1"))
        await asyncio.sleep(0.05)
        assert rec.started == ["a1"]  # running jobs go on; nothing new starts
        assert rec.started == ["a1"]
    await settle()
    # A lone receipt is no burst: its first job starts at once (not ``quiet`` later, which every
    # single message paid: 100 ms of a voice note's turn in benchmarks/media.py) ...
    assert rec.started == ["a1", "b1"]
    await asyncio.sleep(scheduler.quiet / 2)
    assert rec.started == ["a1", "b1"]  # ... the rest wait: another receipt may follow at once
    await asyncio.sleep(scheduler.quiet)
    await settle()
    assert rec.started == ["a1", "b1", "c1"]  # the receipts went quiet: they start, in order
    release.set()
    await scheduler.drain(1.0)


async def test_jobs_wait_out_the_short_gaps_between_the_receipts_of_a_burst() -> None:
    # Seen in benchmarks/webhook.py: with 50 clients posting, the hold fell to zero for an
    # instant between two receipts, 32 turns started at once, and the receipts behind them
    # waited 200 ms for the event loop.
    # The first receipt, lone until the second arrives, may start its one job at once; no other
    # starts before the receipts go quiet.
    scheduler, rec = Lanes(cap=4, max_defer=5.0, quiet=0.05), Recorder()
    for i in range(6):
        with scheduler.hold():
            scheduler.submit(f"lane{i}", rec.job(f"j{i}"))
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.01)  # between two receipts
        assert rec.started == ["j0"]
    await asyncio.sleep(0.1)
    await settle()
    assert rec.started == [f"j{i}" for i in range(6)]
    await scheduler.drain(1.0)


async def test_a_hold_defers_by_at_most_max_defer() -> None:
    scheduler, rec = Lanes(cap=4, max_defer=0.5), Recorder()
    loop = asyncio.get_running_loop()
    began = asyncio.Event()

    async def first() -> None:
        began.set()
        await rec.job("a1")()

    with scheduler.hold():  # receipts that never stop coming
        submitted = loop.time()
        scheduler.submit("a", first)
        await asyncio.sleep(0.02)
        assert not began.is_set()
        await asyncio.wait_for(began.wait(), 60)  # the hold never ends: only the timer can start it
        waited = loop.time() - submitted
        assert rec.started == ["a1"] and waited >= 0.45  # started by the timer (not before it), not starved
        scheduler.submit("b", rec.job("b1"))  # the hold period is older than max_defer: no more deferral
        await settle()
        assert rec.started == ["a1", "b1"]
    await scheduler.drain(1.0)


async def test_background_work_of_a_receipt_waits_until_the_burst_is_acknowledged() -> None:
    # A first-time sender's name (Slack's users.info) was looked up among the burst's own acknowledgements.
    scheduler = Lanes(cap=4, max_defer=3600.0, quiet=0.05)  # only the receipts' end can let the waiter go
    loop = asyncio.get_running_loop()
    await asyncio.wait_for(scheduler.receipts_quiet(), 60)  # no burst: at once
    with scheduler.hold():
        quiet = asyncio.create_task(scheduler.receipts_quiet())
        with scheduler.hold():  # the next receipt of the burst
            pass
        await asyncio.sleep(0.1)  # longer than ``quiet``, but a receipt is still being received
        assert not quiet.done()
    ended = loop.time()
    await asyncio.wait_for(quiet, 60)
    assert loop.time() - ended >= 0.04  # quiet for ``quiet`` after the last receipt, as the answers are
    await asyncio.wait_for(scheduler.receipts_quiet(), 60)  # the burst is over
    await scheduler.drain(1.0)


async def test_background_work_of_a_receipt_waits_by_at_most_max_defer_and_not_past_a_drain() -> None:
    scheduler = Lanes(cap=4, max_defer=0.2)
    loop = asyncio.get_running_loop()
    with scheduler.hold():  # receipts that never stop coming
        began = loop.time()
        await asyncio.wait_for(scheduler.receipts_quiet(), 60)
        assert loop.time() - began >= 0.15
    stopping = Lanes(cap=4, max_defer=3600.0)
    with stopping.hold():
        quiet = asyncio.create_task(stopping.receipts_quiet())
        await settle()
        assert not quiet.done()
        await stopping.drain(1.0)
        await asyncio.wait_for(quiet, 60)
    await scheduler.drain(1.0)


async def test_jobs_start_one_per_turn_of_the_event_loop_so_what_arrived_runs_between() -> None:
    # Seen in benchmarks/webhook.py: 32 turns started at the end of a burst ran their first
    # steps back to back, about 6 ms each, and a webhook arriving then waited 200 ms.
    scheduler, order = Lanes(cap=8), []
    forever = asyncio.Event()

    def job(name: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            order.append(name)
            await forever.wait()
        return run

    for i in range(4):
        scheduler.submit(f"lane{i}", job(f"job{i}"))
    asyncio.get_running_loop().call_soon(order.append, "receipt")  # what the loop took in meanwhile
    await settle()
    assert order[:2] == ["job0", "receipt"] and sorted(order) == ["job0", "job1", "job2", "job3", "receipt"]
    assert scheduler.running == 4
    await scheduler.drain(0.05)


async def test_a_job_stepping_aside_gives_its_place_and_takes_the_next_free_one_before_new_jobs() -> None:
    """burst46: a job waiting for a service's pace (stepping_aside) holds no place under the cap; its lane stays
    taken; coming back it waits for a place and gets it before a job not yet started."""
    lanes = Lanes(cap=1)
    log: list[str] = []
    pace, b_done, a_back, all_done = asyncio.Event(), asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def a() -> None:
        log.append("a works")
        async with stepping_aside():
            await pace.wait()
        log.append("a back")
        a_back.set()

    async def a2() -> None:
        log.append("a2")  # the same conversation: never while a's job runs, aside or not
        if len(log) == 6:
            all_done.set()

    async def b() -> None:
        log.append("b starts")
        pace.set()  # a's pace is over while b holds the only place
        await asyncio.sleep(0.01)
        log.append("b ends")
        b_done.set()

    async def c() -> None:
        log.append("c")
        if len(log) == 6:
            all_done.set()

    lanes.submit("A", a)
    lanes.submit("A", a2)
    lanes.submit("B", b)
    lanes.submit("C", c)
    await asyncio.wait_for(a_back.wait(), 10)
    await asyncio.wait_for(b_done.wait(), 10)
    await asyncio.wait_for(all_done.wait(), 10)
    assert log[:4] == ["a works", "b starts", "b ends", "a back"], log  # c waited: a came back first
    assert sorted(log[4:]) == ["a2", "c"], log
    assert lanes.peak == 1


async def test_stepping_aside_outside_a_lane_is_nothing() -> None:
    async with stepping_aside():
        pass


async def test_a_job_giving_its_place_up_lets_the_next_conversation_start_and_still_holds_its_lane() -> None:
    """ack49: a job whose answer is stored gives its place up for good (giving_place_up): the next conversation's
    job starts in it; the job's own lane stays taken until it ends; stepping aside after that takes no place back;
    the replicas' dispatcher is told there is room."""
    lanes = Lanes(cap=1)
    log: list[str] = []
    spare: list[int] = []
    lanes.when_spare(lambda: spare.append(lanes.spare))
    delivered, b_ran, all_done = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def a() -> None:
        log.append("a works")
        giving_place_up()
        giving_place_up()  # twice: nothing more
        async with stepping_aside():  # e.g. a service's pace while delivering: no place is taken back
            await b_ran.wait()
        await delivered.wait()
        log.append("a delivered")

    async def a2() -> None:
        log.append("a2")  # the same conversation: only once a's job ended
        all_done.set()

    async def b() -> None:
        log.append("b")
        assert lanes.running == 2 and lanes.stepped_aside == 1
        load = lanes.load()  # the operations page: one turn under the cap of 1, one answer on its way beside it
        assert (load.working, load.running, load.cap) == (1, 2, 1), load
        b_ran.set()
        await asyncio.sleep(0)
        delivered.set()

    lanes.submit("A", a)
    lanes.submit("A", a2)
    lanes.submit("B", b)
    await asyncio.wait_for(all_done.wait(), 10)
    assert log == ["a works", "b", "a delivered", "a2"], log
    assert lanes.peak == 1  # never two holding a place
    assert spare and spare[0] >= 0


def test_giving_a_place_up_outside_a_lane_is_nothing() -> None:
    giving_place_up()


async def test_at_most_cap_jobs_go_on_without_a_place() -> None:
    """ack49: the channels' connection pools are sized for ``cap`` turns and as many deliveries: a job giving its
    place up while ``cap`` jobs are without one already keeps its place (the next job waits for it)."""
    lanes = Lanes(cap=1)
    log: list[str] = []
    release, b_gave, all_done = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def a() -> None:
        giving_place_up()  # the one job allowed without a place
        await release.wait()
        log.append("a done")

    async def b() -> None:
        giving_place_up()  # refused: a is without a place already, so b keeps its place
        b_gave.set()
        await release.wait()
        log.append("b done")

    async def c() -> None:
        log.append("c")
        all_done.set()

    lanes.submit("A", a)
    lanes.submit("B", b)
    lanes.submit("C", c)
    await asyncio.wait_for(b_gave.wait(), 10)
    for _ in range(5):
        await asyncio.sleep(0)
    assert log == [] and lanes.running == 2 and lanes.stepped_aside == 1  # c waits for b's place
    release.set()
    await asyncio.wait_for(all_done.wait(), 10)
    assert log[-1] == "c", log
