"""What the sender is told about what could not be read, and what is logged, on a real ``sabha run``
(issue item 14).

* an animated or video sticker on Telegram: the sender hears that it cannot be seen AND gets an
  answer: its emoji reaches the board as the sender's words (it said "only its emoji was passed
  on", and nothing followed);
* a voice note with no transcriber: the sender hears what *they* can do (type it); the owner's
  fix (``media.transcribe_model``) goes to the log, not to the sender;
* a redelivered WhatsApp webhook is a duplicate: what its messages made Sabha log (a reaction, a
  system notice, the errors Meta attached to an unsupported message) is logged once per message,
  not again on each redelivery.

The model answers with what it received (``SHOWN ...`` on Telegram, ``SAW ...`` on WhatsApp).
"""

from __future__ import annotations

import hashlib
import re

import pytest

from tests.support import readers as readers_support
from tests.support.daemon import SabhaProcess
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI, sticker, voice
from tests.support.readers import Daemon, marker_answered, media_message
from tests.support.telegram import OWNER, eventually
from tests.support.whatsapp import FRIEND, message, new_wamid, notification, post

tg, wa = readers_support.tg, readers_support.wa  # the fixtures

CANNOT_LISTEN = "I can't listen to voice notes here; please type your message"


def owner_texts(fake: FakeTelegramAPI) -> list[str]:
    return [m.text for m in fake.sent_to(OWNER)]


# -- stickers --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["animated", "video"])
async def test_an_animated_sticker_is_said_unseen_and_its_emoji_is_answered(fake: FakeTelegramAPI, tg: SabhaProcess,
                                                                           kind: str) -> None:
    moving = fake.add_file(b"\x1f\x8b tgs" if kind == "animated" else b"\x1aE\xdf\xa3webm", name=f"s.{kind}")
    fake.push_media(OWNER, OWNER, sticker(moving, animated=kind == "animated", is_video=kind == "video", emoji="🎉"))
    await marker_answered(fake)
    [answer] = [t for t in owner_texts(fake) if "MARKER" not in t]
    assert f"I cannot see {kind} stickers" in answer, answer  # said what happened
    assert re.search(r"SHOWN 🎉", answer), answer  # and answered: the emoji reached the board as the sender's words
    assert fake.downloads == []  # nothing to see: not downloaded


async def test_an_animated_sticker_without_an_emoji_says_what_to_do(fake: FakeTelegramAPI, tg: SabhaProcess) -> None:
    moving = fake.add_file(b"\x1f\x8b tgs", name="s.tgs")
    update = fake.build_media_update(OWNER, OWNER, sticker(moving, animated=True))
    del update["message"]["sticker"]["emoji"]
    fake.push_update(update)
    await marker_answered(fake)
    [answer] = [t for t in owner_texts(fake) if "MARKER" not in t]
    assert "I cannot see animated stickers" in answer and "write what you mean" in answer, answer
    assert "passed on" not in answer


# -- voice notes without a transcriber ---------------------------------------------------------------


async def test_a_voice_note_without_a_transcriber_tells_the_sender_to_type_on_telegram(
        fake: FakeTelegramAPI, tg: SabhaProcess) -> None:
    note = fake.add_file(b"OggS\x00fake-opus", name="voice.oga")
    fake.push_media(OWNER, OWNER, voice(note, duration=7))
    await marker_answered(fake)
    [answer] = [t for t in owner_texts(fake) if "MARKER" not in t]
    assert CANNOT_LISTEN in answer, answer
    assert "transcribe_model" not in answer and "media." not in answer, answer  # the owner's setting: not for them
    line = await tg.wait_for_log(r"media\.transcribe_model")  # the owner learns the fix from the log
    assert "voice note" in line and "not transcribed" in line, line


async def test_a_voice_note_without_a_transcriber_tells_the_sender_to_type_on_whatsapp(
        wa: Daemon, fake_graph: FakeGraphAPI) -> None:
    await wa.start()
    data = b"OggS" + b"\x00" * 2000
    media_id = fake_graph.add_media(data, "audio/ogg; codecs=opus")
    item = media_message("audio", media_id, sha256=hashlib.sha256(data).hexdigest(),
                         mime_type="audio/ogg; codecs=opus", voice=True)
    await wa.post(item)
    answer = await wa.answer_to(item["id"], timeout=60)
    assert CANNOT_LISTEN in answer and "transcribe_model" not in answer, answer
    assert wa.sabha is not None
    await wa.sabha.wait_for_log(r"media\.transcribe_model")


# -- a redelivered webhook ---------------------------------------------------------------------------


async def test_a_redelivered_webhook_logs_its_notices_once(wa: Daemon, fake_graph: FakeGraphAPI) -> None:
    await wa.start()
    assert wa.sabha is not None
    reaction = message(FRIEND, "reaction", reaction={"message_id": "wamid.OUT1", "emoji": "\U0001f44d"})
    odd = message(FRIEND, "unsupported", errors=[{
        "code": 131051, "title": "Message type unknown", "message": "Message type unknown",
        "error_data": {"details": "Message type is not supported."}}])
    system = message(FRIEND, "system", system={"body": "User changed number", "wa_id": "15550007777",
                                                "type": "user_changed_number"})
    body = notification([reaction, odd, system])
    url = f"http://127.0.0.1:{wa.sabha.port}/whatsapp/webhook"
    for attempt in range(3):  # Meta delivers at least once: the same webhook three times
        status, text = await post(wa.http, url, body)
        assert status == 200, text
        await wa.marker(word=f"MARKER {attempt}")  # everything before it is done (logged, answered)
    await eventually(lambda: len(wa.answers_to(odd["id"])) >= 1, "the polite line", timeout=30)
    assert len(wa.answers_to(odd["id"])) == 1  # answered once
    log = wa.sabha.log
    for item in (reaction, odd, system):
        lines = [line for line in log.splitlines() if item["id"] in line and "sabha.whatsapp" in line]
        assert len(lines) == 1, (item["type"], lines)
    assert log.count("was delivered again; already stored") == 2  # the redeliveries were seen as such


async def test_each_new_message_is_still_logged(wa: Daemon, fake_graph: FakeGraphAPI) -> None:
    """Logged once per message, not once per kind: two reactions, two lines."""
    await wa.start()
    assert wa.sabha is not None
    first, second = (message(FRIEND, "reaction", wamid=new_wamid(), reaction={"message_id": "wamid.O", "emoji": e})
                     for e in ("\U0001f44d", "\u2764"))
    await wa.post(first)
    await wa.post(second)
    await wa.marker()
    assert all(f"reaction message {m['id']}" in wa.sabha.log for m in (first, second))


async def test_a_redelivered_message_for_another_number_is_logged_once(wa: Daemon, fake_graph: FakeGraphAPI) -> None:
    """A webhook for another phone number of the same app (Meta sends every number's to one URL)."""
    await wa.start()
    assert wa.sabha is not None
    elsewhere = message(FRIEND, text="for the other number")
    body = notification([elsewhere])
    body["entry"][0]["changes"][0]["value"]["metadata"]["phone_number_id"] = "999000111"
    url = f"http://127.0.0.1:{wa.sabha.port}/whatsapp/webhook"
    for attempt in range(3):
        status, text = await post(wa.http, url, body)
        assert status == 200, text
        await wa.marker(word=f"MARKER {attempt}")
    lines = [line for line in wa.sabha.log.splitlines() if elsewhere["id"] in line]
    assert len(lines) == 1 and "for another number" in lines[0], lines
    assert wa.answers_to(elsewhere["id"]) == []  # not ours to answer
