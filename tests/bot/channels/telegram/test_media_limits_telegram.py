"""The media store's limits on Telegram (issue item 6), through a real ``sabha run`` on the fake Bot
API: what the update declares (``file_size``, ``mime_type``, ``file_name``) refuses a file before
``getFile`` is even asked, for a kind Sabha does not read and for a file over the store's quota; the
sender is told why in one line and the caption is still answered. Nothing refused is on disk."""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PIL import Image

from tests.bot.channels.telegram.test_telegram_media import ShowModel, owner_answers
from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI, document
from tests.support.telegram import OWNER

ANSWER_S = 300.0  # only "the answers came": a bound for a loaded machine, never a speed


async def answer_to(fake: FakeTelegramAPI, count: int) -> list[str]:
    """Wait for ``count`` answers in the owner's DM; their texts."""
    await fake.wait_for_messages(count, timeout=ANSWER_S)
    return owner_answers(fake)


async def marker_answered(fake: FakeTelegramAPI, before: int) -> None:
    """Send a marker after the rest and wait for its answer (then nothing else is coming)."""
    fake.push_text(OWNER, OWNER, "MARKER after the media")
    sent = await fake.wait_for_messages(before + 1, timeout=ANSWER_S)
    assert "MARKER after the media" in sent[-1].text, [m.text for m in sent]


@pytest.fixture
async def sabha(tmp_path: Path, fake: FakeTelegramAPI) -> AsyncIterator[SabhaProcess]:
    """``sabha run`` on the fake Bot API with a store of 10 KB in all."""
    async with ShowModel() as model:
        process = SabhaProcess(write_config(tmp_path, fake, model, extra=["media:", "  quota_total_mb: 0.01"]))
        try:
            await process.start()
            yield process
        finally:
            await process.close()


def _noise_png(side: int) -> bytes:
    """A PNG of random pixels: about ``side``² x 3 bytes (noise does not compress)."""
    out = io.BytesIO()
    Image.frombytes("RGB", (side, side), os.urandom(side * side * 3)).save(out, "PNG", compress_level=1)
    return out.getvalue()


def _stored(root: Path, data: bytes) -> bool:
    digest = hashlib.sha256(data).hexdigest()
    return (root / "sessions" / "media" / digest[:2] / digest[2:]).exists()


async def test_a_kind_not_read_and_a_file_over_the_quota_are_refused_before_getfile(
        fake: FakeTelegramAPI, sabha: SabhaProcess) -> None:
    root = sabha.config.parent
    archive = fake.add_file(b"PK\x03\x04" + b"\x00" * 3000, name="backup.zip")
    heic = fake.add_file(b"\x00\x00\x00\x18ftypheic" + b"\x00" * 3000, name="IMG_0001.HEIC")
    notes = fake.add_file(_noise_png(36), name="chart.png")  # about 4 KB: kept
    more = fake.add_file(_noise_png(52), name="more.png")  # about 8 KB: over what is left
    fake.push_media(OWNER, OWNER, document(archive, "backup.zip", "application/zip"), caption="CAP-ZIP ok?")
    fake.push_media(OWNER, OWNER, document(heic, "IMG_0001.HEIC", "image/heic"), caption="CAP-HEIC ok?")
    zip_answer, heic_answer = await answer_to(fake, 2)
    fake.push_media(OWNER, OWNER, document(notes, "chart.png", "image/png"), caption="CAP-NOTES ok?")
    await answer_to(fake, 3)
    fake.push_media(OWNER, OWNER, document(more, "more.png", "image/png"), caption="CAP-MORE ok?")
    notes_answer, more_answer = (await answer_to(fake, 4))[2:]
    await marker_answered(fake, 4)
    assert "CAP-ZIP" in zip_answer and "\n⚠️ I cannot read backup.zip: a .zip file is not a format I read" in zip_answer
    assert "CAP-HEIC" in heic_answer and "image/heic is not a picture format I know" in heic_answer, heic_answer
    assert "CAP-NOTES" in notes_answer and "a 36x36 PNG picture" in notes_answer, notes_answer
    assert "CAP-MORE" in more_answer and "\n⚠️ I did not download more.png (8 KB): the board's file store is full" \
        in more_answer, more_answer
    asked = [call.get("file_id") for call in fake.calls_to("getFile")]
    assert asked == [notes.file_id], asked  # only the file that was read was even looked up
    assert fake.downloads == [notes.file_path]
    assert _stored(root, notes.data) and not any(_stored(root, f.data) for f in (archive, heic, more))
