"""Tests of bot/channels/whatsapp/."""
