"""What the board remembers: JSONL transcripts, the session index and the cost ledger."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["ledger", "migrations", "sessions", "transcripts"]
