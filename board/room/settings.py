"""A meeting's limits as the board's settings: what config and the board need without importing
the meeting machinery (:mod:`board.room.meeting`, which loads on the first meeting)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_CHALLENGERS", "MEETINGS_OFF", "MeetingSettings"]

#: the one line a meeting request gets while meetings are off
MEETINGS_OFF = ("Board meetings are off here (board.meetings.enabled or board.enabled is false in the config); "
                "ask your question and it is answered directly.")

#: roster -> its challenger: the role whose job is the objection nobody wants to hear
DEFAULT_CHALLENGERS: tuple[tuple[str, str], ...] = (("board", "critic"), ("sabha", "investor"))


@dataclass(frozen=True)
class MeetingSettings:
    """Limits of one meeting (config ``board.meetings``)."""

    enabled: bool = True  # false: no meetings at all (``board.meetings.enabled``, or ``board.enabled: false``)
    max_turns_per_agent: int = 3
    max_duration_s: float = 600.0
    budget_usd: float = 1.0
    parallel: bool = True
    agent_timeout_s: float = 120.0
    abridge_chars: int = 900
    quorum: float = 0.5
    critic_role: str = "critic"  # the challenger of rosters that ``challengers`` does not name
    peer_review: bool = False
    challengers: tuple[tuple[str, str], ...] = DEFAULT_CHALLENGERS
    min_resolved_predictions: int = 5  # an advisor's Brier score is shown from this many resolved predictions
    recall_decisions: int = 3  # earlier related decisions in a new meeting's framing (0: none)
    review_after_days: float = 0  # a review meeting this long after each decision (0: off)
    max_tool_calls: int = 12  # outside (MCP) tool calls the members may make in one meeting, all together
    participants: tuple[str, ...] = ()  # beyond the owner, who may write into a running meeting
    max_extra_rounds: int = 2  # rounds /extend may add to one meeting
    confirm_over_usd: float = 0.0  # a meeting expected to cost more waits for the owner's Start (0: never waits)
    resume_within_s: float = 3600.0  # a meeting stopped with Sabha resumes at the next start if younger than this

    def challenger_for(self, roster: str) -> str:
        """The role that reviews the draft decision of a ``roster`` meeting ("" for none)."""
        return dict(self.challengers).get(roster, self.critic_role)
