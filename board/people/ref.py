"""What an envelope carries about its person once :meth:`board.people.People.identify` has looked it up.

:class:`PersonRef` is set only for an identity linked to a person (:mod:`board.people`): its ``key``
(``person:<n>``) is then who the message is from for memory, budgets and the ledger
(:func:`board.spending.budget.sender_id`), ``shared`` says whether the linked channels share sessions, and
``elsewhere`` holds what the person last said on their other linked channels, for the short note the
advisors see (:func:`elsewhere_lines`; quoted as data, never instructions).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from board.workspace.quoting import FieldLimit, quote_field

__all__ = ["PersonRef", "Recent", "elsewhere_lines", "person_key", "person_number"]


def person_key(number: int) -> str:
    """The key of person ``number`` in memory facts and the ledger."""
    return f"person:{number}"


def person_number(key: str) -> int | None:
    """``person:7`` -> 7; None for any other key (an identity's own)."""
    prefix, _, rest = key.partition(":")
    return int(rest) if prefix == "person" and rest.isdigit() else None


@dataclass(frozen=True)
class Recent:
    """The last thing the person said on another linked channel, and when."""

    channel: str
    at: datetime
    text: str


@dataclass(frozen=True)
class PersonRef:
    """A linked person, as one of their messages carries it."""

    number: int
    shared: bool = False
    elsewhere: tuple[Recent, ...] = ()

    @property
    def key(self) -> str:
        """``person:<n>``: the memory, budget and ledger key of everyone linked to this person."""
        return person_key(self.number)


def _ago(seconds: float) -> str:
    if seconds < 90:
        return "just now"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min ago"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h ago"
    return f"{round(seconds / 86400)} days ago"


def elsewhere_lines(person: PersonRef | None, now: datetime) -> tuple[str, ...]:
    """One line per other channel, e.g. ``on telegram, 2 h ago, they said: "…"`` (the text quoted)."""
    if person is None:
        return ()
    return tuple(f"on {r.channel}, {_ago(max((now - r.at).total_seconds(), 0.0))}, they said: "
                 f"{quote_field(r.text, FieldLimit.TEXT)}" for r in person.elsewhere)
