"""A meeting's own forum topic, and the catch-up after a restart: the values :mod:`.meeting` posts.

In the board's forum every meeting gets a topic of its own, named ``🏛 <the meeting's topic>`` (capped to
Telegram's 128 characters: :func:`thread_name`; ``... (again)`` when a stop cut the creation of the first
short and it was opened once more), where its status, its statements in speaking order, the
decision with its buttons and the minutes appear. The place it was called from and each speaking advisor's
own topic get one line pointing to it (:func:`pointer_text`, with a ``t.me/c/...`` link: :func:`topic_link`).

A meeting that goes on after a restart announces only what it does from then on
(:attr:`board.room.meeting.MeetingEventKind.RESUMED`); :func:`stored_statements` reads what it said before
from its record (:meth:`board.room.store.MeetingStore.details`) so the view posts, in order, each statement it
had not posted yet (the channel's posted record: :mod:`bot.channels.meeting_posts`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.channels.meeting_lines import StoredTable, table_events

__all__ = ["StoredStatement", "item_key", "pointer_text", "stored_sequence", "stored_statements",
           "thread_name", "topic_link"]

#: Telegram's longest forum topic name (characters)
TOPIC_NAME_MAX = 128
THREAD_MARK = "🏛"


#: What ends the name of a meeting's topic opened again after a stop cut the first one's creation short
AGAIN = " (again)"


def thread_name(topic: str, *, again: bool = False) -> str:
    """``🏛 Should we open a Pune office?``, cut (with …) to Telegram's 128 characters; ``again``: the name of the
    topic opened once more after a stop cut the creation of the first short (``... (again)``, the mark kept)."""
    name = f"{THREAD_MARK} {' '.join(topic.split())}".strip()
    room = TOPIC_NAME_MAX - (len(AGAIN) if again else 0)
    name = name if len(name) <= room else name[:room - 1].rstrip() + "…"
    return name + AGAIN if again else name


def topic_link(chat_id: int, thread_id: int) -> str | None:
    """The ``https://t.me/c/<chat>/<topic>`` link of a supergroup's topic (members open it), None for a chat
    whose id has no such link (a private chat, a basic group)."""
    digits = str(chat_id)
    if not digits.startswith("-100"):
        return None
    return f"https://t.me/c/{digits[4:]}/{thread_id}"


def pointer_text(topic: str, link: str | None) -> str:
    """The one line an advisor's own topic (and the place the meeting was called from) gets."""
    return f"{THREAD_MARK} In the meeting on \u201c{topic}\u201d: {link or 'see its topic'}"


def item_key(kind: str, role: str | None = None, round_no: int | None = None) -> str:
    """The key a posted item is recorded under (:mod:`bot.channels.meeting_posts`): ``statement:2:finance``,
    ``pointer:finance``, ``decision`` ..."""
    if kind == "statement":
        return f"statement:{round_no or 0}:{role}"
    if kind == "pointer":
        return f"pointer:{role}"
    return kind


@dataclass(frozen=True)
class StoredStatement:
    """One statement of a meeting's record, as the view posts it."""

    round: int
    role: str
    label: str
    text: str

    @property
    def item(self) -> str:
        return item_key("statement", self.role, self.round)


def stored_statements(details: dict[str, Any], label_for: Callable[[str], str]) -> list[StoredStatement]:
    """The statements of :meth:`~board.room.store.MeetingStore.details`, in the order they were stored."""
    found = []
    for row in details.get("statements") or []:
        role = str(row["role"])
        try:
            label = label_for(role)
        except Exception:  # noqa: BLE001 - a missing soul must not hide the statement
            label = role
        found.append(StoredStatement(int(row["round"]), role, label, str(row["text"])))
    return found


def stored_sequence(statements: list[StoredStatement], details: dict[str, Any],
                    ) -> list[StoredStatement | StoredTable]:
    """``statements`` with the record's contributions and controls placed where the meeting took them in."""
    keyed: list[tuple[float, int, StoredStatement | StoredTable]] = [
        (float(s.round), i, s) for i, s in enumerate(statements)]
    for i, said in enumerate(table_events(details)):
        at = said.round - 0.5 if said.kind == "contribution" else said.round + 0.5
        keyed.append((at, len(statements) + i, said))
    return [entry for _, _, entry in sorted(keyed, key=lambda k: (k[0], k[1]))]
