"""Tests of board/: the modules at its root (routing, budgets, language, masking) here, each package in its
folder."""
