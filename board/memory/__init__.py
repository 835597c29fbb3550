"""What the board remembers: JSONL transcripts, the session index and the cost ledger."""
