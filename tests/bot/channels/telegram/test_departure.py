"""The "sending" mark is taken as a Telegram request starts to be written, not while it waits for a pooled
connection (bot/channels/telegram/departure.py): real PTB against the fake Bot API, a pool of one connection
held by a typing request."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from telegram import Bot

from bot.channels.telegram.departure import departure_hooks
from bot.channels.telegram.files import FileRequest
from bot.channels.telegram.outbound import Outbound, Target
from bot.intake.delivery import SendProgress
from bot.intake.inbox import LeaseLost
from tests.support.kill import HoldingTelegramAPI, wait_for
from tests.support.telegram import OWNER, TOKEN


@pytest.fixture
async def telegram() -> AsyncIterator[HoldingTelegramAPI]:
    async with HoldingTelegramAPI(token=TOKEN) as server:
        yield server


@pytest.fixture
async def outbound(telegram: HoldingTelegramAPI) -> AsyncIterator[Outbound]:
    request = FileRequest(connection_pool_size=1, pool_timeout=30.0, httpx_kwargs=departure_hooks())
    bot = Bot(TOKEN, base_url=telegram.base_url, request=request)
    await bot.initialize()
    try:
        yield Outbound(bot)
    finally:
        await bot.shutdown()


async def test_a_reply_waiting_for_a_connection_is_not_marked_sending(telegram: HoldingTelegramAPI,
                                                                       outbound: Outbound) -> None:
    marks: list[str] = []

    async def mark() -> None:
        marks.append("sending")

    telegram.hold("sendChatAction")
    typing = asyncio.create_task(outbound.typing(Target(OWNER)))  # takes the pool's one connection
    await wait_for(lambda: telegram.waiting("sendChatAction") == 1, "the typing request held")
    progress = SendProgress(before_first_request=mark)
    send = asyncio.create_task(outbound.send(Target(OWNER), "the answer", progress=progress))
    await asyncio.sleep(0.3)  # it waits for the connection: nothing left, so nothing may be marked
    assert marks == [] and progress.untouched and not telegram.calls_to("sendMessage")
    telegram.release("sendChatAction")
    await asyncio.wait_for(asyncio.gather(typing, send), 30)
    assert marks == ["sending"] and [m.text for m in telegram.sent_messages] == ["the answer"]


async def test_a_mark_that_cannot_be_stored_stops_the_request_with_its_own_error(telegram: HoldingTelegramAPI,
                                                                                 outbound: Outbound) -> None:
    async def lost() -> None:
        raise LeaseLost("another replica holds the conversation")

    with pytest.raises(LeaseLost, match="another replica"):
        await outbound.send(Target(OWNER), "a late answer", progress=SendProgress(before_first_request=lost))
    assert telegram.sent_messages == [] and outbound.unknown == 0
