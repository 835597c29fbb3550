"""The garbage collector waits while a burst of webhooks is acknowledged (bot.intake.collector), within bounds."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator

import pytest

from bot.intake.collector import CollectorPause
from bot.intake.intake import IntakeHub
from tests.support.telegram import eventually


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


async def until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` (the pause's timers fire on the loop: no fixed sleep decides)."""
    await eventually(condition, "the collector's state", timeout=30)


async def test_a_webhook_received_through_the_hub_waits_for_no_collection_until_quiet() -> None:
    hub = IntakeHub()
    hub.collector.quiet = 0.01
    with hub.receiving():  # what every channel's webhook handler wraps its receipt in
        assert not gc.isenabled(), "a receipt ran with the cyclic collector on: a collection can stall its 200"
        with hub.receiving():
            assert not gc.isenabled()
    assert not gc.isenabled()  # the burst is not over until receipts were quiet for a while
    await until(gc.isenabled)
    assert hub.collector.paused == 1


async def test_a_stream_of_receipts_gets_the_collector_back_after_most_seconds() -> None:
    pause = CollectorPause(quiet=0.05, most=0.2)
    with pause.receiving():
        await until(gc.isenabled)  # still receiving: the cap gave the collector back
        with pause.receiving():
            assert gc.isenabled(), "past the cap, receipts of the same burst must not switch it off again"
    await until(lambda: pause._since is None)  # quiet: the next receipt begins a new burst
    with pause.receiving():
        assert not gc.isenabled()
    pause.close()
    assert gc.isenabled()


async def test_a_collector_switched_off_elsewhere_stays_off() -> None:
    gc.disable()
    pause = CollectorPause(quiet=0.01, most=0.05)
    with pause.receiving():
        pass
    await until(lambda: pause._since is None)
    assert not gc.isenabled()
    assert pause.paused == 0
    pause.close()
    assert not gc.isenabled()
