"""Helpers for the readers tests (tests/test_readers_*.py): a ``sabha run`` on the fake Bot API
(``tg``) or on the fake Graph API (``wa``), both with a model that answers with what it received,
and waiting for the answer to a captioned message."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession, ClientTimeout

from tests.bot.channels.telegram.test_telegram_media import ShowModel as TelegramShowModel
from tests.bot.channels.whatsapp.test_whatsapp_media import Daemon, media_message
from tests.bot.channels.whatsapp.test_whatsapp_media import ShowModel as WhatsAppShowModel
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER

__all__ = ["XLSX_MIME", "Daemon", "marker_answered", "media_message", "telegram_answer", "tg", "wa"]

XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@pytest.fixture
async def tg(request: pytest.FixtureRequest, tmp_path: Path, fake: FakeTelegramAPI) -> AsyncIterator[SabhaProcess]:
    """``sabha run`` on the fake Bot API; ``media:`` lines by indirect parametrisation."""
    lines: list[str] = list(getattr(request, "param", []))
    extra = ["media:", *(f"  {line}" for line in lines)] if lines else []
    async with TelegramShowModel() as model:
        process = SabhaProcess(write_config(tmp_path, fake, model, extra=extra))
        try:
            await process.start()
            yield process
        finally:
            await process.close()


@pytest.fixture
async def wa(tmp_path: Path, fake_graph: FakeGraphAPI) -> AsyncIterator[Daemon]:
    """A :class:`Daemon` on the fake Graph API (call its ``start``)."""
    async with WhatsAppShowModel(latency=0.05) as model, ClientSession(timeout=ClientTimeout(total=20)) as http:
        daemon = Daemon(tmp_path, fake_graph, model, http)
        try:
            yield daemon
        finally:
            if daemon.sabha is not None:
                await daemon.sabha.close()


async def telegram_answer(fake: FakeTelegramAPI, caption: str, timeout: float = 120) -> str:
    """The answer to the message captioned ``caption`` in the owner's DM: sent, or a slow turn's
    "working on it" notice edited into it (waits for it)."""

    def found() -> list[str]:
        return [m.text for m in (*fake.sent_to(OWNER), *fake.edited_messages) if caption in m.text]

    await fake.wait_until(found, f"the answer to {caption!r}", timeout=timeout)
    return found()[-1]


async def marker_answered(fake: FakeTelegramAPI, word: str = "MARKER after the media", timeout: float = 60) -> None:
    """Send a marker to the owner's DM and wait for its answer: everything before it is answered
    (one sender's messages are answered in order), however many messages each answer took."""
    fake.push_text(OWNER, OWNER, word)
    await fake.wait_until(lambda: any(word in m.text for m in fake.sent_to(OWNER)), f"the answer to {word!r}",
                          timeout=timeout)
