"""A refused file is not deleted while another message keeps the same bytes (review finding 4), on a
real ``sabha run`` with WhatsApp on the fake Graph API.

The store is content-addressed: the same bytes sent twice are one file. A stranger sends a text file as
an "image" (refused once read: not a picture) and, while the stranger's picture reader waits for a slot
(two big pictures are being decoded), the owner sends the same bytes as report.txt: the owner's copy
finds the file already there, is read and recorded; the stranger's refusal must not delete it then.
"""

from __future__ import annotations

import hashlib
from typing import Any

from tests.board.media.test_media_limits import STRANGER_2, RedirectingGraph, _answer, _blobs, graph, start  # noqa: F401
from tests.bot.channels.whatsapp.test_whatsapp_media import media_message
from tests.support.media_memory import big_png, numbered
from tests.support.telegram import eventually
from tests.support.whatsapp import FRIEND, OWNER, STRANGER

ANSWER_S = 600.0  # only "the answer came": a bound for a loaded machine, never a speed
NOTES = b"Board notes\nQ3 revenue was 42 lakh; churn fell to 3 percent.\n" * 20


async def test_a_refused_file_does_not_delete_the_bytes_another_message_keeps(
    start: Any, graph: RedirectingGraph  # noqa: F811 - test_media_limits' fixtures
) -> None:
    daemon = await start([])
    png = big_png(7000)
    busy = [media_message("image", graph.add_media(numbered(png, n), "image/png"), user=user,
                          mime_type="image/png", caption=f"BIG{n} look")
            for n, user in enumerate((FRIEND, STRANGER_2))]
    for item in busy:  # both picture slots taken for seconds
        await daemon.post(item)
    await eventually(lambda: len(_blobs(daemon)) >= 2, "the big pictures downloaded", timeout=ANSWER_S)
    digest = hashlib.sha256(NOTES).hexdigest()
    path = daemon.root / "sessions" / "media" / digest[:2] / digest[2:]
    stranger = media_message("image", graph.add_media(NOTES, "image/jpeg"), user=STRANGER, mime_type="image/jpeg",
                             caption="S1 what is this?")
    await daemon.post(stranger)
    await eventually(path.exists, "the stranger's file downloaded", timeout=ANSWER_S)
    owner = media_message("document", graph.add_media(NOTES, "text/plain"), user=OWNER, mime_type="text/plain",
                          filename="report.txt", caption="O1 summarise")
    await daemon.post(owner)
    owner_answer = await _answer(daemon, owner)
    assert "42 lakh" in owner_answer, owner_answer
    stranger_answer = await _answer(daemon, stranger)
    assert "S1" in stranger_answer and "could not be read" in stranger_answer, stranger_answer
    for item in busy:
        await _answer(daemon, item)
    assert path.exists(), "the stranger's refusal deleted the file the owner's message keeps"
