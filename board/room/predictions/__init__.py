"""Predictions and calibration: the checkable claims members stake a probability on, and how
well each advisor's probabilities match what happened.

- :mod:`~board.room.predictions.store`: the rows (migration 0820), recorded as members speak,
  resolved once by the owner (yes / no / can't tell)
- :mod:`~board.room.predictions.scoring`: the Brier score, the reliability table and each
  advisor's :class:`~board.room.predictions.scoring.TrackRecord` (pure functions)
- :mod:`~board.room.predictions.recording`: what the meeting calls when a statement carries one
- :mod:`~board.room.predictions.resolving`: the resolution request at the resolve-by date (its
  text and buttons) and what every way of resolving shares
"""

from board.room.predictions.migrations import MIGRATIONS

__all__ = ["MIGRATIONS"]
