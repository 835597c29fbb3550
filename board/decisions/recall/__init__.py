"""The board remembers: earlier decisions recalled into a new meeting, and reviews of decisions.

- :mod:`~board.decisions.recall.search`: the full-text search over decisions and minutes (migration
  0821, SQLite FTS5 kept in step by triggers) and each hit's outcome, quoted for a prompt
- :mod:`~board.decisions.recall.reviews`: a decision's review meeting: scheduled (``review_after``,
  ``/review``), held, its verdict (kept / reversed / superseded) recorded on the decision
"""

# Submodules, imported on use (this file imports none of them).
__all__ = ["migrations", "reviews", "search"]
