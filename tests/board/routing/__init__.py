"""Tests of board/routing/: who answers, in which session; addressing by name."""
