"""Tests of board/commands/: the chat commands as owners and others see them."""
