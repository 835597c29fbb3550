"""Tests of bot/channels/telegram/."""
