"""Tests of bot/: the daemon (bot/daemon.py) here, each package in its folder."""
