"""The board room: consultations between roles, board meetings and their decisions, the
roundtable, and the meeting store."""
