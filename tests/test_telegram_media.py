"""Issue 24, the Telegram channel's media, through a real ``sabha run`` on the fake Bot API.

Photos, documents, voice notes, locations and contacts arrive as references (``file_id``),
are fetched in the conversation's lane through ``getFile`` and the file download route, and
reach the model as quoted data (pictures as image parts); what could not be read is said once
with the answer, and the caption is still answered. The model here echoes the whole message it
was given (:class:`ShowModel`), so the answer itself shows what the model received.

"Nothing lost, nothing twice" is proven with a marker message sent afterwards: one sender's
messages are answered in order, so once the marker's answer is out, everything before it was
answered (and counted) already.
"""

from __future__ import annotations

import io
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.daemon_support import SabhaProcess, write_config
from tests.fakes.echo_model import EchoModel
from tests.fakes.telegram_api import (
    FakeTelegramAPI,
    SentMessage,
    photo,
)
from tests.telegram_support import OWNER

SHOWN = "SHOWN"


class ShowModel(EchoModel):
    """An OpenAI-compatible fake whose answer is ``SHOWN`` + everything the last user message
    carried: its text parts whole, and ``[image image/png N bytes]`` per picture."""

    name = "ShowModel"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._show)

    async def _show(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = await request.json()
        self.bodies.append(body)
        self.calls += 1
        last = next((m for m in reversed(body.get("messages") or []) if m.get("role") == "user"), {})
        content = last.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]
        shown: list[str] = []
        for part in parts:
            if part.get("type") == "text":
                shown.append(str(part.get("text")))
            elif part.get("type") == "image_url":
                url = str((part.get("image_url") or {}).get("url", ""))
                shown.append(f"[image {url.split(';')[0].removeprefix('data:')} {len(url)} chars]")
        text = f"{SHOWN} " + "\n".join(shown)
        return web.json_response({
            "id": f"chatcmpl-show{self.calls}", "object": "chat.completion", "created": int(time.time()),
            "model": "echo",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        })


def png(width: int = 3, height: int = 2) -> bytes:
    """A real PNG picture."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
async def show() -> AsyncIterator[ShowModel]:
    async with ShowModel() as model:
        yield model


@pytest.fixture
async def sabha(tmp_path: Path, fake: FakeTelegramAPI, show: ShowModel,
                request: pytest.FixtureRequest) -> AsyncIterator[SabhaProcess]:
    """``sabha run`` on the fake Bot API and :class:`ShowModel`; ``media:`` lines from the
    test's ``media`` mark, if any."""
    mark = request.node.get_closest_marker("media")
    extra = ["media:", *(f"  {line}" for line in mark.args)] if mark else []
    process = SabhaProcess(write_config(tmp_path, fake, show, extra=extra))
    try:
        await process.start()
        yield process
    finally:
        await process.close()


def owner_answers(fake: FakeTelegramAPI) -> list[str]:
    """What the bot sent to the owner's DM."""
    return [m.text for m in fake.sent_to(OWNER)]


async def answer_to(fake: FakeTelegramAPI, count: int) -> list[str]:
    """Wait for ``count`` answers in the owner's DM; their texts."""
    await fake.wait_for_messages(count, timeout=30)
    return owner_answers(fake)


async def marker_answered(fake: FakeTelegramAPI, before: int) -> list[SentMessage]:
    """Send a marker after the rest and wait for its answer (then nothing else is coming)."""
    fake.push_text(OWNER, OWNER, "MARKER after the media")
    sent = await fake.wait_for_messages(before + 1, timeout=30)
    assert "MARKER after the media" in sent[-1].text, [m.text for m in sent]
    return sent


# -- pictures ---------------------------------------------------------------------


async def test_a_photo_with_a_caption_is_answered_with_both(fake: FakeTelegramAPI, sabha: SabhaProcess,
                                                            show: ShowModel) -> None:
    thumb, full = fake.add_file(png(2, 2), name="thumb.jpg"), fake.add_file(png(30, 20), name="photo.jpg")
    fake.push_media(OWNER, OWNER, photo(thumb, full), caption="What do you think of this chart?")
    [answer] = await answer_to(fake, 1)
    assert "What do you think of this chart?" in answer
    assert "image attached" in answer  # the model was told a picture came with the caption
    assert fake.downloads == [full.file_path]  # the largest size, fetched once, in the lane
    await marker_answered(fake, 1)
