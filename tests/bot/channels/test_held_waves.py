"""How held and front-desk requests are cut into waves for the hand-over (:func:`bot.channels.held.hold.waves`):
different senders together, a sender's requests never in one wave (so never passing each other), an unknown sender
alone, at most MAX_WAVE at once; and each channel's reading of who a stored body is from."""

from __future__ import annotations

import json

from bot.channels.held.hold import MAX_WAVE, waves
from bot.channels.held.store import HeldRequest


def rows(*senders: str) -> list[HeldRequest]:
    return [HeldRequest(i, "/hook", (), who.encode()) for i, who in enumerate(senders)]


def read(body: bytes) -> frozenset[str] | None:
    text = body.decode()
    return None if text == "?" else frozenset(text.split("+"))


def ids(cut: list[list[HeldRequest]]) -> list[list[int]]:
    return [[row.id for row in wave] for wave in cut]


def test_different_senders_go_together_and_a_sender_s_next_request_waits_for_the_next_wave() -> None:
    assert ids(waves(rows("a", "b", "c", "a", "d"), {"/hook": read})) == [[0, 1, 2], [3, 4]]


def test_a_request_of_two_senders_waits_for_both_and_an_unknown_one_goes_alone() -> None:
    assert ids(waves(rows("a", "b", "b+c", "?", "d", "e"), {"/hook": read})) == [[0, 1], [2], [3], [4, 5]]


def test_a_path_without_a_reader_goes_one_at_a_time_and_a_wave_is_capped() -> None:
    assert ids(waves(rows("a", "b"), {})) == [[0], [1]]
    many = waves(rows(*(f"u{n}" for n in range(MAX_WAVE + 3))), {"/hook": read})
    assert [len(w) for w in many] == [MAX_WAVE, 3]


def test_order_is_kept_across_waves() -> None:
    cut = waves(rows("a", "a", "b", "a", "b", "c"), {"/hook": read})
    flat = [row.id for wave in cut for row in wave]
    assert flat == sorted(flat)
    assert ids(cut) == [[0], [1, 2], [3, 4, 5]]


def test_whatsapp_and_telegram_bodies_name_their_senders() -> None:
    from bot.channels.telegram.channel import TelegramChannel
    from bot.channels.whatsapp.channel import WhatsAppChannel
    from tests.support.whatsapp import notification, status, text_notification

    wa = text_notification("15550001", "hi")
    assert WhatsAppChannel.webhook_senders(None, json.dumps(wa).encode()) == {"wa:15550001"}  # type: ignore[arg-type]
    statuses = notification(statuses=[status("wamid.X", "delivered", "15550002")])
    assert WhatsAppChannel.webhook_senders(None, json.dumps(statuses).encode()) == {"wa:15550002"}  # type: ignore[arg-type]
    assert WhatsAppChannel.webhook_senders(None, b"not json") is None  # type: ignore[arg-type]
    update = {"update_id": 1, "message": {"message_id": 5, "chat": {"id": -100123}, "text": "hi"}}
    assert TelegramChannel.webhook_senders(None, json.dumps(update).encode()) == {"telegram:-100123"}  # type: ignore[arg-type]
    press = {"update_id": 2, "callback_query": {"id": "q", "message": {"message_id": 6, "chat": {"id": 42}}}}
    assert TelegramChannel.webhook_senders(None, json.dumps(press).encode()) == {"telegram:42"}  # type: ignore[arg-type]
    assert TelegramChannel.webhook_senders(None, b"{}") is None  # type: ignore[arg-type]


def test_the_front_desk_relays_and_the_hold_keeps_the_same_headers_the_request_s_own() -> None:
    from aiohttp.test_utils import make_mocked_request
    from multidict import CIMultiDict

    from bot.channels.held.hold import REPLAY_HEADER, own_headers

    request = make_mocked_request("POST", "/slack/events", headers=CIMultiDict({
        "Host": "example.org", "Content-Length": "2", "Connection": "keep-alive", "Expect": "100-continue",
        REPLAY_HEADER: "forged", "traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01",
        "X-Slack-Signature": "v0=abc", "X-Slack-Request-Timestamp": "1", "Content-Type": "application/json"}))
    assert own_headers(request) == [("X-Slack-Signature", "v0=abc"), ("X-Slack-Request-Timestamp", "1"),
                                    ("Content-Type", "application/json")]
