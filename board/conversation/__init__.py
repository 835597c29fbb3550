"""The conversation store, below the agent: which session a conversation key is in now (the session
index), each session's append-only JSONL transcript, the transcript lines mirrored into the state db
for replicas, and a conversation's scope (direct, or a group: who may see what was said there). Every
turn, meeting and command reads and writes conversations through it; it knows nothing of models, memory
or the board room."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["migrations", "scope", "sessions", "transcript_rows", "transcripts"]
