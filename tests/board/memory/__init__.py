"""Tests of board/memory/: sessions, transcripts, the ledger, facts, what memory keeps."""
