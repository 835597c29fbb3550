"""Pictures and the daemon's memory (issue item 5), on a real ``sabha run`` with WhatsApp on the fake
Graph API: a 7000x7000 RGBA PNG (about 190 KB sent, 196 MB decoded) is decoded and scaled in a
child process under a memory ceiling, so the daemon's own peak stays low and its resident memory
comes back; a picture that needs more than the ceiling is told to the sender in one line and the
daemon goes on answering."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession, ClientTimeout

from tests.bot.channels.whatsapp.test_whatsapp_media import Daemon, ShowModel, media_message
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.media_memory import big_png, numbered, rss
from tests.support.telegram import eventually
from tests.support.whatsapp import FRIEND, OWNER

#: Generous bounds for a loaded machine: they only say "the answer came", never how fast.
ANSWER_S = 600.0
SIDE = 7000
#: What the daemon may grow by while pictures are read: a decode in its own process adds at
#: least SIDE x SIDE x 4 bytes (196 MB) for one picture.
PEAK_GROWTH_MB = 150.0
SETTLED_GROWTH_MB = 60.0


@pytest.fixture
async def daemon(tmp_path: Path, fake_graph: FakeGraphAPI) -> AsyncIterator[Daemon]:
    async with ShowModel(latency=0.01) as model, ClientSession(timeout=ClientTimeout(total=60)) as http:
        d = Daemon(tmp_path, fake_graph, model, http)
        try:
            yield d
        finally:
            if d.sabha is not None:
                await d.sabha.close()


async def _answer(daemon: Daemon, wamid: str) -> str:
    """The model's answer to ``wamid`` (``SAW ...``; a slow-answer notice before it is passed over)."""
    def said() -> list[str]:
        return [a for a in daemon.answers_to(wamid) if "SAW " in a]

    await eventually(said, f"the answer to {wamid}", timeout=ANSWER_S)
    return said()[0]


def _pid(daemon: Daemon) -> int:
    assert daemon.sabha is not None and daemon.sabha.proc is not None
    return daemon.sabha.proc.pid


async def test_large_pictures_leave_the_daemons_memory_where_it_was(daemon: Daemon, fake_graph: FakeGraphAPI) -> None:
    await daemon.start()
    for user in (FRIEND, OWNER):  # warm up: a turn in each conversation, so what follows is the pictures' cost
        await daemon.marker(user, "WARM")
    idle = rss(_pid(daemon))
    png = big_png(SIDE)
    items = [media_message("image", fake_graph.add_media(numbered(png, n), "image/png"), user=user,
                           mime_type="image/png", caption=f"PIC{n} what is this?")
             for n, user in enumerate((FRIEND, OWNER, FRIEND, OWNER))]
    await asyncio.gather(*(daemon.post(item) for item in items))
    answers = [await _answer(daemon, item["id"]) for item in items]
    for n, answer in enumerate(answers):
        assert f"PIC{n}" in answer and f"{SIDE}x{SIDE}" in answer, answer
        assert "[image_url part]" in answer, answer  # the scaled copy still reaches a model that sees
    await daemon.marker(FRIEND)
    after = rss(_pid(daemon))
    peak, settled = after["VmHWM"] - idle["VmRSS"], after["VmRSS"] - idle["VmRSS"]
    assert peak < PEAK_GROWTH_MB, f"the daemon's peak grew by {peak:.0f} MB over idle ({idle} -> {after})"
    assert settled < SETTLED_GROWTH_MB, f"the daemon's RSS stayed {settled:.0f} MB over idle ({idle} -> {after})"


async def test_a_picture_over_the_memory_ceiling_is_told_and_the_daemon_goes_on(
    daemon: Daemon, fake_graph: FakeGraphAPI
) -> None:
    await daemon.start(media=["image_memory_mb: 160"])
    item = media_message("image", fake_graph.add_media(big_png(SIDE), "image/png"), mime_type="image/png",
                         caption="CEILING what is this?")
    await daemon.post(item)
    answer = await _answer(daemon, item["id"])
    assert "CEILING" in answer and "too large to read" in answer, answer
    assert "media.image_memory_mb" not in answer, answer  # a config key is for the owner: in the log
    assert daemon.sabha is not None and "media.image_memory_mb" in daemon.sabha.log
    assert "AFTER" in await daemon.marker(FRIEND, "AFTER")  # the daemon is alive and answering
    assert daemon.sabha is not None and daemon.sabha.proc is not None and daemon.sabha.proc.returncode is None
    assert len([a for a in daemon.answers_to(item["id"]) if "SAW " in a]) == 1
