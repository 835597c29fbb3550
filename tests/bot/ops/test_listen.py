"""Listening on a configured port (bot.ops.listen.bind_site), shared by the daemon, its start-up stand-in and the
front desk: the port taken (0 picks one), and a port in use named with the setting to change."""

from __future__ import annotations

import socket

import pytest
from aiohttp import web

from bot.ops.listen import bind_site


async def test_port_zero_gives_the_port_taken_and_a_port_in_use_names_the_setting() -> None:
    runner = web.AppRunner(web.Application())
    await runner.setup()
    other = web.AppRunner(web.Application())
    await other.setup()
    try:
        port = await bind_site(runner, "127.0.0.1", 0, "port")
        assert port > 0
        with socket.create_connection(("127.0.0.1", port)):
            pass  # listening there
        with pytest.raises(OSError, match=r"^front desk: cannot listen on 127\.0\.0\.1:\d+ \(.+\); change "
                           r"server\.front_desk_port in the config or stop the other process$"):
            await bind_site(other, "127.0.0.1", port, "front_desk_port", who="front desk")
        with pytest.raises(OSError, match=r"^cannot listen on .*change server\.port in the config"):
            await bind_site(other, "127.0.0.1", port, "port")
    finally:
        await other.cleanup()
        await runner.cleanup()
