"""Tests of board/conversation/: sessions and their transcripts, below the agent."""
