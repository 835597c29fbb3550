"""The intake's scheduler: order within a conversation, concurrency across, a global cap, fair turns."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from bot.intake.scheduler import Scheduler


def recorder(log: list[str]) -> Callable[..., Callable[[], Awaitable[None]]]:
    def job(name: str, wait: asyncio.Event | None = None) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            log.append(f"start {name}")
            if wait is not None:
                await wait.wait()
            await asyncio.sleep(0)
            log.append(f"end {name}")
        return run
    return job


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_order_within_a_lane_and_lanes_concurrent() -> None:
    lanes = Scheduler(cap=8, name="test")
    log: list[str] = []
    job = recorder(log)
    gate = asyncio.Event()
    lanes.submit("a", job("a1", gate))
    lanes.submit("a", job("a2"))
    lanes.submit("b", job("b1"))
    await settle()
    assert "end b1" in log and "start a2" not in log
    gate.set()
    await settle()
    assert log.index("end a1") < log.index("start a2")
    assert await lanes.drain(1.0)
    assert lanes.lanes == 0 and not lanes.submit("a", job("late"))


async def test_a_failing_job_does_not_stall_its_lane() -> None:
    lanes = Scheduler(cap=2, name="test")
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
    lanes = Scheduler(cap=2, name="test")
    order: list[str] = []
    running = 0
    peak = 0

    def job(name: str) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            order.append(name)
            await asyncio.sleep(0.001)
            running -= 1
        return run

    for i in range(10):
        lanes.submit("busy", job(f"busy{i}"))
    for i in range(9):
        lanes.submit(f"quiet{i}", job(f"quiet{i}"))
    for _ in range(200):
        await asyncio.sleep(0.002)
        if len(order) == 19:
            break
    assert len(order) == 19 and peak == 2 and lanes.peak == 2
    last_quiet = max(order.index(f"quiet{i}") for i in range(9))
    assert last_quiet < 12, order  # round robin: the busy lane got about one turn per round
    assert [n for n in order if n.startswith("busy")] == [f"busy{i}" for i in range(10)]


async def test_drain_cancels_what_outlives_the_grace_and_drops_the_queue() -> None:
    lanes = Scheduler(cap=1, name="test")
    log: list[str] = []
    job = recorder(log)
    never = asyncio.Event()
    lanes.submit("a", job("slow", never))
    lanes.submit("b", job("queued"))
    await settle()
    assert lanes.running == 1 and lanes.waiting == 1
    assert not await lanes.drain(0.05)
    assert log == ["start slow"]  # cancelled; the queued job never started
