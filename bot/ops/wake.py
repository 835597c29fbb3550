"""Waking the running daemon's scheduled work from another process on the same data dir (SQLite).

``sabha actions due N WHEN`` (or any command that adds or moves a scheduled row) changes the table from
another process; the daemon's runner must look again at once, not at its next periodic look
(``state.schedule_recheck_s``). On PostgreSQL ``NOTIFY`` does it for every replica
(:meth:`board.schedule.Schedule.listening`). On SQLite the daemon is on this host: the command reads
``<data_dir>/daemon.json`` (:mod:`bot.ops.runtime`: pid, host, port) and posts to the daemon's
``POST`` :data:`WAKE_PATH`; the daemon answers 204 and wakes its runner. No daemon running, or one that
does not answer: nothing happens (it finds the change when it next looks).

The endpoint takes no token: all it does is make the runner look at its table once more (wake-ups
coalesce), which costs what a ``/readyz`` probe costs. It answers only the loopback addresses (the
command runs on the daemon's host); anyone else gets 403.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bot.ops.runtime import local_base, read_runtime

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["WAKE_PATH", "WAKE_TIMEOUT_S", "wake_daemon", "wake_route"]

log = logging.getLogger("sabha.wake")

WAKE_PATH = "/schedule/wake"
WAKE_TIMEOUT_S = 3.0


async def wake_daemon(data_dir: Path) -> bool:
    """Wake the scheduled work of the daemon running on ``data_dir``; whether it said so."""
    import aiohttp  # here: `sabha ask` and friends never load it unless they changed scheduled work

    info = read_runtime(data_dir)
    if info is None or not info.alive():
        return False
    url = local_base(info.host, info.port) + WAKE_PATH
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAKE_TIMEOUT_S)) as http, \
                http.post(url) as resp:
            woke = resp.status == 204
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        log.info("the daemon (pid %d) did not answer its wake-up at %s (%s); it sees the change when it next "
                 "looks at the table (state.schedule_recheck_s)", info.pid, url, exc)
        return False
    if woke:
        log.debug("woke the daemon's scheduled work (pid %d)", info.pid)
    return woke


def _loopback(remote: str | None) -> bool:
    try:
        return remote is not None and ipaddress.ip_address(remote).is_loopback
    except ValueError:
        return False


def wake_route(wake: Callable[[], None]) -> web.RouteDef:
    """The daemon's ``POST`` :data:`WAKE_PATH`: 204 and ``wake()`` from this host, else 403."""
    from aiohttp import web

    async def handle(request: web.Request) -> web.Response:
        if not _loopback(request.remote):
            return web.Response(status=403, text="only a command on this host wakes the scheduled work")
        wake()
        return web.Response(status=204)

    return web.post(WAKE_PATH, handle)
