"""The demo history's mark: which meetings ``sabha demo`` made up (their ids start ``demo-``).

``sabha demo`` (:mod:`bot.cli.demo`) writes past meetings whose predictions are resolved, so a new board's
``/stats`` shows a Brier score at once. Those scores are made up: what reads the board's own record for a
decision (the chair's track records, :func:`board.room.meeting.decide.track_block`) leaves them out, and
what shows them to a person (the Track record page) says they are the demo's. Real meeting ids are
``m-YYYYMMDD-...``, never this prefix.
"""

from __future__ import annotations

__all__ = ["DEMO_PREFIX", "is_demo"]

#: Every demo meeting's id starts with this; ``sabha demo --remove`` deletes these ids and nothing else.
DEMO_PREFIX = "demo-"


def is_demo(meeting_id: str) -> bool:
    """Whether ``meeting_id`` is one of the demo history's made-up meetings."""
    return meeting_id.startswith(DEMO_PREFIX)
