"""Tests of bot/cli/: the ``sabha`` command as people run it."""
