"""The web pages' tables, 0900-0909: ``web_login_links`` (one-time login links of ``sabha web link``),
``web_sessions`` (signed-in browsers; Sign out revokes), ``web_form_nonces`` (New meeting forms used),
``web_signing_key`` (the session-signing key the replicas of a PostgreSQL state share)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
