"""The notify protocol, unit by unit: datagrams to a path or an abstract socket, nothing
raised without a socket or with a dead one, and the watchdog interval from the environment."""

from __future__ import annotations

import asyncio
import os
import socket

from bot.ops.notify import Notifier, watchdog_interval, watchdog_pings
from bot.ops.signals import StopSignals, exit_code_for
from tests.support.ops import NotifyListener
from tests.support.telegram import eventually


async def test_datagrams_reach_a_path_socket_and_an_abstract_one() -> None:
    for abstract in (False, True):
        async with NotifyListener(abstract=abstract) as systemd:
            notifier = Notifier(systemd.env)
            assert notifier.enabled
            assert notifier.ready("up") and notifier.status("two\nlines") and notifier.stopping()
            await systemd.wait_for("STOPPING=1")
            assert systemd.datagrams == [["READY=1", "STATUS=up"], ["STATUS=two lines"], ["STOPPING=1"]]


def test_a_missing_or_bad_socket_never_raises() -> None:
    assert not Notifier({}).enabled and Notifier({}).ready() is False
    dead = Notifier({"NOTIFY_SOCKET": "/nonexistent/dir/notify"})
    assert dead.ready() is False and dead.watchdog() is False and dead.failed == 2
    assert Notifier({"NOTIFY_SOCKET": "@sabha-test-nobody-binds-this"}).status("x") is False
    assert Notifier({"NOTIFY_SOCKET": "relative/path"}).enabled is False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stream_sock:  # wrong socket type
        path = f"/tmp/sabha-stream-{os.getpid()}"
        stream_sock.bind(path)
        try:
            assert Notifier({"NOTIFY_SOCKET": path}).ready() is False
        finally:
            os.unlink(path)


def test_watchdog_interval_is_half_of_watchdog_usec_for_this_process() -> None:
    assert watchdog_interval({}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}) == 15.0
    assert watchdog_interval({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}) is None  # another process's
    assert watchdog_interval({"WATCHDOG_USEC": "soon"}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "0"}) is None


async def test_watchdog_pings_until_stopped() -> None:
    async with NotifyListener() as systemd:
        stop = asyncio.Event()
        task = asyncio.create_task(watchdog_pings(Notifier(systemd.env), 0.01, stop))
        await eventually(lambda: systemd.lines.count("WATCHDOG=1") >= 3, "three pings", timeout=15)
        stop.set()
        await asyncio.wait_for(task, 5)


def test_second_signal_exits_with_128_plus_the_signal() -> None:
    import signal

    stops: list[int] = []
    exits: list[int] = []
    cleaned: list[bool] = []
    handler = StopSignals(lambda: stops.append(1), before_exit=lambda: cleaned.append(True), exit=exits.append)
    handler.handle(signal.SIGTERM)
    assert stops == [1] and exits == []
    handler.handle(signal.SIGINT)
    assert exits == [130] and cleaned == [True]
    assert exit_code_for(signal.SIGTERM) == 143
