"""The daemon's interpreter settings after start (bot.ops.interpreter): what start-up made is out of the
collector's sight, and a thread waiting for the GIL (the express connection's commit of a webhook's claim, the
front desk) waits at most 1 ms, not Python's default 5 ms."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

import pytest

from bot.ops.interpreter import SWITCH_INTERVAL_S, settle_after_start


@pytest.fixture
def _restored() -> Iterator[None]:
    interval = sys.getswitchinterval()
    yield
    sys.setswitchinterval(interval)
    gc.unfreeze()


@pytest.mark.usefixtures("_restored")
def test_after_start_the_switch_interval_is_short_and_start_up_s_objects_are_frozen() -> None:
    sys.setswitchinterval(0.005)  # Python's default
    made = [object() for _ in range(10)]  # noqa: F841 - kept alive: start-up's objects
    settle_after_start()
    assert sys.getswitchinterval() <= SWITCH_INTERVAL_S <= 0.001
    assert gc.get_freeze_count() > 0
