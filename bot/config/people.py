"""Config section ``people``: linking a person's accounts on several channels into one person.

Validated like every section (unknown keys are errors) and turned into the board's plain
:class:`board.people.PeopleSettings` by :meth:`PeopleSection.settings`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from bot.config.base import StrictModel

if TYPE_CHECKING:
    from board.people import PeopleSettings

__all__ = ["PeopleSection"]


class PeopleSection(StrictModel):
    """``people``: /link codes, and what a person's linked channels share."""

    link_code_ttl_s: int = Field(600, ge=1, le=86400, description="a /link code expires this long after it was given")
    link_max_failures: int = Field(5, ge=1, le=100, description=(
        "wrong, reused or expired codes one account may send in an hour; then /link CODE is refused until the "
        "hour has passed (codes cannot be guessed)"))
    link_max_per_day: int = Field(3, ge=1, le=100, description=(
        "links one account may make in 24 hours (an unlink does not give one back: linking anew is not a "
        "way round the daily budget)"))
    shared_sessions: bool = Field(False, description=(
        "true: a linked person's direct chats share one conversation per advisor across channels; false: each "
        "channel keeps its own and the advisors see a short note of what was said lately on the others"))
    recent_note_hours: float = Field(24, ge=0, le=720, description=(
        "how far back that note looks (0: no note)"))

    def settings(self) -> PeopleSettings:
        """The board's plain settings."""
        from board.people import PeopleSettings

        return PeopleSettings(link_code_ttl_s=self.link_code_ttl_s, link_max_failures=self.link_max_failures,
                              link_max_per_day=self.link_max_per_day,
                              shared_sessions=self.shared_sessions, recent_note_hours=self.recent_note_hours)
