"""A linked person's files on Telegram and WhatsApp count against one quota, on a real ``sabha run`` with
both channels (issue 36, item 6's leftovers).

The friend's two accounts are one person (``sabha people link``); each may keep 1 MB of files
(``media.quota_sender_mb``). Two 400 KB pictures sent on Telegram leave about 200 KB: a third sent on
WhatsApp is refused before download, as it would be on Telegram, not given a second 1 MB.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import ClientSession

from tests.board.media.test_media_quota_kept import _noise_png
from tests.board.people.test_people_link import _sabha
from tests.bot.channels.telegram.test_telegram_media import picture
from tests.bot.channels.whatsapp.test_whatsapp_media import media_message
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.telegram_api import FakeTelegramAPI, photo
from tests.support.people import BothChannels, people_config
from tests.support.telegram import FRIEND, eventually
from tests.support.whatsapp import FRIEND as WA_FRIEND
from tests.support.whatsapp import notification, post

ANSWER_S = 300.0  # only "the answer came": a bound for a loaded machine, never a speed
CONFIG = ["media:", "  quota_sender_mb: 1"]


@pytest.fixture
async def http() -> AsyncIterator[ClientSession]:
    async with ClientSession() as session:
        yield session


async def _telegram_picture(both: BothChannels, tag: str) -> str:
    before = len(both.telegram.sent_to(FRIEND))
    thumb = both.telegram.add_file(picture(2, 2), name=f"{tag}-thumb.jpg")
    full = both.telegram.add_file(_noise_png(), name=f"{tag}.png")
    both.telegram.push_update(both.telegram.build_media_update(FRIEND, FRIEND, photo(thumb, full),
                                                               caption=f"{tag} what is this?"))
    await eventually(lambda: len(both.telegram.sent_to(FRIEND)) > before, f"the answer to {tag}", timeout=ANSWER_S)
    return "\n".join(m.text for m in both.telegram.sent_to(FRIEND)[before:])


async def _whatsapp_picture(both: BothChannels, tag: str) -> str:
    before = len(both.graph.texts_to(WA_FRIEND))
    item = media_message("image", both.graph.add_media(_noise_png(), "image/png"), user=WA_FRIEND,
                         mime_type="image/png", caption=f"{tag} what is this?")
    status, text = await post(both.http, f"http://127.0.0.1:{both.sabha.port}/whatsapp/webhook",
                              notification([item]))
    assert status == 200, text
    await eventually(lambda: len(both.graph.texts_to(WA_FRIEND)) > before, f"the answer to {tag}", timeout=ANSWER_S)
    return "\n".join(both.graph.texts_to(WA_FRIEND)[before:])


async def test_a_linked_persons_files_on_both_channels_count_against_one_quota(
    tmp_path: Path, fake: FakeTelegramAPI, fake_graph: FakeGraphAPI, fake_openai: FakeOpenAI, http: ClientSession
) -> None:
    people_config(tmp_path, fake, fake_graph, fake_openai, extra=CONFIG)
    out = await _sabha(tmp_path, "people", "link", f"telegram:{FRIEND}", f"whatsapp:{WA_FRIEND}")
    assert "linked" in out and "person:1" in out, out
    both = await BothChannels.start(tmp_path, fake, fake_graph, fake_openai, http, extra=CONFIG)
    try:
        for tag in ("T1", "T2"):
            answer = await _telegram_picture(both, tag)
            assert "I did not download" not in answer, answer
        third = await _whatsapp_picture(both, "W3")
        assert "I did not download" in third and "I keep for one person" in third, third
    finally:
        await both.close()
