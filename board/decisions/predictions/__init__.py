"""Predictions and calibration: the checkable claims members stake a probability on, and how
well each advisor's probabilities match what happened.

- :mod:`~board.decisions.predictions.store`: the rows (migration 0820), recorded as members speak,
  resolved once by the owner (yes / no / can't tell)
- :mod:`~board.decisions.predictions.scoring`: the Brier score, the reliability table and each
  advisor's :class:`~board.decisions.predictions.scoring.TrackRecord` (pure functions)
- :mod:`~board.decisions.predictions.tally`: the same track records read from tallies the db keeps in step
  (migration 1325), one read whatever the number of predictions
- :mod:`~board.decisions.predictions.recording`: what the meeting calls when a statement carries one
- :mod:`~board.decisions.predictions.resolving`: the resolution request at the resolve-by date (its
  text and buttons) and what every way of resolving shares
"""

# Submodules, imported on use (this file imports none of them).
__all__ = ["migrations", "recording", "resolving", "scoring", "store", "tally"]
