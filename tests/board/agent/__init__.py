"""Tests of board/agent/: the turn (exchange, runner, tools, compaction, guardrails, disclosure)."""
