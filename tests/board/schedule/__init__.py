"""Tests of board/schedule/: scheduled work claimed before it is sent."""
