"""The media quotas count what is kept, on a real ``sabha run`` (review findings 1 and 5):

- a picture's scaled copy is stored beside the original: a small PNG of repeated noise rows
  (about 70 KB sent) becomes a 1.4 MB JPEG; the sender's quota counts both, so a stranger cannot
  fill the store (and lock out the owner) with pictures that grow x20 once read (WhatsApp);
- an album (one Telegram message with several files) is checked file by file against the room
  left after the files before it, not each against the same starting use.
"""

from __future__ import annotations

import io
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.board.media.test_media_limits import RedirectingGraph, _answer, _blobs, graph, start  # noqa: F401 - fixtures
from tests.bot.channels.telegram.test_telegram_media import ShowModel, picture
from tests.bot.channels.whatsapp.test_whatsapp_media import Daemon, media_message
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI, photo
from tests.support.telegram import FRIEND, eventually
from tests.support.whatsapp import STRANGER

ANSWER_S = 300.0  # only "the answer came": a bound for a loaded machine, never a speed


def growing_png(side: int = 1569) -> bytes:
    """A PNG of three noise rows repeated (about 70 KB), just over the model's side: read, it becomes a
    scaled JPEG of about 1.4 MB (noise does not compress in a JPEG)."""
    rows = os.urandom(side * 3 * 3)
    img = Image.frombytes("RGB", (side, side), (rows * (side // 3 + 1))[: side * side * 3])
    out = io.BytesIO()
    img.save(out, "PNG", optimize=True)
    return out.getvalue()


async def _picture(daemon: Daemon, api: FakeGraphAPI, tag: str) -> str:
    item = media_message("image", api.add_media(growing_png(), "image/png"), user=STRANGER,
                         mime_type="image/png", caption=f"{tag} what is this?")
    await daemon.post(item)
    return await _answer(daemon, item)


async def test_a_strangers_quota_counts_the_scaled_copy_kept_beside_the_original(
    start: Any, graph: RedirectingGraph  # noqa: F811 - test_media_limits' fixtures
) -> None:
    daemon = await start(["quota_stranger_mb: 1"])
    first = await _picture(daemon, graph, "G1")
    assert "G1" in first and "I did not download" not in first, first
    stored = sum(p.stat().st_size for p in _blobs(daemon))
    assert stored > 2**20, f"the picture and its copy take {stored:,} bytes"  # more than the 1 MB quota
    second = await _picture(daemon, graph, "G2")
    assert "I did not download" in second and "I keep for one person" in second, second
    assert "MARK" in await daemon.marker(STRANGER, "MARK")
    assert sum(p.stat().st_size for p in _blobs(daemon)) == stored, "the refused picture was kept"


# --- an album on Telegram ---------------------------------------------------------------------------------


def _noise_png(side: int = 366) -> bytes:
    """About 400 KB (noise), under the model's side: kept as it is, no copy."""
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, "PNG", compress_level=1)
    return out.getvalue()


@pytest.fixture
async def telegram(tmp_path: Path, fake: FakeTelegramAPI) -> AsyncIterator[SabhaProcess]:
    """``sabha run`` on the fake Bot API; an allowed person (the friend) may keep 1 MB of files."""
    async with ShowModel() as model:
        process = SabhaProcess(write_config(tmp_path, fake, model, extra=["media:", "  quota_sender_mb: 1"]))
        try:
            await process.start()
            yield process
        finally:
            await process.close()


async def test_an_albums_files_are_checked_against_the_room_the_files_before_them_left(
    telegram: SabhaProcess, fake: FakeTelegramAPI, tmp_path: Path
) -> None:
    pictures = [_noise_png() for _ in range(4)]  # 4 x 400 KB: two fit in 1 MB, not three
    for i, data in enumerate(pictures):
        thumb = fake.add_file(picture(2, 2), name=f"thumb{i}.jpg")
        full = fake.add_file(data, name=f"pic{i}.png")
        update = fake.build_media_update(FRIEND, FRIEND, photo(thumb, full),
                                         caption="ALBUM which is best?" if i == 0 else None)
        update["message"]["media_group_id"] = "24680135792468013"
        fake.push_update(update)
    fake.push_text(FRIEND, FRIEND, "MARK after the album")
    await eventually(lambda: any("MARK after the album" in m.text for m in fake.sent_to(FRIEND)),
                     "the marker's answer", timeout=ANSWER_S)
    answers = [m.text for m in fake.sent_to(FRIEND)]
    album = [a for a in answers if "ALBUM" in a]
    assert len(album) == 1, answers
    assert album[0].count("could not be read: \"I did not download") == 2, album[0]  # two of four: 1 MB
    stored = [p for p in (tmp_path / "sessions" / "media").rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in stored) < 2**20, [p.stat().st_size for p in stored]
