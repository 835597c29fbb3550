"""WhatsApp media on a real ``sabha run`` (issue 24): pictures, documents, locations, contact
cards and orders reach the board; what cannot be read is said once with the caption still
answered; a download cut by kill -9 is answered exactly once after the restart.

The payloads are Meta's documented shapes as pywa's update fixtures write them
(``tests/data/updates/message.json`` of david-lev/pywa: ``image``, ``video``, ``document``,
``voice``, ``static_sticker`` / ``animated_sticker``, ``chosen_location``, ``contacts``,
``order``), with the media ids pointed at the fake Graph API, which serves ``GET /{media-id}``
and the bytes (bearer checked). The model is :class:`ShowModel`: it answers with what it
received (``SAW <the user's message, on one line>``), so an answer shows what reached it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientSession, ClientTimeout, web
from PIL import Image

from board.app import Board
from board.envelope import Reply
from board.media.attachment import Attachment, MediaKind, MediaRef
from board.media.blobs import Blob, BlobSink, BlobStore
from board.media.problems import MediaProblem, Problem
from board.workspace.paths import copy_default_workspace
from bot.channels.whatsapp.channel import WhatsAppChannel
from bot.channels.whatsapp.inbound import Disposition, parse_notification, read_items
from bot.daemon import channel_parts
from bot.intake.delivery import SendProgress
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.openai_api import FakeOpenAI, fake_ogg_opus
from tests.support.knowledge import tiny_pdf
from tests.support.telegram import eventually
from tests.support.whatsapp import (
    APP_SECRET,
    BSUID_FRIEND,
    FAST,
    FRIEND,
    NUMBER_ID,
    OWNER,
    VERIFY_TOKEN,
    message,
    new_wamid,
    notification,
    post,
    wa_settings,
)

CHART_QUESTION = "What do you think of this chart? Should we raise prices?"
TEXT_ONLY = "only read text"


def _picture(fmt: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 30, 30)).save(out, fmt)
    return out.getvalue()


PNG = _picture("PNG")  # what the fake serves as "the chart"
WEBP = _picture("WEBP")  # a sticker

# --- pywa's fixtures (tests/data/updates/message.json), the message items as Meta sends them ------------

PYWA_IMAGE = {"from": "972987654321", "id": "wamid.xyzxyz", "timestamp": "1697043379", "type": "image",
              "image": {"mime_type": "image/jpeg", "sha256": "4654+8g=", "id": "65463453"}}
PYWA_VIDEO = {"context": {"forwarded": True}, "from": "972987654321", "id": "wamid.xyzxyz", "timestamp": "1697044362",
              "type": "video", "video": {"caption": "caption", "mime_type": "video/mp4",
                                         "sha256": "Jh+2ij6PzUv/J2y+grrtegr/ZMzRxkEPwc24Oyib4s03w9Jc=",
                                         "id": "765756756"}}
PYWA_DOCUMENT = {"context": {"forwarded": True}, "from": "972987654321", "id": "wamid.xyzxyz",
                 "timestamp": "1697043666", "type": "document",
                 "document": {"caption": "caption", "filename": "filename.pdf", "mime_type": "application/pdf",
                              "sha256": "grwfwe/ZPx0wAbdfbdeFUNItPZ0RylL8gGUvdt3YFqc18SY=",
                              "id": "1234567890987654321"}}
PYWA_AUDIO = {"from": "972987654321", "id": "wamid.xyzxyz", "timestamp": "1697043509", "type": "audio",
              "audio": {"mime_type": "audio/ogg; codecs=opus",
                        "sha256": "E3dxS/PdYZE7ppA3pQ4mpCFaXBJ8pX4SRN/dsfvds/iPGA=",
                        "id": "1234567890987654321", "voice": False}}
PYWA_VOICE = {"from": "972987654321", "id": "wamid.xyzxyz", "timestamp": "1697043473", "type": "audio",
              "audio": {"mime_type": "audio/ogg; codecs=opus", "sha256": "m04pFf2ERdaopTyFkGPA0+bX3i+YY2dYgVFwOgDLSDI=",
                        "id": "1234567890987654321", "voice": True}}
PYWA_STATIC_STICKER = {"from": "972987654321", "id": "wamid.xyzxyz", "timestamp": "1697043760", "type": "sticker",
                       "sticker": {"mime_type": "image/webp", "sha256": "OmT4nhjUhCMIPNmj7eeOZeCYjTXkLxoOv85OMCFwSuc=",
                                   "id": "1234567890987654321", "animated": False}}
PYWA_ANIMATED_STICKER = {"from": "972987654321", "id": "wamid.xyzxyz", "timestamp": "1697043785", "type": "sticker",
                         "sticker": {"mime_type": "image/webp", "sha256": "HcwyCKrTKXHk0a00ms4HWIA76GY0Du6q4Z/iuwevw=",
                                     "id": "1234567890987654321", "animated": True}}
PYWA_LOCATION = {"context": {"forwarded": True}, "from": "972987654321", "id": "wamid.xyzxyz",
                 "timestamp": "1697044557", "type": "location",
                 "location": {"latitude": 37.4611978, "longitude": -122.2164385, "name": "Facebook HQ",
                              "address": "1 Hacker Way, Menlo Park, CA 94025",
                              "url": "https://maps.google.com/?cid=2000000000000000000"}}
PYWA_CURRENT_LOCATION = {"from": "972987654321", "id": "wamid.xyzxyz", "timestamp": "1697044557", "type": "location",
                         "location": {"latitude": 12.25089, "longitude": 43.90539}}
PYWA_CONTACTS = {"from": "972987654321", "id": "wamid.xyzxyz", "timestamp": "1697044621", "type": "contacts",
                 "contacts": [
                     {"name": {"first_name": "Chandler", "last_name": "Bing", "formatted_name": "Chandler Bing"},
                      "phones": [{"phone": "+1 555-555-5555", "wa_id": "972987654321", "type": "CELL"}]},
                     {"name": {"first_name": "Monica", "formatted_name": "Monica"},
                      "phones": [{"phone": "+1 666-666-6666", "wa_id": "972987654321", "type": "HOME"}]}]}
PYWA_ORDER = {"from": "972987654321", "id": "wamid.xyzxyz", "timestamp": "1697044668", "type": "order",
              "order": {"catalog_id": "354160437058781", "text": "",
                        "product_items": [
                            {"product_retailer_id": "HAMBURGER", "quantity": 3, "item_price": 30, "currency": "ILS"},
                            {"product_retailer_id": "SODA", "quantity": 2, "item_price": 10, "currency": "ILS"}]}}
#: Meta's Cloud API webhook reference (contacts message): emails, org and addresses too.
META_CONTACT = {"from": "16505551234", "id": "wamid.ID", "timestamp": "1697044621", "type": "contacts",
                "contacts": [{"addresses": [{"city": "Menlo Park", "country": "United States", "type": "WORK"}],
                              "emails": [{"email": "ravi@example.com", "type": "WORK"}],
                              "name": {"formatted_name": "Ravi Kumar", "first_name": "Ravi", "last_name": "Kumar"},
                              "org": {"company": "Sabha Ltd", "title": "CFO"},
                              "phones": [{"phone": "+91 98765 43210", "type": "WORK"}]}]}


def _items(*messages: dict[str, Any]) -> list[Any]:
    body = notification([dict(m, id=new_wamid()) for m in messages])
    return list(read_items(parse_notification(json.dumps(body).encode())))


# --- parsing (no daemon) -----------------------------------------------------------------------------


def test_each_media_kind_of_pywas_fixtures_becomes_an_attachment_without_download() -> None:
    image, video, document, audio, voice, static, animated = _items(
        PYWA_IMAGE, PYWA_VIDEO, PYWA_DOCUMENT, PYWA_AUDIO, PYWA_VOICE, PYWA_STATIC_STICKER, PYWA_ANIMATED_STICKER)
    for item in (image, video, document, audio, voice, static, animated):
        assert item.disposition is Disposition.BOARD, item
        (att,) = item.attachments
        assert att.source is not None and att.source.channel == "whatsapp" and att.blob is None
    assert image.attachments[0].kind is MediaKind.IMAGE and image.attachments[0].mime == "image/jpeg"
    assert image.attachments[0].source.id == "65463453" and image.text == ""
    assert image.attachments[0].sha256 is None  # "4654+8g=" is no sha256: not checked rather than always failing
    assert video.attachments[0].kind is MediaKind.VIDEO and video.text == "caption"
    doc = document.attachments[0]
    assert (doc.kind, doc.name, doc.mime, document.text) == (MediaKind.DOCUMENT, "filename.pdf", "application/pdf",
                                                             "caption")
    assert audio.attachments[0].kind is MediaKind.AUDIO and voice.attachments[0].kind is MediaKind.VOICE
    assert voice.attachments[0].sha256 == base64.b64decode("m04pFf2ERdaopTyFkGPA0+bX3i+YY2dYgVFwOgDLSDI=").hex()
    # a sticker is a picture to the core (read and shown like an image), named "a sticker"
    assert static.attachments[0].kind is MediaKind.STICKER and animated.attachments[0].kind is MediaKind.STICKER
    assert animated.attachments[0].mime == "image/webp"


def test_location_contacts_and_order_become_text_the_model_can_use() -> None:
    place, here, cards, meta, order = _items(PYWA_LOCATION, PYWA_CURRENT_LOCATION, PYWA_CONTACTS, META_CONTACT,
                                             PYWA_ORDER)
    for item, kind in ((place, MediaKind.LOCATION), (here, MediaKind.LOCATION), (cards, MediaKind.CONTACTS),
                       (meta, MediaKind.CONTACTS), (order, MediaKind.ORDER)):
        assert item.disposition is Disposition.BOARD
        (att,) = item.attachments
        assert att.kind is kind and att.source is None and att.derived
    assert place.attachments[0].derived == ("shared a location: 37.4611978, -122.2164385, Facebook HQ, "
                                            "1 Hacker Way, Menlo Park, CA 94025, https://maps.google.com/?cid=2000000000000000000")
    assert here.attachments[0].derived == "shared a location: 12.25089, 43.90539"
    assert "Chandler Bing: phone +1 555-555-5555 (CELL)" in cards.attachments[0].derived
    assert "Monica: phone +1 666-666-6666 (HOME)" in cards.attachments[0].derived
    assert "Ravi Kumar: phone +91 98765 43210 (WORK); email ravi@example.com; Sabha Ltd, CFO" \
        in meta.attachments[0].derived
    text = order.attachments[0].derived
    assert "catalog 354160437058781" in text and "3 x HAMBURGER at 30 ILS" in text and "2 x SODA at 10 ILS" in text


def test_reactions_unsupported_and_odd_media_keep_todays_behaviour() -> None:
    reaction = message(FRIEND, "reaction", reaction={"message_id": "wamid.yzxyzx=", "emoji": "\U0001f62e"})
    unsupported = message(FRIEND, "unsupported", errors=[{"code": 131051, "title": "Message type unknown"}])
    broken = message(FRIEND, "image", image={"caption": "no id"})  # media without an id: nothing to fetch
    r, u, b = _items(reaction, unsupported, broken)
    assert r.disposition is Disposition.LOG and u.disposition is Disposition.TEXT_ONLY
    assert b.disposition is Disposition.TEXT_ONLY and not b.attachments


# --- the channel's download and upload, in process ----------------------------------------------------


@pytest.fixture
async def channel(board: Board, fake_graph: FakeGraphAPI) -> AsyncIterator[WhatsAppChannel]:
    ch = WhatsAppChannel(channel_parts(board), wa_settings(fake_graph), pacing=FAST)
    ch.media.sleep = _no_sleep
    await ch.graph.open()
    try:
        yield ch
    finally:
        await ch.graph.close()


async def _no_sleep(_: float) -> None:
    return None


class _Chunks(BlobSink):
    """A sink that remembers the largest chunk written (streamed, not buffered)."""

    largest = 0

    def write(self, chunk: bytes) -> None:
        self.largest = max(self.largest, len(chunk))
        super().write(chunk)


async def _fetch(channel: WhatsAppChannel, blobs: BlobStore, media_id: str, limit: int = 50 * 2**20,
                 kind: MediaKind = MediaKind.DOCUMENT) -> tuple[Blob, _Chunks]:
    att = Attachment(kind=kind, source=MediaRef(channel="whatsapp", id=media_id), name="deck.pdf")
    with _Chunks(blobs, limit, att.label) as sink:
        await channel.fetch_media(att, sink)
        return sink.finish(), sink


async def test_a_big_file_is_streamed_in_chunks_and_each_try_asks_for_a_fresh_url(
    channel: WhatsAppChannel, fake_graph: FakeGraphAPI, tmp_path: Path
) -> None:
    data = bytes(range(256)) * (24 * 1024)  # 6 MB
    media_id = fake_graph.add_media(data, "application/pdf", chunk=256 * 1024)
    blobs = BlobStore(tmp_path / "media")
    blob, sink = await _fetch(channel, blobs, media_id)
    assert blob.sha256 == hashlib.sha256(data).hexdigest() and blob.path.read_bytes() == data
    assert 0 < sink.largest <= 256 * 1024 and sink.mime == "application/pdf"
    await _fetch(channel, blobs, media_id)
    urls = [path for path, _ in fake_graph.media_requests if path.startswith("/whatsapp_business/")]
    assert len(urls) == 2 and urls[0] != urls[1]  # a fresh url (its hash) on every try
    assert all(auth == f"Bearer {fake_graph.token}" for _, auth in fake_graph.media_requests)


async def test_a_5xx_is_retried_once_and_then_unavailable_and_a_404_is_expired(
    channel: WhatsAppChannel, fake_graph: FakeGraphAPI, tmp_path: Path
) -> None:
    blobs = BlobStore(tmp_path / "media")
    media_id = fake_graph.add_media(b"hello", "text/plain")
    fake_graph.fail_media(500)
    blob, _ = await _fetch(channel, blobs, media_id)  # one retry got it
    assert blob.size == 5
    fake_graph.fail_media(500, times=2)
    with pytest.raises(MediaProblem) as failed:
        await _fetch(channel, blobs, media_id)
    assert failed.value.problem is Problem.UNAVAILABLE and "send it again" in failed.value.text
    fake_graph.expire(media_id)
    with pytest.raises(MediaProblem) as gone:
        await _fetch(channel, blobs, media_id)
    assert gone.value.problem is Problem.EXPIRED and "deck.pdf is no longer available" in gone.value.text
    with pytest.raises(MediaProblem) as unknown:
        await _fetch(channel, blobs, "123456789")
    assert unknown.value.problem is Problem.EXPIRED


async def test_a_refused_token_or_an_unreachable_api_is_unavailable_never_a_raw_error(
    channel: WhatsAppChannel, fake_graph: FakeGraphAPI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blobs = BlobStore(tmp_path / "media")
    media_id = fake_graph.add_media(b"hello", "text/plain")
    fake_graph.fail_media(401)
    with pytest.raises(MediaProblem) as refused:
        await _fetch(channel, blobs, media_id)
    assert refused.value.problem is Problem.UNAVAILABLE and "token" not in refused.value.text
    assert "whatsapp.access_token" in caplog.text and fake_graph.token not in caplog.text
    await fake_graph.stop()
    with pytest.raises(MediaProblem) as down:
        await _fetch(channel, blobs, media_id)
    assert down.value.problem is Problem.UNAVAILABLE
    assert not list((tmp_path / "media").glob(".part-*"))


async def test_a_reply_with_a_voice_is_sent_as_text_then_an_uploaded_audio_message(
    channel: WhatsAppChannel, fake_graph: FakeGraphAPI, board: Board
) -> None:
    ogg = b"OggS\x00\x02" + b"\x01" * 3000
    blob = board.parts.media.blobs.put(ogg)
    for user in (FRIEND, BSUID_FRIEND):
        reply = Reply(role="general", name="General", emoji="", text="Raise prices by 8%.", channel="whatsapp",
                      chat_id=user, reply_to="wamid.Q1", voice=blob.sha256)
        progress = SendProgress()
        await channel.deliver(reply, progress)
        assert progress.posted == 1  # the text counts
        assert fake_graph.texts_to(user)[-1].endswith("Raise prices by 8%.")
        upload = fake_graph.uploads[-1]
        assert (upload.data, upload.type, upload.messaging_product, upload.content_type) == \
            (ogg, "audio/ogg", "whatsapp", "audio/ogg")
        audio = fake_graph.sent_audio[-1]
        assert audio.media_id == upload.media_id and audio.context_id == "wamid.Q1"
        assert audio.payload.get("to" if user == FRIEND else "recipient") == user


async def test_a_voice_that_fails_after_the_text_is_logged_and_the_text_is_not_sent_again(
    channel: WhatsAppChannel, fake_graph: FakeGraphAPI, board: Board, caplog: pytest.LogCaptureFixture
) -> None:
    reply = Reply(role="general", name="General", emoji="", text="Answer text.", channel="whatsapp",
                  chat_id=FRIEND, voice="ab" * 32)  # a blob that is gone
    progress = SendProgress()
    await channel.deliver(reply, progress)
    assert progress.posted == 1 and len(fake_graph.texts_to(FRIEND)) == 1 and not fake_graph.sent_audio
    assert "spoken reply" in caplog.text


# --- a real daemon -------------------------------------------------------------------------------------


class ShowModel(EchoModel):
    """Answers ``SAW <the last user message on one line>`` (image parts named), so a test sees what the
    model received; ``latency`` as the echo model's."""

    name = "ShowModel"

    async def _chat(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = await request.json()
        self.bodies.append(body)
        self.calls += 1
        await asyncio.sleep(self.latency)
        shown = ""
        for msg in reversed(body.get("messages") or []):
            if msg.get("role") == "user":
                content = msg.get("content")
                parts = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
                shown = " ".join(p.get("text", "") if p.get("type") == "text" else f"[{p.get('type')} part]"
                                 for p in parts)
                break
        text = "SAW " + " ".join(shown.split())[:3500]
        return web.json_response({
            "id": f"chatcmpl-show{self.calls}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "show"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}})


class ShowOpenAI(FakeOpenAI):
    """The fake OpenAI server (chat, transcription, speech) whose unscripted chat answer is
    ``SAW <the last user message on one line>``, as :class:`ShowModel`'s."""

    async def next_reply(self) -> Any:
        if self._script:
            return await super().next_reply()
        body = self.requests[-1].body or {} if self.requests else {}
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        content = users[-1].get("content") if users else ""
        parts = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
        shown = " ".join(p.get("text", "") if p.get("type") == "text" else f"[{p.get('type')} part]" for p in parts)
        return self.text_reply("SAW " + " ".join(shown.split())[:3500])


def write_config(root: Path, graph: FakeGraphAPI, model: EchoModel | FakeOpenAI, media: list[str] | None = None
                 ) -> Path:
    """A workspace and a sabha.yaml with only the WhatsApp channel, on the fakes."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             "llm:", "  model: openai:gpt-4o-mini", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {model.base_url}",
             "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
             "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
             f"  graph_base_url: {graph.base_url}", f"  api_version: {graph.version}",
             f'  allowed_numbers: ["{OWNER}", "{FRIEND}"]']
    if media:
        lines += ["media:", *(f"  {line}" for line in media)]
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class Daemon:
    """A running ``sabha run`` on the fakes, and a way to post webhooks to it."""

    def __init__(self, root: Path, graph: FakeGraphAPI, model: EchoModel | FakeOpenAI, http: ClientSession) -> None:
        self.root, self.graph, self.model, self.http = root, graph, model, http
        self.sabha: SabhaProcess | None = None

    async def start(self, media: list[str] | None = None) -> Daemon:
        env = {"WHATSAPP_ACCESS_TOKEN": self.graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
        if self.sabha is None:
            self.sabha = SabhaProcess(write_config(self.root, self.graph, self.model, media), env=env)
        await self.sabha.start()
        return self

    async def post(self, *messages: dict[str, Any]) -> None:
        assert self.sabha is not None
        status, text = await post(self.http, f"http://127.0.0.1:{self.sabha.port}/whatsapp/webhook",
                                  notification(list(messages)))
        assert status == 200, text

    async def answer_to(self, wamid: str, timeout: float = 30) -> str:
        """The text answering ``wamid`` (waits for it)."""
        await eventually(lambda: self.answers_to(wamid), f"the answer to {wamid}", timeout=timeout)
        return self.answers_to(wamid)[0]

    def answers_to(self, wamid: str) -> list[str]:
        return [s.body for s in self.graph.sent if s.context_id == wamid]

    async def marker(self, user: str = FRIEND, word: str = "MARKER") -> str:
        """Send a text and wait for its answer (everything before it in the lane is done)."""
        wamid = new_wamid()
        await self.post(message(user, text=word, wamid=wamid))
        return await self.answer_to(wamid)


@pytest.fixture
def model() -> ShowModel:
    return ShowModel(latency=0.05)


@pytest.fixture
async def daemon(tmp_path: Path, fake_graph: FakeGraphAPI, model: ShowModel) -> AsyncIterator[Daemon]:
    async with model, ClientSession(timeout=ClientTimeout(total=20)) as http:
        d = Daemon(tmp_path, fake_graph, model, http)
        try:
            yield d
        finally:
            if d.sabha is not None:
                await d.sabha.close()


def media_message(kind: str, media_id: str, *, user: str = FRIEND, sha256: str | None = None,
                  **fields: Any) -> dict[str, Any]:
    """A ``messages[]`` item of ``kind`` naming ``media_id`` (the webhook's sha256 is base64, as Meta writes it)."""
    body: dict[str, Any] = {"id": media_id, **fields}
    if sha256:
        body["sha256"] = base64.b64encode(bytes.fromhex(sha256)).decode()
    return message(user, kind, **{kind: body})


def _texts(graph: FakeGraphAPI) -> str:
    return "\n".join(s.body for s in graph.sent)


async def test_an_image_with_a_caption_is_answered_with_both(daemon: Daemon, fake_graph: FakeGraphAPI) -> None:
    await daemon.start()
    media_id = fake_graph.add_media(PNG, "image/png")
    item = media_message("image", media_id, sha256=hashlib.sha256(PNG).hexdigest(), mime_type="image/png",
                         caption=CHART_QUESTION)
    await daemon.post(item)
    answer = await daemon.answer_to(item["id"])
    assert TEXT_ONLY not in _texts(fake_graph)
    assert CHART_QUESTION in answer  # the caption reached the model
    # and so did the picture: its type and size (described honestly, whichever image reader is installed)
    assert "png" in answer.lower() and (f"{len(PNG):,} bytes" in answer or "40x30" in answer), answer
    assert "[image_url part]" in answer, answer  # gpt-4o-mini sees: the picture itself went with the question
    media = fake_graph.media[media_id]
    assert (media.lookups, media.downloads) == (1, 1)
    assert all(auth == f"Bearer {fake_graph.token}" for _, auth in fake_graph.media_requests)
    assert len(daemon.answers_to(item["id"])) == 1


async def test_a_text_document_is_read_and_its_content_reaches_the_answer(
    daemon: Daemon, fake_graph: FakeGraphAPI
) -> None:
    await daemon.start()
    data = b"Board notes\nQ3 revenue was 42 lakh; churn 3.1 percent.\n"
    media_id = fake_graph.add_media(data, "text/plain")
    item = media_message("document", media_id, sha256=hashlib.sha256(data).hexdigest(), mime_type="text/plain",
                         filename="q3-notes.txt", caption="Summarise these notes")
    await daemon.post(item)
    answer = await daemon.answer_to(item["id"])
    assert "Summarise these notes" in answer and "q3-notes.txt" in answer
    assert "Q3 revenue was 42 lakh" in answer


async def test_a_location_a_contact_card_and_an_order_are_answered(daemon: Daemon, fake_graph: FakeGraphAPI) -> None:
    await daemon.start()
    place = dict(PYWA_LOCATION, id=new_wamid(), **{"from": FRIEND})
    cards = dict(META_CONTACT, id=new_wamid(), **{"from": FRIEND})
    order = dict(PYWA_ORDER, id=new_wamid(), **{"from": FRIEND})
    await daemon.post(place)
    await daemon.post(cards)
    await daemon.post(order)
    where = await daemon.answer_to(place["id"])
    assert "37.4611978, -122.2164385" in where and "Facebook HQ" in where and "1 Hacker Way" in where
    who = await daemon.answer_to(cards["id"])
    assert "Ravi Kumar" in who and "+91 98765 43210" in who and "ravi@example.com" in who
    what = await daemon.answer_to(order["id"])
    assert "3 x HAMBURGER at 30 ILS" in what
    assert TEXT_ONLY not in _texts(fake_graph)


async def test_a_video_and_a_sticker_are_answered_never_silence(daemon: Daemon, fake_graph: FakeGraphAPI) -> None:
    await daemon.start()
    sticker_id = fake_graph.add_media(WEBP, "image/webp")
    video_id = fake_graph.add_media(b"\x00\x00\x00\x18ftypmp42" * 10, "video/mp4")
    sticker = media_message("sticker", sticker_id, mime_type="image/webp", animated=True)
    video = media_message("video", video_id, mime_type="video/mp4", caption="Is this ad any good?")
    await daemon.post(sticker, video)
    seen = (await daemon.answer_to(sticker["id"])).lower()
    assert "sticker" in seen and "webp" in seen
    answer = await daemon.answer_to(video["id"])
    assert "Is this ad any good?" in answer and "video" in answer.lower()
    assert fake_graph.media[video_id].downloads == 0  # not fetched: nothing reads videos


@pytest.mark.parametrize("voice", [True, False])
async def test_a_voice_note_without_a_transcriber_is_told_honestly(
    daemon: Daemon, fake_graph: FakeGraphAPI, voice: bool
) -> None:
    await daemon.start()
    data = b"OggS" + b"\x00" * 2000
    media_id = fake_graph.add_media(data, "audio/ogg; codecs=opus")
    item = media_message("audio", media_id, sha256=hashlib.sha256(data).hexdigest(),
                         mime_type="audio/ogg; codecs=opus", voice=voice)
    await daemon.post(item)
    answer = await daemon.answer_to(item["id"])
    assert "media.transcribe_model" not in answer and TEXT_ONLY not in answer
    assert ("voice notes" if voice else "audio files") in answer


async def test_over_the_cap_expired_and_damaged_files_are_each_told_with_the_caption_answered(
    daemon: Daemon, fake_graph: FakeGraphAPI
) -> None:
    await daemon.start(media=["max_bytes: 4096"])
    big = fake_graph.add_media(b"\x89PNG" + b"x" * 10_000, "image/png")
    gone = fake_graph.add_media(PNG, "image/png")
    fake_graph.expire(gone)
    damaged = fake_graph.add_media(PNG, "image/png", sha256=hashlib.sha256(b"something else").hexdigest())
    corrupt = fake_graph.add_media(b"%PDF-1.7\n1 0 obj <</Type /Catalog /Pages 2 0 R>> garbage \x00\xff" * 20,
                                   "application/pdf")
    items = {"big": media_message("image", big, mime_type="image/png", caption="CAP-BIG what about this?"),
             "corrupt": media_message("document", corrupt, mime_type="application/pdf", filename="deck.pdf",
                                      caption="CAP-CORRUPT is the deck ok?"),
             "gone": media_message("image", gone, mime_type="image/png", caption="CAP-GONE and this?"),
             "damaged": media_message("document", damaged, mime_type="text/plain", filename="plan.txt",
                                      caption="CAP-DAMAGED and this?")}
    for item in items.values():
        await daemon.post(item)
    await daemon.marker()
    answers = {name: daemon.answers_to(item["id"]) for name, item in items.items()}
    assert all(len(a) == 1 for a in answers.values()), answers  # each answered once, none lost
    big_answer, gone_answer, damaged_answer = (answers[k][0] for k in ("big", "gone", "damaged"))
    assert "CAP-BIG" in big_answer and "limit" in big_answer and "4 KB" in big_answer
    assert fake_graph.media[big].downloads == 0  # refused on the declared size, before any byte
    assert "CAP-GONE" in gone_answer and "no longer available" in gone_answer
    assert "CAP-DAMAGED" in damaged_answer and "plan.txt" in damaged_answer and "checksum" in damaged_answer
    corrupt_answer = answers["corrupt"][0]  # a damaged PDF: read in its own process, refused with a reason
    assert "CAP-CORRUPT" in corrupt_answer and "deck.pdf could not be read" in corrupt_answer, corrupt_answer
    assert "damaged" in corrupt_answer
    assert not list((daemon.root / "sessions" / "media").glob(".part-*"))  # nothing half-written left


async def test_kill_9_during_a_slow_download_then_restart_answers_it_exactly_once(
    daemon: Daemon, fake_graph: FakeGraphAPI
) -> None:
    await daemon.start()
    data = b"Slow notes: the pricing memo says raise by 8 percent.\n" + b"." * 400_000
    media_id = fake_graph.add_media(data, "text/plain", delay_s=0.15, chunk=16 * 1024)  # about 4 s
    item = media_message("document", media_id, sha256=hashlib.sha256(data).hexdigest(), mime_type="text/plain",
                         filename="memo.txt", caption="SLOW-DOC thoughts?")
    await daemon.post(item)  # acknowledged (200) without waiting for the download: the bytes come in the lane
    media = fake_graph.media[media_id]
    assert media.served < len(data)
    await eventually(lambda: media.served > 0, "the download under way", timeout=30)
    assert daemon.sabha is not None
    await daemon.sabha.signal(signal.SIGKILL)
    assert not daemon.answers_to(item["id"])
    media.delay_s = 0.0
    await daemon.start()
    answer = await daemon.answer_to(item["id"], timeout=60)
    assert "SLOW-DOC" in answer and "raise by 8 percent" in answer
    await daemon.marker()
    assert len(daemon.answers_to(item["id"])) == 1
    assert media.lookups == 2  # a fresh url for the second try


# --- voice notes (the voice branch's transcription and speech, through the fake OpenAI server) ----------

VOICE_QUESTION = "Should we raise our prices by ten percent before the festival season?"
VOICE_MEDIA = ["transcribe_model: openai:gpt-4o-mini-transcribe"]
SPEAK_MEDIA = [*VOICE_MEDIA, "speak_replies: when_spoken_to", "speech_model: openai:gpt-4o-mini-tts"]


@pytest.fixture
async def voiced(tmp_path: Path, fake_graph: FakeGraphAPI) -> AsyncIterator[tuple[Daemon, ShowOpenAI]]:
    async with ShowOpenAI() as openai, ClientSession(timeout=ClientTimeout(total=20)) as http:
        d = Daemon(tmp_path, fake_graph, openai, http)
        try:
            yield d, openai
        finally:
            if d.sabha is not None:
                await d.sabha.close()


def _voice_note(graph: FakeGraphAPI, openai: FakeOpenAI, said: str, *, delay_s: float = 0.0
                ) -> tuple[dict[str, Any], bytes]:
    note = fake_ogg_opus(7.0, said.encode())
    openai.script_transcript(note, said, seconds=7.0)
    media_id = graph.add_media(note, "audio/ogg; codecs=opus", delay_s=delay_s)
    item = media_message("audio", media_id, sha256=hashlib.sha256(note).hexdigest(),
                         mime_type="audio/ogg; codecs=opus", voice=True)
    return item, note


async def test_a_voice_note_is_answered_with_what_it_said(
    voiced: tuple[Daemon, ShowOpenAI], fake_graph: FakeGraphAPI
) -> None:
    daemon, openai = voiced
    await daemon.start(media=VOICE_MEDIA)
    item, note = _voice_note(fake_graph, openai, VOICE_QUESTION)
    await daemon.post(item)
    answer = await daemon.answer_to(item["id"])
    assert VOICE_QUESTION in answer and "transcribed" in answer
    [heard] = openai.transcriptions
    assert heard.audio == note and heard.model == "gpt-4o-mini-transcribe"
    assert not fake_graph.sent_audio  # speak_replies: never (the default)


async def test_kill_9_during_transcription_then_restart_answers_it_exactly_once(
    voiced: tuple[Daemon, ShowOpenAI], fake_graph: FakeGraphAPI
) -> None:
    daemon, openai = voiced
    await daemon.start(media=VOICE_MEDIA)
    openai.transcribe_delay = 30.0
    item, _ = _voice_note(fake_graph, openai, VOICE_QUESTION)
    await daemon.post(item)
    await openai.wait_for_audio(transcriptions=1, timeout=30)
    assert daemon.sabha is not None
    await daemon.sabha.signal(signal.SIGKILL)
    assert not daemon.answers_to(item["id"])
    openai.transcribe_delay = 0.0
    await daemon.start()
    answer = await daemon.answer_to(item["id"], timeout=60)
    assert VOICE_QUESTION in answer
    await daemon.marker()
    assert len(daemon.answers_to(item["id"])) == 1 and len(openai.transcriptions) == 2


async def test_kill_9_during_a_voice_note_download_then_restart_answers_it_exactly_once(
    voiced: tuple[Daemon, ShowOpenAI], fake_graph: FakeGraphAPI
) -> None:
    daemon, openai = voiced
    await daemon.start(media=VOICE_MEDIA)
    item, note = _voice_note(fake_graph, openai, VOICE_QUESTION + " " + "x" * 200_000, delay_s=0.2)
    fake_graph.media[item["audio"]["id"]].chunk = 16 * 1024
    await daemon.post(item)
    media = fake_graph.media[item["audio"]["id"]]
    await eventually(lambda: media.served > 0, "the download under way", timeout=30)
    assert daemon.sabha is not None
    await daemon.sabha.signal(signal.SIGKILL)
    assert not daemon.answers_to(item["id"]) and not openai.transcriptions
    media.delay_s = 0.0
    await daemon.start()
    answer = await daemon.answer_to(item["id"], timeout=60)
    assert VOICE_QUESTION in answer
    await daemon.marker()
    assert len(daemon.answers_to(item["id"])) == 1 and [t.audio for t in openai.transcriptions] == [note]


async def test_a_spoken_question_gets_the_text_then_a_spoken_reply_uploaded_and_sent_as_audio(
    voiced: tuple[Daemon, ShowOpenAI], fake_graph: FakeGraphAPI
) -> None:
    daemon, openai = voiced
    await daemon.start(media=SPEAK_MEDIA)
    item, _ = _voice_note(fake_graph, openai, VOICE_QUESTION)
    await daemon.post(item)
    text = await daemon.answer_to(item["id"])
    await eventually(lambda: fake_graph.sent_audio, "the spoken reply", timeout=30)
    [upload] = fake_graph.uploads
    [audio] = fake_graph.sent_audio
    [speech] = openai.speeches
    assert VOICE_QUESTION in text and VOICE_QUESTION in speech.input
    assert upload.data.startswith(b"OggS") and upload.type == "audio/ogg" and upload.messaging_product == "whatsapp"
    assert audio.media_id == upload.media_id and audio.user == FRIEND and audio.context_id == item["id"]
    text_wamid = next(s.wamid for s in fake_graph.sent if s.context_id == item["id"])
    assert int(text_wamid[9:15]) < int(audio.wamid[9:15])  # the text first, then the voice
    typed = await daemon.marker()  # when_spoken_to: a typed question is answered in text only
    assert "MARKER" in typed and len(fake_graph.sent_audio) == 1 and len(openai.speeches) == 1


async def test_a_pdf_documents_content_reaches_the_answer(daemon: Daemon, fake_graph: FakeGraphAPI) -> None:
    data = tiny_pdf(["Pricing memo: raise the premium plan to 999 rupees", "Churn held at 3 percent"])
    await daemon.start()
    media_id = fake_graph.add_media(data, "application/pdf")
    item = media_message("document", media_id, sha256=hashlib.sha256(data).hexdigest(),
                         mime_type="application/pdf", filename="memo.pdf", caption="What is weak here?")
    await daemon.post(item)
    answer = await daemon.answer_to(item["id"])
    assert "What is weak here?" in answer and "memo.pdf" in answer
    assert "raise the premium plan to 999 rupees" in answer and "Churn held at 3 percent" in answer


async def test_a_transcription_outage_is_told_once_and_nothing_is_lost(
    voiced: tuple[Daemon, ShowOpenAI], fake_graph: FakeGraphAPI
) -> None:
    daemon, openai = voiced
    await daemon.start(media=VOICE_MEDIA)
    openai.fail_transcriptions(times=10, status=503)
    item, _ = _voice_note(fake_graph, openai, VOICE_QUESTION)
    await daemon.post(item)
    await daemon.marker()
    [answer] = daemon.answers_to(item["id"])
    assert "could not transcribe" in answer and VOICE_QUESTION not in answer
