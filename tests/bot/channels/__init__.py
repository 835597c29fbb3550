"""Tests of bot/channels/: the contract suite over every channel, and what all channels share."""
