"""Waking the running daemon's scheduled work from another process on the same data dir (SQLite).

``sabha actions due N WHEN`` (or any command that adds or moves a scheduled row) changes the table from
another process; the daemon's runner must look again at once, not at its next periodic look
(``state.schedule_recheck_s``). On PostgreSQL ``NOTIFY`` does it for every replica
(:meth:`board.schedule.Schedule.listening`). On SQLite the daemon is on this host: the command reads
``<data_dir>/daemon.json`` (:mod:`bot.ops.runtime`) and posts to the daemon's ``POST`` :data:`WAKE_PATH`
with the token written there (:data:`TOKEN_HEADER`); the daemon answers 204 and wakes its runner. No
daemon running, or one that does not answer: nothing happens (it finds the change when it next looks).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from pathlib import Path

import aiohttp
from aiohttp import web

from bot.ops.runtime import read_runtime

__all__ = ["TOKEN_HEADER", "WAKE_PATH", "WAKE_TIMEOUT_S", "wake_daemon", "wake_route"]

log = logging.getLogger("sabha.wake")

WAKE_PATH = "/schedule/wake"
TOKEN_HEADER = "X-Sabha-Wake-Token"
WAKE_TIMEOUT_S = 3.0
_LOCAL = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}  # wildcards: reached locally


async def wake_daemon(data_dir: Path) -> bool:
    """Wake the scheduled work of the daemon running on ``data_dir``; whether it said so."""
    info = read_runtime(data_dir)
    if info is None or not info.wake_token or not info.alive():
        return False
    host = _LOCAL.get(info.host, info.host)
    url = f"http://{f'[{host}]' if ':' in host else host}:{info.port}{WAKE_PATH}"
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAKE_TIMEOUT_S)) as http, \
                http.post(url, headers={TOKEN_HEADER: info.wake_token}) as resp:
            woke = resp.status == 204
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        log.info("the daemon (pid %d) did not answer its wake-up at %s (%s); it sees the change when it next "
                 "looks at the table (state.schedule_recheck_s)", info.pid, url, exc)
        return False
    if woke:
        log.debug("woke the daemon's scheduled work (pid %d)", info.pid)
    return woke


def wake_route(token: str, wake: Callable[[], None]) -> web.RouteDef:
    """The daemon's ``POST`` :data:`WAKE_PATH`: 204 and ``wake()`` for the right token, else 403."""

    async def handle(request: web.Request) -> web.Response:
        given = request.headers.get(TOKEN_HEADER, "")
        if not token or not hmac.compare_digest(given.encode(), token.encode()):
            return web.Response(status=403, text="wrong or missing wake token (it is in the data dir's daemon.json)")
        wake()
        return web.Response(status=204)

    return web.post(WAKE_PATH, handle)
