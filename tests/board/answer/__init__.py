"""Tests of board/answer/: the front door, a message admitted and answered."""
