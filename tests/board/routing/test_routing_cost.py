"""What routing a long message costs: it runs on the event loop inside a WhatsApp webhook's acknowledgement (the
sticky role, ``bot/channels/whatsapp/channel.py`` ``_stick``) and again when the message is answered, so it must
read a message a bounded number of times, not once per word (issue 44: the acknowledgement's tail)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from board.envelope import Envelope
from board.routing import addressing
from tests.board.routing.test_addressing import shipped_router

SENTENCE = ("Can you look at our pricing for next quarter and tell me what you think about the competitors' offers "
            "and whether we should change anything before the launch? ")


class _Counting:
    """A compiled pattern that counts the characters it is asked to search."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.read = 0

    def search(self, text: str, *args: Any) -> re.Match[str] | None:
        self.read += len(text)
        return self.pattern.search(text, *args)


@pytest.mark.parametrize("repeats", [1, 25])
def test_a_long_message_is_read_in_time_linear_in_its_length(monkeypatch: pytest.MonkeyPatch, repeats: int) -> None:
    """WhatsApp lets a text be 4,096 characters long. Each word of five letters or more is checked for a slip of a
    member's name, and whether "my" or "the" stands before it: that check searched the whole text before the word,
    so a 4,000-character message was read ~300 times over (24 ms of one core on the loop, every request in flight
    waiting). Only the word before counts: the text is read a bounded number of times."""
    counting = _Counting(addressing._OWNED)
    monkeypatch.setattr(addressing, "_OWNED", counting)
    text = SENTENCE * repeats
    route = shipped_router().route(Envelope(channel="whatsapp", text=text, sender="15550001", chat_id="15550001"))
    assert route.role == "general"  # nobody addressed: the chair, as before
    assert counting.read <= 2 * len(text), f"searched {counting.read} characters of a {len(text)}-character text"


@pytest.mark.parametrize(("before", "owned"), [
    ("ask my ", True), ("ask my\u00a0\n ", True), ("THE ", True), ("their  ", True), ("my", False),
    ("bathe ", False), ("mythe ", False), ("ask him ", False), ("", False), ("a ", True), ("ka ", False),
])
def test_a_slip_after_a_possessive_or_an_article_is_still_a_word(before: str, owned: bool) -> None:
    """The shortened check reads as the whole-text search did ("ask my fiance" is no call to finance)."""
    assert addressing._owned(before) is owned
    assert (re.search(r"\b(?:my|your|his|her|their|our|its|a|an|the|this|that)\s+$", before, re.IGNORECASE)
            is not None) is owned
