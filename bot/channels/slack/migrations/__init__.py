"""Slack's tables (1100-1149): drafts and threads' roles (1100), the messages that carry a decision's buttons (1125)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
