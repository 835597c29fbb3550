"""Issue 24, Telegram media at receipt: which attachment each kind of message becomes (no daemon,
no download). The end-to-end behaviour is in tests/bot/channels/telegram/test_telegram_media.py."""

from __future__ import annotations

from typing import Any

import pytest

from board.media.attachment import MediaKind, MediaRef
from bot.channels.telegram.attachments import attachments_of
from bot.channels.telegram.files import file_base_url
from bot.channels.telegram.inbound import parse_update
from tests.support.fakes.telegram_api import (
    FakeFile,
    FakeTelegramAPI,
    animation,
    audio,
    contact,
    document,
    location,
    photo,
    sticker,
    venue,
    video,
    video_note,
    voice,
)
from tests.support.telegram import OWNER

CAP = 20 * 1024 * 1024


def file(n: int, size: int = 1000) -> FakeFile:
    return FakeFile(file_id=f"id{n}", file_unique_id=f"uq{n}", data=b"", file_path=f"p/{n}", size=size)


def message(media: dict[str, Any], caption: str | None = None) -> Any:
    update = FakeTelegramAPI().build_media_update(OWNER, OWNER, media, caption)
    parsed = parse_update(update).message
    assert parsed is not None
    return parsed


def test_a_photo_is_its_largest_size_that_fits_the_cap() -> None:
    small, medium, large = file(1, 2_000), file(2, 50_000), file(3, 900_000)
    [att] = attachments_of(message(photo(small, medium, large), "caption"), CAP)
    assert (att.kind, att.mime, att.size) == (MediaKind.IMAGE, "image/jpeg", 900_000)
    assert att.source == MediaRef(channel="telegram", id="id3", unique_id="uq3")
    [capped] = attachments_of(message(photo(small, medium, large)), 100_000)
    assert capped.source is not None and capped.source.id == "id2"
    [none_fit] = attachments_of(message(photo(medium, large)), 10_000)  # the smallest: refused as too large
    assert none_fit.source is not None and none_fit.source.id == "id2"


def test_a_caption_stays_the_text() -> None:
    parsed = message(photo(file(1)), "What do you think of this chart?")
    assert parsed.body == "What do you think of this chart?"


def test_voice_audio_video_and_round_video() -> None:
    [note] = attachments_of(message(voice(file(1), duration=7)), CAP)
    assert (note.kind, note.mime, note.duration_s, note.label) == (MediaKind.VOICE, "audio/ogg", 7.0,
                                                                   "a voice note (7 s)")
    [song] = attachments_of(message(audio(file(2), duration=61, file_name="pitch.m4a", mime_type="audio/mp4")), CAP)
    assert (song.kind, song.name, song.mime, song.duration_s) == (MediaKind.AUDIO, "pitch.m4a", "audio/mp4", 61.0)
    [clip] = attachments_of(message(video(file(3))), CAP)
    assert (clip.kind, clip.mime) == (MediaKind.VIDEO, "video/mp4")
    [round_] = attachments_of(message(video_note(file(4))), CAP)
    assert round_.kind is MediaKind.VIDEO and round_.label == "a round video message"


def test_documents_an_image_file_is_a_picture_and_a_missing_mime_is_guessed() -> None:
    [pdf] = attachments_of(message(document(file(1), "deck.pdf", "application/pdf")), CAP)
    assert (pdf.kind, pdf.name, pdf.mime, pdf.size) == (MediaKind.DOCUMENT, "deck.pdf", "application/pdf", 1000)
    [shot] = attachments_of(message(document(file(2), "screen.png", "image/png")), CAP)
    assert shot.kind is MediaKind.IMAGE and shot.name == "screen.png"
    [guessed] = attachments_of(message(document(file(3), "sheet.csv", None)), CAP)
    assert guessed.mime == "text/csv"


def test_an_animation_is_one_video_not_also_a_document() -> None:
    atts = attachments_of(message(animation(file(1))), CAP)
    assert [a.kind for a in atts] == [MediaKind.VIDEO]


def test_stickers_static_is_a_picture_animated_and_video_are_said_unseen() -> None:
    [still] = attachments_of(message(sticker(file(1), emoji="🙂")), CAP)
    assert (still.kind, still.mime, still.problem) == (MediaKind.STICKER, "image/webp", None)
    [moving] = attachments_of(message(sticker(file(2), animated=True, emoji="🎉")), CAP)
    assert moving.problem == "I cannot see animated stickers, so I took its emoji 🎉 as your message"
    [webm] = attachments_of(message(sticker(file(3), is_video=True)), CAP)
    assert webm.problem is not None and "video sticker" in webm.problem


def test_places_and_cards_carry_text_and_no_file() -> None:
    [here] = attachments_of(message(location(12.5, 77)), CAP)
    assert here.kind is MediaKind.LOCATION and here.source is None
    assert here.derived == "shared a location: latitude 12.500000, longitude 77.000000"
    [cafe] = attachments_of(message(venue(19.1, 72.9, "Gateway Cafe", "Apollo Bunder")), CAP)  # one, not two
    assert cafe.derived is not None and "Gateway Cafe, Apollo Bunder" in cafe.derived
    [card] = attachments_of(message(contact("+91 98765 43210", "Asha", "Rao", user_id=7)), CAP)
    assert card.kind is MediaKind.CONTACTS
    assert card.derived == "shared a contact card: Asha Rao, +91 98765 43210, Telegram user id 7"


def test_text_and_unknown_kinds_have_no_attachments() -> None:
    assert attachments_of(message({"text": "hello"}), CAP) == ()
    assert attachments_of(message({"dice": {"emoji": "🎲", "value": 3}}), CAP) == ()


def test_a_media_field_of_the_wrong_type_makes_the_update_invalid() -> None:
    update = FakeTelegramAPI().build_media_update(OWNER, OWNER, voice(file(1)))
    update["message"]["voice"]["file_size"] = "big"
    with pytest.raises(ValueError, match=r"voice\.file_size"):
        parse_update(update)


@pytest.mark.parametrize(("api", "files"), [
    ("https://api.telegram.org/bot", "https://api.telegram.org/file/bot"),
    ("http://127.0.0.1:8081/bot", "http://127.0.0.1:8081/file/bot"),
    ("http://local/bot{token}/x", "http://local/file/bot{token}/x"),
])
def test_the_file_url_follows_the_api_url(api: str, files: str) -> None:
    assert file_base_url(api) == files
