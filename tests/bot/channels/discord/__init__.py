"""Tests of bot/channels/discord/."""
