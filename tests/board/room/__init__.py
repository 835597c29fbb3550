"""Tests of board/room/: meetings, consultation, the roundtable, voices."""
