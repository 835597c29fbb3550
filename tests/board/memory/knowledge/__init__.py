"""Tests of board/memory/knowledge/: the knowledge base."""
