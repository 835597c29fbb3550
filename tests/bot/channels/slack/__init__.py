"""Tests of bot/channels/slack/."""
