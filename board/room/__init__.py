"""The board room: consultations between roles, board meetings and their decisions, the
roundtable, the meeting store, a revisit's follow-up meeting, channel-neutral rendering of a
decision, and the demo history's mark (which meetings ``sabha demo`` made up). What becomes of
a decision afterwards is :mod:`board.decisions`."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["consult", "convene", "decision", "demo_history", "evidence", "followup", "meeting", "migrations",
           "record", "render", "roundtable", "settings", "store"]
