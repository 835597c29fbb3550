"""The web pages' tables: ``web_login_links`` (one-time login links of ``sabha web link``), 0900-0909."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
