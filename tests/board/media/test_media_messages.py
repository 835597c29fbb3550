"""What a sender is told about media (review finding 9), on a real ``sabha run`` with WhatsApp on the
fake Graph API in public mode:

- a picture sent as a WhatsApp *document* (photo.jpg, IMG_0001.HEIC) is told to send it as a photo,
  not that it "is not a format I read; send a PDF, DOCX ...";
- the owner, refused because the whole store is full, is told which setting to change (a stranger is
  told to write the question as text, with no config key);
- a download that goes on past the size the service declared is told it arrived other than announced,
  not that the sender's quota is full.
"""

from __future__ import annotations

import os
from typing import Any

from tests.board.media.test_media_limits import RedirectingGraph, _answer, _noise_png, graph, start  # noqa: F401
from tests.bot.channels.whatsapp.test_whatsapp_media import Daemon, media_message
from tests.support.whatsapp import OWNER, STRANGER


async def _document(daemon: Daemon, api: RedirectingGraph, user: str, data: bytes, mime: str, name: str,
                    tag: str, **declared: Any) -> str:
    item = media_message("document", api.add_media(data, mime, **declared), user=user, mime_type=mime,
                         filename=name, caption=f"{tag} look")
    await daemon.post(item)
    return await _answer(daemon, item)


async def test_a_picture_sent_as_a_document_is_told_to_send_it_as_a_photo(
    start: Any, graph: RedirectingGraph  # noqa: F811 - test_media_limits' fixtures
) -> None:
    daemon = await start([])
    for name, mime, tag in (("photo.jpg", "image/jpeg", "P1"), ("IMG_0001.HEIC", "image/heic", "P2")):
        answer = await _document(daemon, graph, STRANGER, os.urandom(2000), mime, name, tag)
        assert tag in answer and "send it as a photo" in answer, answer
        assert "send a PDF" not in answer, answer


async def test_the_owner_refused_by_a_full_store_is_told_which_setting_to_change(
    start: Any, graph: RedirectingGraph  # noqa: F811 - test_media_limits' fixtures
) -> None:
    daemon = await start(["quota_total_mb: 0.5"])
    first = await _document(daemon, graph, OWNER, b"a" * 400_000, "text/plain", "one.txt", "O1")
    assert "I did not download" not in first, first
    owner = await _document(daemon, graph, OWNER, b"b" * 300_000, "text/plain", "two.txt", "O2")
    assert "file store is full" in owner and "media.quota_total_mb" in owner and "media.keep_days" in owner, owner
    stranger = await _document(daemon, graph, STRANGER, b"c" * 300_000, "text/plain", "three.txt", "S1")
    assert "file store is full" in stranger and "media." not in stranger, stranger


async def test_a_download_longer_than_declared_is_not_called_a_quota_refusal(
    start: Any, graph: RedirectingGraph  # noqa: F811 - test_media_limits' fixtures
) -> None:
    daemon = await start(["quota_stranger_mb: 0.3"])
    data = _noise_png()  # about 400 KB, declared as 100 KB
    item = media_message("image", graph.add_media(data, "image/png", size=100_000), user=STRANGER,
                         mime_type="image/png", caption="L1 look")
    await daemon.post(item)
    answer = await _answer(daemon, item)
    assert "I keep for one person" not in answer and "I did not download" not in answer, answer
    assert "not the 100,000 bytes" in answer or "more bytes than" in answer, answer
