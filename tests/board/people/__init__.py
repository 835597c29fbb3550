"""Tests of board/people/: one person across channels, linked identities."""
