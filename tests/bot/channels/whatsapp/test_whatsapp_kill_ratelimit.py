"""A reply WhatsApp refused with its throughput limit (130429: nothing posted) is sent after a kill
during the pause before its retry, exactly once; it is not written off as "may have arrived".
(The reviewer found this for Telegram's 429 on reminders and replies; WhatsApp's pause had the same gap.)"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from aiohttp import ClientSession

from tests.bot.channels.whatsapp.test_whatsapp_durability import USERS, answered, write_config
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.whatsapp import APP_SECRET, post, text_notification


async def test_a_kill_during_the_throughput_pause_leaves_the_reply_to_be_sent(
        tmp_path: Path, fake_graph: FakeGraphAPI, echo_model: EchoModel) -> None:
    env = {"WHATSAPP_ACCESS_TOKEN": fake_graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    sabha = SabhaProcess(write_config(tmp_path, fake_graph, echo_model), env=env)
    user = USERS[0]
    try:
        await sabha.start()
        url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
        fake_graph.fail_next(130429, user=user)  # the number's throughput limit: Meta posted nothing
        async with ClientSession() as http:
            status, _ = await post(http, url, text_notification(user, "Q001 first"))
            assert status == 200

            async def refused_once() -> None:
                while not fake_graph.refused:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)

            await asyncio.wait_for(refused_once(), 30)
            await sabha.wait_for_log("throughput limit was hit", timeout=30)  # the daemon read the refusal
            assert not answered(fake_graph)  # refused; the daemon pauses before the retry
            await sabha.signal(signal.SIGKILL)
            await sabha.start()
            url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
            status, _ = await post(http, url, text_notification(user, "Q002 marker"))
            assert status == 200

            async def marker() -> None:
                while answered(fake_graph)["Q002"] == 0:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)

            await asyncio.wait_for(marker(), 30)
        assert answered(fake_graph)["Q001"] == 1, sabha.log  # sent after the restart, once
        assert "may have arrived" not in sabha.log
    finally:
        await sabha.close()
