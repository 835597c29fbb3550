"""Tests of the config readers (bot/config/)."""
