"""Strangers cannot keep the owner's pictures waiting (review finding 6), on a real ``sabha run`` with
WhatsApp on the fake Graph API in public mode: pictures are read in at most two child processes at
once; strangers' pictures may hold only one of them, so a picture from the owner (or an allowed
person) is read at once even while strangers send big pictures.
"""

from __future__ import annotations

from typing import Any

from tests.board.media.test_media_limits import STRANGER_2, RedirectingGraph, _answer, _blobs, graph, start  # noqa: F401
from tests.bot.channels.telegram.test_telegram_media import picture
from tests.bot.channels.whatsapp.test_whatsapp_media import media_message
from tests.support.media_memory import big_png, numbered
from tests.support.telegram import eventually
from tests.support.whatsapp import OWNER, STRANGER

ANSWER_S = 600.0  # only "the answer came": a bound for a loaded machine, never a speed


async def test_the_owners_picture_is_read_while_strangers_big_pictures_wait(
    start: Any, graph: RedirectingGraph  # noqa: F811 - test_media_limits' fixtures
) -> None:
    daemon = await start([])
    png = big_png(7000)
    strangers = [media_message("image", graph.add_media(numbered(png, n), "image/png"), user=user,
                               mime_type="image/png", caption=f"BIG{n} look")
                 for n, user in enumerate((STRANGER, STRANGER_2))]
    for item in strangers:
        await daemon.post(item)
    await eventually(lambda: len(_blobs(daemon)) >= 2, "the strangers' pictures downloaded", timeout=ANSWER_S)
    owner = media_message("image", graph.add_media(picture(40, 30), "image/jpeg"), user=OWNER,
                          mime_type="image/jpeg", caption="MINE look")
    await daemon.post(owner)
    owner_answer = await _answer(daemon, owner)
    assert "MINE" in owner_answer and "40x30" in owner_answer, owner_answer
    answered_first = [item["id"] for item in strangers if daemon.answers_to(item["id"])]
    assert answered_first == [], "the owner's small picture waited for the strangers' big ones"
    for item in strangers:
        assert "7000x7000" in await _answer(daemon, item)
