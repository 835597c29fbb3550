"""A provider's SDK is imported off the event loop once the daemon is ready (issue 44, "Start-up").

The SDK stand-in here is a real module on disk whose import blocks until the test lets it finish: while it
is held, the event loop must keep running (a webhook must still be acknowledged) and a caller of
``settled()`` (a first message) waits for it; afterwards the provider is built, once.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from board.llm.base import LLMProvider
from board.llm.offline import OfflineProvider
from board.llm.registry import ProviderRegistry

GATE = threading.Event()
STARTED = threading.Event()


@pytest.fixture
def slow_sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module named ``slow_sdk_for_test`` whose import waits for :data:`GATE`."""
    GATE.clear()
    STARTED.clear()
    (tmp_path / "slow_sdk_for_test.py").write_text(
        "from tests.board.llm.test_provider_warm_up import GATE, STARTED\n"
        "STARTED.set()\n"
        "assert GATE.wait(60), 'the test never let the import finish'\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "slow_sdk_for_test"
    GATE.set()
    sys.modules.pop("slow_sdk_for_test", None)


async def test_the_sdk_is_imported_in_a_thread_and_a_first_caller_waits_for_it(slow_sdk: str) -> None:
    built: list[str] = []

    def factory() -> LLMProvider:
        assert slow_sdk in sys.modules  # built on the loop once the import is done
        built.append("slow")
        return OfflineProvider()

    registry = ProviderRegistry()
    registry.register("slow", factory, module=slow_sdk)
    warming = registry.warm(["slow:model-1", "slow:model-2", "offline"])
    assert await asyncio.to_thread(STARTED.wait, 60)  # the import has begun, in another thread
    ticks = 0
    for _ in range(5):  # the loop runs meanwhile (it would be stuck in the import otherwise)
        await asyncio.sleep(0)
        ticks += 1
    assert ticks == 5 and built == [] and not warming.done()
    first_message = asyncio.create_task(registry.settled())
    await asyncio.sleep(0)
    assert not first_message.done()  # it waits for the SDK
    GATE.set()
    await asyncio.wait_for(first_message, 60)
    assert await warming == [] and built == ["slow"]
    assert registry.built() == ["offline", "slow"]
    await registry.settled()  # nothing running: at once


async def test_a_model_that_cannot_be_built_is_reported_by_the_warm_up() -> None:
    registry = ProviderRegistry()
    registry.register("broken", lambda: (_ for _ in ()).throw(ImportError("No module named 'brokensdk'")),
                      module="board.llm.no_such_module_here")
    problems = await registry.warm(["broken:x", "nosuch:oracle"])
    assert len(problems) == 2
    assert "brokensdk" in problems[0] and "nosuch" in problems[1] and "not configured" in problems[1]
