"""``people:`` in the config, as plain values (see :mod:`board.people`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PeopleSettings"]


@dataclass(frozen=True)
class PeopleSettings:
    """How accounts are linked into one person and what linked channels share."""

    link_code_ttl_s: int = 600  # a /link code expires this long after it was given
    link_max_failures: int = 5  # wrong, reused or expired codes per account per hour; then refused for a while
    link_max_per_day: int = 3  # links one account may make in a day (each /link CODE that links counts)
    shared_sessions: bool = False  # true: linked channels share one conversation per role
    recent_note_hours: float = 24.0  # how far back the note of the other channels looks (0: no note)

    #: the window of :attr:`link_max_failures`
    failure_window_s: int = 3600
