"""Tests of board/tools/: outside tools."""
