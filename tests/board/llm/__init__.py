"""Tests of board/llm/: the providers, their request bodies, streaming, thinking."""
