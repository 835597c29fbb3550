"""Tests of bot/channels/web/: the web chat channel."""
