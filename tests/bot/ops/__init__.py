"""Tests of bot/ops/: systemd, logs, readiness, reload."""
