"""The one-line posts a chat channel's meeting view makes of the table: contributions and applied controls.

A meeting takes in what the people at the table write (a ``contribution`` event, :mod:`board.room.meeting.seat`)
and the controls it applies (a ``control`` event: pause, resume, wrap, extend, cancel, a refused one saying why).
The web page and the terminal show them in the meeting's sequence; Telegram (:mod:`bot.channels.telegram.meeting`)
and the relay WhatsApp and Slack share (:mod:`bot.channels.meeting_relay`) show the same lines, made here:

* :func:`contribution_line`: ``🗣 the owner (via web), to Finance: “…”`` (the text quoted as data, one line,
  capped at :data:`SAID_CHARS`);
* :func:`control_line`: ``⏸ Paused by the owner (web): no new round starts until /resume …`` (the meeting's
  own words for what it did, ``🚫`` when it refused);
* :func:`echoed`: a contribution written in the channel itself is *not* posted again: it is already there as the
  person's own message (the front door only takes a chat message as a contribution in one of the meeting's
  places, :meth:`board.room.table.MeetingTable.meeting_at`). So Telegram skips ``via == "telegram"`` and
  WhatsApp ``via == "whatsapp"``;
* :func:`contribution_item` / :func:`control_item`: the keys they are recorded under in the posted record
  (:mod:`bot.channels.meeting_posts`): ``contribution:<id>``, ``control:<id>``;
* :func:`table_events`: the same, read back from a meeting's record (:class:`StoredTable`) for the catch-up of a
  meeting that goes on after a restart.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from board.workspace.quoting import plain_line

__all__ = ["SAID_CHARS", "StoredTable", "contribution_item", "contribution_line", "control_item", "control_line",
           "echoed", "table_events"]

SAID_CHARS = 600  # how much of a contribution the line quotes
_NAME_CHARS = 60
_MARKS = {"pause": "⏸", "resume": "▶️", "wrap": "🏁", "extend": "\u2795", "cancel": "⏹"}
_VERBS = {"pause": "Paused", "resume": "Resumed", "wrap": "Wrapping up", "extend": "Extended",
          "cancel": "Cancelled"}


def _field(data: Mapping[str, Any], name: str) -> str:
    """``data[name]``, else that field of a contribution sent whole as ``data["contribution"]`` ("" if none)."""
    value = data.get(name)
    whole = data.get("contribution")
    if value is None and whole is not None:
        value = whole.get(name) if isinstance(whole, dict) else getattr(whole, name, None)
    return "" if value is None else str(value)


def echoed(data: Mapping[str, Any], channel: str, thread: str | None = None) -> bool:
    """The contribution was written where the view shows the meeting: in ``channel`` and, given ``thread`` (the
    thread the view posts in: a forum topic's id, "" for none), in that thread. Then it is there already as the
    person's own message. One written in the meeting's origin (a forum's General, while the meeting runs in its
    own topic) is not, and is shown."""
    if _field(data, "via") != channel:
        return False
    whole = data.get("contribution")
    told = "thread" in data or (isinstance(whole, dict) and "thread" in whole)  # events stored before it was told
    return thread is None or not told or _field(data, "thread") == thread


def contribution_item(data: Mapping[str, Any]) -> str:
    """``contribution:<id>`` ("" when the event carries no id: then it is not recorded)."""
    found = _field(data, "id")
    return f"contribution:{found}" if found else ""


def control_item(data: Mapping[str, Any]) -> str:
    """``control:<id>`` ("" when the event carries no id: then it is not recorded)."""
    found = _field(data, "id")
    return f"control:{found}" if found else ""


def contribution_line(data: Mapping[str, Any], text: str = "", *, label_for: Callable[[str], str] | None = None,
                      quote: Callable[[str], str] = lambda s: s) -> str:
    """``🗣 the owner (via web), to Finance: “…”``; ``quote`` makes the user's text safe for the channel's markup
    (Telegram's Markdown); ``label_for`` names the addressed member."""
    name = plain_line(_field(data, "name") or "someone at the table", _NAME_CHARS)
    via = _field(data, "via")
    who = f"{name} (via {via})" if via else name
    addressed = _field(data, "addressed")
    if addressed:
        try:
            to = label_for(addressed) if label_for is not None else addressed
        except Exception:  # noqa: BLE001 - a missing soul must not hide the line
            to = addressed
        who += f", to {plain_line(to, _NAME_CHARS)}"
    said = plain_line(_field(data, "said") or text, SAID_CHARS)
    return f"🗣 {quote(who)}: \u201c{quote(said)}\u201d"


def control_line(data: Mapping[str, Any], text: str = "", *, quote: Callable[[str], str] = lambda s: s) -> str:
    """``⏸ Paused by the owner (web): no new round starts until /resume …``: the meeting's words for what it did
    (``text``), headed by its mark and who gave the control; ``🚫`` for a refused one (its text says why)."""
    kind = _field(data, "control") or _field(data, "kind")
    by = plain_line(_field(data, "by"), _NAME_CHARS)
    if by.lstrip("-").isdigit():  # a chat user's id: the person sees their own command above
        by = ""
    words = plain_line(text or _field(data, "text") or f"{_VERBS.get(kind, 'Control')} applied", SAID_CHARS)
    mark = "🚫" if data.get("refused") else _MARKS.get(kind, "⚙️")
    verb, sep, rest = words.partition(":")
    if by and sep:
        words = f"{verb} by {by}:{rest}"
    elif by:
        words = f"{words} ({by})"
    return f"{mark} {quote(words)}"


@dataclass(frozen=True)
class StoredTable:
    """A contribution or an applied control of a meeting's record (its ``contribution`` / ``control`` event)."""

    kind: str  # "contribution" or "control"
    round: int  # heard in (a contribution), followed (a control; 0: before round 1)
    data: dict[str, Any]
    text: str = ""


def table_events(details: Mapping[str, Any]) -> list[StoredTable]:
    """The contributions and applied controls of :meth:`~board.room.store.MeetingStore.details`, in order."""
    found = []
    for row in details.get("events") or []:
        kind = str(row.get("kind") or "")
        if kind not in ("contribution", "control"):
            continue
        data = dict(row.get("data") or {})
        text = str(data.get("text") or "") if kind == "control" else ""
        found.append(StoredTable(kind, int(row.get("round") or 0), data, text))
    return found
