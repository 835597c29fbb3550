"""Tests of board/workspace/: souls, prompt assembly, files read safely, quoting."""
