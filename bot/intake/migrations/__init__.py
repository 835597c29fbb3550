"""The intake's table: ``inbound_messages``, the durable inbox of every channel (0201-0202, 0300-0399, 0950-0952,
1060-1069, 1530-1539: ``traceparent``, 1540-1549: ``intake_room``)."""

from board.db import load_migrations

__all__ = ["MIGRATIONS"]

MIGRATIONS = load_migrations(__name__)
