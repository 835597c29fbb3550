"""bot.web.conversations: where a conversation happens and who said a line, from its key and entries
(every kind of session key, DESIGN.md), and the one-line preview without Markdown syntax."""

from __future__ import annotations

from typing import Any

import pytest

from board.conversation.sessions import SessionRef
from bot.web.conversations import LineKind, conversation_item, place_of, transcript_line, when_label
from bot.web.render import plain_text

LABELS = {"critic": "🦉 Critic", "general": "🧭 General"}


def _user(channel: str, sender: str = "root", name: str | None = None, text: str = "hi") -> dict[str, Any]:
    entry = {"type": "message", "role": "user", "channel": channel, "sender": sender, "text": text,
             "ts": "2026-11-29T06:49:10+00:00"}
    if name:
        entry["sender_name"] = name
    return entry


@pytest.mark.parametrize(("key", "entries", "place"), [
    ("main", [_user("console"), _user("web")], "Web chat · Terminal"),
    ("main", [], "Nothing said yet"),
    ("main", [{"type": "meeting", "topic": "x"}], "Board meetings"),
    ("board:critic:wa-15550001", [_user("whatsapp", "15550001", "Priya")], "WhatsApp · Priya"),
    ("board:critic:wa-15550001", [], "WhatsApp · +15550001"),
    ("board:critic:wa-g-123", [_user("whatsapp", "1", "A")], "WhatsApp group"),
    ("board:critic:g--1001", [_user("telegram", "42", "Asha")], "Telegram topic"),
    ("board:critic:g-C01", [_user("slack", "U1", "Ravi")], "Slack group"),
    ("board:critic:tg-77", [_user("telegram", "77", "Meera")], "Telegram · Meera"),
])
def test_place_of_every_kind_of_key(key: str, entries: list[dict[str, Any]], place: str) -> None:
    assert place_of(key, entries) == place


def test_lines_are_labelled_by_who_spoke_and_a_meeting_is_a_note() -> None:
    mine = SessionRef("board:critic", "s1", "critic", "2026-11-29T06:00:00+00:00", None)
    theirs = SessionRef("board:critic:wa-1", "s2", "critic", "2026-11-29T06:00:00+00:00", "2026-11-29T07:00:00+00:00")
    assert transcript_line(_user("console"), mine, LABELS).who == "You"
    assert transcript_line(_user("whatsapp", "1", "Priya"), theirs, LABELS).who == "Priya"
    answer = {"type": "message", "role": "assistant", "agent": "critic", "text": "**No.**", "ts": ""}
    line = transcript_line(answer, mine, LABELS)
    assert (line.who, line.advisor, line.mine) == ("🦉 Critic", True, False)
    meeting = {"type": "meeting", "meeting_id": "m-1", "topic": "Pune?", "recommendation": "Pilot first",
               "dissent": [{"who": "critic", "why": "too soon"}], "actions": [{"task": "Call", "owner": "general"}],
               "text": "System: ...\nRecommendation: ..."}
    line = transcript_line(meeting, mine, LABELS)
    assert line.kind is LineKind.MEETING and line.meeting is not None
    assert line.meeting.dissent == ("🦉 Critic: too soon",) and line.meeting.actions == ("Call (🧭 General)",)
    folded = transcript_line({"type": "tool_call", "name": "search", "args": {"q": "a"}, "text": "a\nb"}, mine, LABELS)
    assert folded.kind is LineKind.FOLDED and "text: a\nb" in folded.text and "\\n" not in folded.text
    item = conversation_item(theirs, [_user("whatsapp", "1", "Priya", "Is **this** `it`?")], LABELS)
    assert item.preview == "Priya: Is this it?" and item.earlier and item.archived == "29 Nov 2026, 07:00 UTC"


def test_when_label_and_plain_text() -> None:
    assert when_label("2026-11-29T06:49:10+00:00") == "29 Nov 2026, 06:49 UTC"
    assert when_label("2026-11-29T06:49:10") == "29 Nov 2026, 06:49 UTC"
    assert when_label("") == "" and when_label("soon") == "soon"
    assert plain_text("# Title\n\n- **a**\n- `b`\n\n[link](https://x)") == "Title a b link"
