"""Conversations as a person reads them: the Conversations list and one conversation's lines.

The session index speaks in keys (``main``, ``board:critic``, ``board:finance:wa-15550001``) and the
transcripts in roles (``user`` / ``assistant``) and senders (the terminal's login name, ``root``). The
pages show neither: :func:`conversation_item` makes a row of the list (the advisor's name and emoji,
where the talk is: the terminal, the web chat, a Telegram topic, a WhatsApp person..., its last
activity as a date, a one-line preview of the last thing said, an archived session marked as an
earlier one); :func:`transcript_line` makes one entry of a conversation, labelled by who spoke
("You" for the board's owner, the person's name, the advisor's name, "Sabha"), a meeting as its
question, decision and a link to its page, and other records (tool calls, consultations) as
folded text with their line breaks, never JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from board.conversation.sessions import SessionRef
from bot.web.render import plain_text

__all__ = ["CHANNEL_NAMES", "ConversationItem", "LineKind", "MeetingNote", "TranscriptLine", "conversation_item",
           "place_of", "transcript_line", "when_label"]

CHANNEL_NAMES = {"console": "Terminal", "web": "Web chat", "telegram": "Telegram", "whatsapp": "WhatsApp",
                 "slack": "Slack", "discord": "Discord"}
PREVIEW_CHARS = 110
FOLDED_CHARS = 20_000
DISSENT_CHARS = 240  # of a dissent or an action in a meeting's note (its page has the whole)
_FOLDED_TITLES = {"tool_call": "Tool call", "tool_result": "Tool result", "consult": "Consulted",
                  "compaction": "Earlier messages summarised"}


class LineKind(StrEnum):
    """What a line of a conversation is."""

    MESSAGE = "message"
    MEETING = "meeting"
    FOLDED = "folded"


@dataclass(frozen=True)
class ConversationItem:
    """One conversation in the list."""

    session_id: str
    advisor: str  # "🦉 Critic"
    where: str  # "Terminal · Web chat", "WhatsApp · Priya"
    last: str  # "29 Nov 2026, 06:49 UTC" ("" when nothing was said)
    last_iso: str  # for sorting and <time datetime>
    preview: str  # the last thing said, on one line
    earlier: bool  # an archived (earlier) session of the same conversation
    archived: str  # when it was archived, as a date


@dataclass(frozen=True)
class MeetingNote:
    """A board meeting as a conversation records it."""

    meeting_id: str
    topic: str
    recommendation: str
    dissent: tuple[str, ...]
    actions: tuple[str, ...]


@dataclass(frozen=True)
class TranscriptLine:
    """One entry of a conversation as the page shows it."""

    kind: LineKind
    who: str  # "You", "Priya", "🦉 Critic", "Sabha"; a folded record's title
    mine: bool  # said by the board's owner
    text: str  # Markdown of a message; plain text of a folded record
    ts: str  # ISO 8601
    when: str  # the time, as read
    meeting: MeetingNote | None = None
    advisor: bool = False  # said by an advisor (laid out apart from what people said)


def when_label(ts: str | None) -> str:
    """``2026-11-29T06:49:10+00:00`` -> ``29 Nov 2026, 06:49 UTC`` ("" when it is no time)."""
    if not ts:
        return ""
    try:
        moment = datetime.fromisoformat(str(ts))
    except ValueError:
        return str(ts)[:19].replace("T", " ")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%-d %b %Y, %H:%M UTC")


def _suffix(key: str) -> str:
    """``board:critic:wa-155`` -> ``wa-155``; "" for the owner's own conversations (``main``, ``board:critic``)."""
    parts = key.split(":", 2)
    return parts[2] if len(parts) == 3 and parts[0] == "board" else ""


def _channels(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The channels the person wrote from, the latest first."""
    seen = [str(e.get("channel")) for e in reversed(entries) if e.get("role") == "user" and e.get("channel")
            and e.get("sender") != "sabha"]
    return [CHANNEL_NAMES.get(c, c.capitalize()) for c in dict.fromkeys(seen)]


def _person(entries: Sequence[Mapping[str, Any]], fallback: str) -> str:
    for e in reversed(entries):
        if e.get("role") == "user" and e.get("sender") != "sabha":
            return str(e.get("sender_name") or e.get("sender") or fallback)
    return fallback


def place_of(key: str, entries: Sequence[Mapping[str, Any]]) -> str:
    """Where conversation ``key`` happens, from its key and the channels its messages came from."""
    suffix = _suffix(key)
    channels = _channels(entries)
    if not suffix:  # the owner's own: shared by the terminal, the web chat, the owner's DMs
        if channels:
            return " · ".join(channels)
        return "Board meetings" if any(e.get("type") == "meeting" for e in entries) else "Nothing said yet"
    if suffix.startswith("wa-g-"):
        return "WhatsApp group"
    if suffix.startswith("wa-"):
        return f"WhatsApp · {_person(entries, '+' + suffix[3:])}"
    if suffix.startswith("g-"):
        channel = channels[0] if channels else "Group"
        return f"{channel} topic" if channel == "Telegram" else f"{channel} group"
    prefix, _, user = suffix.partition("-")
    channel = "Telegram" if prefix == "tg" else CHANNEL_NAMES.get(prefix, prefix.capitalize())
    return f"{channel} · {_person(entries, user)}"


def _preview(entry: Mapping[str, Any] | None, ref: SessionRef, labels: Mapping[str, str]) -> str:
    if entry is None:
        return "Nothing said yet."
    if entry.get("type") == "meeting":
        text = f"Board meeting: {entry.get('topic') or ''}"
    else:
        text = plain_text(str(entry.get("text") or ""))
        if entry.get("role") != "assistant":  # the advisor's own words need no name: the row names it
            text = f"{_speaker(entry, ref, labels)[0]}: {text}"
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW_CHARS else line[:PREVIEW_CHARS - 1].rstrip() + "…"


def conversation_item(ref: SessionRef, entries: Sequence[Mapping[str, Any]], labels: Mapping[str, str]) -> \
        ConversationItem:
    """The list's row for ``ref`` from its transcript's last ``entries`` (``labels``: role -> "🦉 Critic")."""
    said = [e for e in entries if e.get("type") in ("message", "meeting")]
    last = said[-1] if said else None
    last_iso = str(last.get("ts") or "") if last is not None else ""
    return ConversationItem(session_id=ref.session_id, advisor=labels.get(ref.role, ref.role.capitalize()),
                            where=place_of(ref.key, entries), last=when_label(last_iso or ref.created_at),
                            last_iso=last_iso or ref.created_at, preview=_preview(last, ref, labels),
                            earlier=ref.archived_at is not None, archived=when_label(ref.archived_at))


def _speaker(entry: Mapping[str, Any], ref: SessionRef, labels: Mapping[str, str]) -> tuple[str, bool]:
    """Who said ``entry`` and whether it was the board's owner."""
    if entry.get("role") == "assistant":
        role = str(entry.get("agent") or ref.role)
        return labels.get(role, role.capitalize()), False
    if entry.get("sender") == "sabha":
        return "Sabha", False
    if not _suffix(ref.key):  # the owner's own conversation: every message in it is the owner's
        return "You", True
    return str(entry.get("sender_name") or entry.get("sender") or "Someone"), False


def _short(text: str, limit: int = DISSENT_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


def _note(entry: Mapping[str, Any], labels: Mapping[str, str]) -> MeetingNote:
    def name(role: object) -> str:
        return labels.get(str(role), str(role).capitalize())

    dissent = tuple(f"{name(d.get('who'))}: {_short(str(d.get('why') or ''))}" for d in entry.get("dissent") or ()
                    if isinstance(d, dict))
    actions = tuple(_short(str(a.get("task") or "")) + (f" ({name(a.get('owner'))})" if a.get("owner") else "")
                    for a in entry.get("actions") or () if isinstance(a, dict))
    return MeetingNote(meeting_id=str(entry.get("meeting_id") or ""), topic=str(entry.get("topic") or ""),
                       recommendation=str(entry.get("recommendation") or ""), dissent=dissent, actions=actions)


def _folded_text(entry: Mapping[str, Any]) -> str:
    """A record's fields, one ``name: value`` a line, texts with their own line breaks."""
    lines = []
    for name, value in entry.items():
        if name in ("type", "ts", "id"):
            continue
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"{name}: {shown}")
    return "\n".join(lines)[:FOLDED_CHARS]


def transcript_line(entry: Mapping[str, Any], ref: SessionRef, labels: Mapping[str, str]) -> TranscriptLine:
    """Entry ``entry`` of conversation ``ref`` as the page shows it."""
    kind = str(entry.get("type") or "")
    ts = str(entry.get("ts") or entry.get("created") or "")
    if kind == "message":
        who, mine = _speaker(entry, ref, labels)
        return TranscriptLine(LineKind.MESSAGE, who, mine, str(entry.get("text") or ""), ts, when_label(ts),
                              advisor=entry.get("role") == "assistant")
    if kind == "meeting":
        return TranscriptLine(LineKind.MEETING, "Sabha", False, "", ts, when_label(ts), meeting=_note(entry, labels))
    title = _FOLDED_TITLES.get(kind, kind.replace("_", " ").capitalize())
    name = entry.get("name") or entry.get("tool") or entry.get("to") or ""
    return TranscriptLine(LineKind.FOLDED, f"{title}: {name}" if name else title, False, _folded_text(entry), ts,
                          when_label(ts))
