"""Pictures (issue 24): a photo, a picture sent as a file or a sticker reaches a model that sees
as image content, scaled down with Pillow to what every provider accepts; a decompression bomb,
a damaged file or something that is not a picture is refused with one clear sentence (the
caption is still answered); a model that cannot see gets the caption and a marker instead of
the picture, and the sender is told once per conversation.

Each test goes the way the intake goes: :meth:`MediaService.prepare` fetches the attachment
through a channel's :class:`MediaFetcher` (here a small one serving bytes from memory) and
reads it, then :meth:`Board.handle` answers; the providers' requests go through the real SDK
clients to the fakes in ``tests/support/fakes`` and are read from what the fakes recorded.
"""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from board.app import Board, BoardSettings
from board.envelope import Envelope, Reply
from board.llm.base import ChatMessage, ImagePart, LLMRequest, Persona
from board.llm.vision import UNSEEN_IMAGE, sees_images
from board.media.attachment import Attachment, MediaKind, MediaRef
from board.media.blobs import BlobSink
from board.media.settings import MediaSettings
from board.roles import RosterSpec
from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.gemini_api import FakeGemini
from tests.support.fakes.openai_api import FakeOpenAI, reply_error
from tests.support.llm import anthropic_board, openai_board, provider_board

CAPTION = "What do you think of this chart? Should we raise prices?"


# -- pictures and a fetcher --------------------------------------------------------------


def picture(size: tuple[int, int], fmt: str = "PNG", mode: str = "RGB", **save: Any) -> bytes:
    """A picture of ``size`` with some detail in it (so it does not compress to nothing)."""
    img = Image.new(mode, size, "white" if mode != "1" else 1)
    if mode in ("RGB", "RGBA"):
        for x in range(0, size[0], max(1, size[0] // 40)):
            for y in range(0, size[1], max(1, size[1] // 40)):
                img.putpixel((x, y), (x % 256, y % 256, 90) + ((200,) if mode == "RGBA" else ()))
    out = io.BytesIO()
    img.save(out, fmt, **save)
    return out.getvalue()


def animated_gif(frames: int = 3) -> bytes:
    images = [Image.new("RGB", (64, 48), color) for color in ("red", "green", "blue", "white")[:frames]]
    out = io.BytesIO()
    images[0].save(out, "GIF", save_all=True, append_images=images[1:], duration=100, loop=0)
    return out.getvalue()


class MemoryFetcher:
    """A channel's download, served from memory: ``files[media id] -> bytes``."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    async def fetch_media(self, attachment: Attachment, sink: BlobSink) -> None:
        assert attachment.source is not None
        data = self.files[attachment.source.id]
        sink.expect(size=len(data), mime=attachment.mime)
        for start in range(0, len(data), 65536):
            sink.write(data[start:start + 65536])


def with_picture(text: str, data: bytes, *, mime: str = "image/png", kind: MediaKind = MediaKind.IMAGE,
                 media_id: str = "pic-1", message_id: str = "m1") -> tuple[Envelope, MemoryFetcher]:
    """A console message from the owner carrying one picture, and the fetcher that serves it."""
    att = Attachment(kind=kind, mime=mime, size=len(data), source=MediaRef(channel="console", id=media_id))
    envelope = Envelope(channel="console", text=text, sender="owner", sender_name="Owner", is_owner=True,
                        message_id=message_id, attachments=(att,))
    return envelope, MemoryFetcher({media_id: data})


async def send(board: Board, envelope: Envelope, fetcher: MemoryFetcher) -> Reply:
    """What the intake does with a message that carries attachments."""
    prepared = await board.parts.media.prepare(envelope, fetcher)
    return await board.handle(prepared)


def stored(board: Board, att: Attachment) -> Image.Image:
    assert att.blob is not None
    return Image.open(io.BytesIO(board.parts.media.blobs.read(att.blob)))


@pytest.fixture
async def small_bomb_board(workspace: Path, data_dir: Path) -> AsyncIterator[Board]:
    """An offline board that refuses pictures over 1,000,000 pixels."""
    settings = BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
                             media=MediaSettings(image_max_pixels=1_000_000))
    b = await Board.open(settings)
    try:
        yield b
    finally:
        await b.close()


# -- reading a picture -------------------------------------------------------------------


async def test_a_large_photo_is_scaled_down_for_the_model_and_described_honestly(board: Board) -> None:
    envelope, fetcher = with_picture(CAPTION, picture((4000, 3000), "JPEG", quality=90), mime="image/jpeg")
    att = (await board.parts.media.prepare(envelope, fetcher)).attachments[0]
    assert att.problem is None
    img = stored(board, att)
    assert max(img.size) == 1568 and img.size == (1568, 1176)  # the longer side, the aspect ratio kept
    assert att.mime == "image/jpeg" and img.format == "JPEG"
    assert att.derived is not None and "4000x3000 JPEG picture" in att.derived
    assert "1568x1176" in att.derived  # what the model is shown
    assert len(board.parts.media.blobs.read(att.blob or "")) <= 3_750_000  # Anthropic's 5 MB of base64


async def test_a_small_png_is_kept_as_it_is(board: Board) -> None:
    data = picture((1200, 800), "PNG")
    envelope, fetcher = with_picture(CAPTION, data)
    att = (await board.parts.media.prepare(envelope, fetcher)).attachments[0]
    assert board.parts.media.blobs.read(att.blob or "") == data  # nothing lost to a re-encode
    assert att.derived == f"a 1200x800 PNG picture, {len(data) / 1024:.0f} KB"


async def test_an_animated_gif_is_shown_as_its_first_frame(board: Board) -> None:
    envelope, fetcher = with_picture("what is this?", animated_gif(3), mime="image/gif")
    att = (await board.parts.media.prepare(envelope, fetcher)).attachments[0]
    img = stored(board, att)
    assert img.format in ("PNG", "JPEG") and getattr(img, "n_frames", 1) == 1
    red, green, blue = img.convert("RGB").getpixel((10, 10))  # type: ignore[misc]
    assert red > 240 and green < 16 and blue < 16  # the first frame is red
    assert att.derived is not None and "animated" in att.derived and "3 frames" in att.derived


async def test_a_phone_photo_is_turned_upright(board: Board) -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 degrees clockwise to view", as a phone held upright writes it
    envelope, fetcher = with_picture(CAPTION, picture((400, 200), "JPEG", exif=exif.tobytes()), mime="image/jpeg")
    att = (await board.parts.media.prepare(envelope, fetcher)).attachments[0]
    assert stored(board, att).size == (200, 400)


async def test_a_sticker_with_transparency_stays_transparent(board: Board) -> None:
    envelope, fetcher = with_picture("", picture((512, 512), "WEBP", mode="RGBA"), mime="image/webp",
                                     kind=MediaKind.STICKER)
    att = (await board.parts.media.prepare(envelope, fetcher)).attachments[0]
    assert att.problem is None and att.derived is not None and "sticker" in att.derived
    assert stored(board, att).mode in ("RGBA", "LA", "P")


async def test_a_decompression_bomb_is_refused_and_the_caption_still_answered(small_bomb_board: Board) -> None:
    bomb = picture((1200, 1200), "PNG", mode="1")  # 1.44 million pixels in a few hundred bytes
    assert len(bomb) < 10_000
    envelope, fetcher = with_picture(CAPTION, bomb)
    reply = await send(small_bomb_board, envelope, fetcher)
    assert "1200x1200" in reply.text and "too large" in reply.text  # said, with why
    assert "raise prices" in reply.text  # the caption was answered (the offline model quotes it)


async def test_pillows_own_bomb_limit_is_kept(board: Board) -> None:
    bomb = picture((16000, 16000), "PNG", mode="1")  # 256 million pixels: over Pillow's own limit too
    envelope, fetcher = with_picture(CAPTION, bomb)
    att = (await board.parts.media.prepare(envelope, fetcher)).attachments[0]
    assert att.problem is not None and "too large" in att.problem and att.derived is None


async def test_an_animated_telegram_sticker_is_said_to_be_unseen(board: Board) -> None:
    tgs = b"\x1f\x8b\x08\x00" + b"lottie json, gzipped" * 20  # Telegram's animated stickers: gzipped Lottie
    envelope, fetcher = with_picture("", tgs, mime="application/x-tgsticker", kind=MediaKind.STICKER)
    reply = await send(board, envelope, fetcher)
    assert "a sticker is animated; I can only see still stickers" in reply.text


async def test_a_picture_that_takes_too_long_to_read_is_given_up(workspace: Path, data_dir: Path) -> None:
    # The picture is read in a child process (board.media.images.ready_isolated), which no monkeypatch here
    # reaches: a time limit of a millisecond is one no child can meet (starting Python alone takes longer),
    # whereas 0.2 s was met by a warm machine (the test then failed, seen locally).
    settings = BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
                             media=MediaSettings(extract_timeout_s=0.001))
    b = await Board.open(settings)
    try:
        envelope, fetcher = with_picture(CAPTION, picture((300, 200), "PNG"))
        reply = await send(b, envelope, fetcher)
        assert "took too long to read" in reply.text and "raise prices" in reply.text
    finally:
        await b.close()


@pytest.mark.parametrize("data", [b"this is not a picture at all", picture((300, 200), "PNG")[:200]],
                         ids=["not-a-picture", "cut-short"])
async def test_a_damaged_or_false_picture_is_said_to_be_unreadable(board: Board, data: bytes) -> None:
    envelope, fetcher = with_picture(CAPTION, data)
    reply = await send(board, envelope, fetcher)
    assert "could not be read" in reply.text or "not a picture" in reply.text
    assert "raise prices" in reply.text


# -- each provider receives the picture --------------------------------------------------


async def test_anthropic_receives_the_picture_as_an_image_block_before_the_text(
        tmp_path: Path, workspace: Path, fake_anthropic: FakeAnthropic) -> None:
    board = await anthropic_board(tmp_path, workspace, fake_anthropic)
    try:
        fake_anthropic.script_text("The chart shows flat sales; hold prices.")
        envelope, fetcher = with_picture(CAPTION, picture((2000, 1000), "JPEG"), mime="image/jpeg")
        reply = await send(board, envelope, fetcher)
        assert "hold prices" in reply.text and "cannot see" not in reply.text
        user = fake_anthropic.requests[-1].body["messages"][-1]
        kinds = [b["type"] for b in user["content"]]
        assert kinds[0] == "image" and "text" in kinds[1:]
        source = user["content"][0]["source"]
        assert source["type"] == "base64" and source["media_type"] == "image/jpeg"
        assert Image.open(io.BytesIO(base64.b64decode(source["data"]))).size == (1568, 784)
        assert any(CAPTION in b.get("text", "") for b in user["content"])
    finally:
        await board.close()


async def test_openai_receives_the_picture_as_an_image_url_part(
        tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    board = await openai_board(tmp_path, workspace, fake_openai)
    try:
        fake_openai.script_text("Raise them by 5 %.")
        envelope, fetcher = with_picture(CAPTION, picture((800, 600), "PNG"))
        reply = await send(board, envelope, fetcher)
        assert "5 %" in reply.text
        user = fake_openai.requests[-1].body["messages"][-1]
        assert user["role"] == "user" and isinstance(user["content"], list)
        text = [p for p in user["content"] if p["type"] == "text"]
        images = [p for p in user["content"] if p["type"] == "image_url"]
        assert len(images) == 1 and CAPTION in text[0]["text"]
        url = images[0]["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        assert Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size == (800, 600)
    finally:
        await board.close()


async def test_gemini_receives_the_picture_as_inline_data(tmp_path: Path, workspace: Path) -> None:
    async with FakeGemini() as fake:
        board = await provider_board(tmp_path, workspace, "google:gemini-2.5-flash",
                                     f'google: {{base_url: "{fake.base_url}", api_key: "gk-test"}}')
        try:
            fake.script_text("A rising line.")
            envelope, fetcher = with_picture(CAPTION, picture((640, 480), "PNG"))
            reply = await send(board, envelope, fetcher)
            assert "rising line" in reply.text
            parts = fake.requests[-1].body["contents"][-1]["parts"]
            inline = [p["inlineData"] for p in parts if "inlineData" in p]
            # the SDK passes the Blob's own field names on (the API reads proto JSON: either spelling)
            assert len(inline) == 1 and inline[0].get("mimeType", inline[0].get("mime_type")) == "image/png"
            assert Image.open(io.BytesIO(base64.urlsafe_b64decode(inline[0]["data"]))).size == (640, 480)
            assert any(CAPTION in p.get("text", "") for p in parts)
        finally:
            await board.close()


async def test_the_offline_model_says_what_it_can_honestly_see(board: Board) -> None:
    envelope, fetcher = with_picture(CAPTION, picture((1200, 800), "PNG"))
    reply = await send(board, envelope, fetcher)
    assert "1 picture" in reply.text and "PNG" in reply.text and "1200x800" in reply.text
    assert "cannot look inside" in reply.text


# -- a model that cannot see -------------------------------------------------------------

LOCAL = 'openai: {{base_url: "{url}", api_key: "sk-test"}}'


async def test_a_model_without_vision_gets_the_caption_and_the_sender_is_told_once(
        tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    board = await provider_board(tmp_path, workspace, "openai:llama3.1-8b", LOCAL.format(url=fake_openai.base_url))
    try:
        fake_openai.script_text("From your words alone: test a small rise first.")
        envelope, fetcher = with_picture(CAPTION, picture((800, 600), "PNG"))
        first = await send(board, envelope, fetcher)
        sent = fake_openai.requests[-1].body["messages"][-1]
        assert isinstance(sent["content"], str)  # no image part went to a model that cannot take it
        assert UNSEEN_IMAGE in sent["content"] and CAPTION in sent["content"]
        assert "test a small rise" in first.text
        assert "cannot see pictures" in first.text  # told, with the answer

        fake_openai.script_text("Again from your words: the same.")
        envelope, fetcher = with_picture("And this one?", picture((300, 300), "PNG"), media_id="pic-2",
                                         message_id="m2")
        second = await send(board, envelope, fetcher)
        assert UNSEEN_IMAGE in fake_openai.requests[-1].body["messages"][-1]["content"]
        assert "the same" in second.text and "cannot see pictures" not in second.text  # told once
    finally:
        await board.close()


async def test_a_fallback_without_vision_gets_no_picture(
        tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    extra = "  fallbacks: [openai:llama3.1-8b]\n"
    board = await provider_board(tmp_path, workspace, "openai:gpt-4o-mini",
                                 LOCAL.format(url=fake_openai.base_url), extra=extra)
    try:
        fake_openai.script(reply_error(500, "server_error"), reply_error(500, "server_error"))
        fake_openai.script_text("The fallback answers from the caption.")
        envelope, fetcher = with_picture(CAPTION, picture((800, 600), "PNG"))
        reply = await send(board, envelope, fetcher)
        first, last = fake_openai.requests[0].body, fake_openai.requests[-1].body
        assert first["model"] == "gpt-4o-mini" and last["model"] == "llama3.1-8b"
        assert any(p["type"] == "image_url" for p in first["messages"][-1]["content"])
        assert isinstance(last["messages"][-1]["content"], str) and UNSEEN_IMAGE in last["messages"][-1]["content"]
        assert "fallback answers" in reply.text and "cannot see pictures" in reply.text
    finally:
        await board.close()


@pytest.mark.parametrize(("model", "extra", "sees"), [
    ("anthropic:claude-sonnet-4-6", (), True), ("anthropic:claude-3-5-haiku-latest", (), True),
    ("openai:gpt-4o-mini", (), True), ("openai:gpt-4.1-nano", (), True), ("openai:gpt-5", (), True),
    ("openai:o3", (), True), ("openai:o4-mini", (), True), ("openai:o1", (), True),
    ("google:gemini-2.5-flash", (), True), ("gemini:gemini-2.0-flash", (), True), ("offline", (), True),
    ("openai:gpt-3.5-turbo", (), False), ("openai:llama3.1-8b", (), False), ("openai:o3-mini", (), False),
    ("openai:llava", ("openai:llava",), True), ("openai:qwen2.5-vl-7b", ("openai:qwen*-vl*",), True),
])
def test_which_models_see_pictures(model: str, extra: tuple[str, ...], sees: bool) -> None:
    assert sees_images(model, extra) is sees


def test_a_strangers_picture_counts_toward_the_worst_case_cost() -> None:
    from board.llm.pricing import PriceTable
    from board.spending.allowance import worst_case

    ask = ChatMessage(role="user", content="what is this?")
    plain = LLMRequest(model="openai:gpt-4o-mini", system=(), messages=(ask,), persona=Persona("r", "R", "x"))
    seen = replace(plain, messages=(replace(ask, images=(ImagePart("image/png", b"x" * 100),)),))
    prices = PriceTable()
    assert (worst_case(seen, ["openai:gpt-4o-mini"], prices)[0] or 0) > (worst_case(plain, ["openai:gpt-4o-mini"],
                                                                                     prices)[0] or 0)


async def test_a_local_model_listed_in_vision_models_is_sent_the_picture(
        tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    extra = "media:\n  vision_models: ['openai:llava*']\n"
    board = await provider_board(tmp_path, workspace, "openai:llava-1.6", LOCAL.format(url=fake_openai.base_url),
                                 extra=extra)
    try:
        fake_openai.script_text("I see a bar chart.")
        envelope, fetcher = with_picture(CAPTION, picture((800, 600), "PNG"))
        reply = await send(board, envelope, fetcher)
        content = fake_openai.requests[-1].body["messages"][-1]["content"]
        assert any(p["type"] == "image_url" for p in content)
        assert "bar chart" in reply.text and "cannot see" not in reply.text
    finally:
        await board.close()


async def test_a_picture_is_sent_with_its_own_turn_only(
        tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    board = await openai_board(tmp_path, workspace, fake_openai)
    try:
        fake_openai.script_text("A chart of sales.")
        envelope, fetcher = with_picture(CAPTION, picture((800, 600), "PNG"))
        await send(board, envelope, fetcher)
        fake_openai.script_text("As I said: hold prices.")
        reply = await board.handle(Envelope(channel="console", text="and what now?", sender="owner",
                                            sender_name="Owner", is_owner=True, message_id="m2"))
        assert "hold prices" in reply.text
        later = fake_openai.requests[-1].body["messages"]
        assert not any(isinstance(m["content"], list) for m in later)  # not billed again on every later turn
        assert any(CAPTION in m["content"] and "800x600 PNG picture" in m["content"] for m in later
                   if m["role"] == "user")  # the history names it
    finally:
        await board.close()


async def test_two_advisors_answering_one_picture_say_once_that_they_cannot_see_it(
        tmp_path: Path, workspace: Path, fake_openai: FakeOpenAI) -> None:
    board = await provider_board(tmp_path, workspace, "openai:llama3.1-8b", LOCAL.format(url=fake_openai.base_url))
    try:
        fake_openai.script_text("The critic: hold prices.")
        fake_openai.script_text("Finance: test a rise.")
        envelope, fetcher = with_picture("What do the critic and finance think about this chart?",
                                         picture((800, 600), "PNG"))
        reply = await send(board, envelope, fetcher)
        assert "hold prices" in reply.text and "test a rise" in reply.text  # both answered
        assert reply.text.count("cannot see pictures") == 1
    finally:
        await board.close()
