"""The board room: consultations between roles, board meetings and their decisions, the
roundtable, the meeting store, what a meeting (and one more round of it) is expected to cost and a meeting
waiting for the owner's Start, the table (what people write into a running meeting: contributions,
controls, its places), a revisit's follow-up meeting, channel-neutral rendering of a decision, the
demo history's mark (which meetings ``sabha demo`` made up), standing items' meetings and roundtables and what
they cost, and the chair's roundtable tool. What becomes of a decision afterwards is
:mod:`board.decisions`."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["consult", "convene", "decision", "demo_history", "estimate", "evidence", "extension", "followup", "meeting",
           "migrations", "pending", "record", "render", "roundtable", "roundtable_tool", "settings", "standing",
           "store", "subscribers", "table"]
