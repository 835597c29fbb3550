"""The board room: consultations between roles, board meetings and their decisions, the
roundtable, the meeting store, and channel-neutral rendering of a decision."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["consult", "convene", "decision", "meeting", "migrations", "render", "roundtable", "store"]
