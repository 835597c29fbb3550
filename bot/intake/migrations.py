"""The intake's table: ``inbound_messages``, the durable inbox of every channel (0201-0202, 0300-0399)."""

from __future__ import annotations

from board.db import Migration

__all__ = ["MIGRATIONS"]

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0201_inbound_messages",
        """
        CREATE TABLE inbound_messages (
            channel     TEXT NOT NULL,
            chat_id     TEXT NOT NULL,
            message_id  TEXT NOT NULL,
            received_at TEXT NOT NULL,
            status      TEXT NOT NULL DEFAULT 'received',
            answered_at TEXT,
            PRIMARY KEY (channel, chat_id, message_id)
        );
        CREATE INDEX inbound_messages_received ON inbound_messages(channel, received_at);
        """,
    ),
    Migration(
        "0202_inbound_messages_resume",
        """
        -- the durable inbox (bot.intake.inbox): what a message needs to be answered after a restart
        ALTER TABLE inbound_messages ADD COLUMN envelope TEXT;                       -- JSON of the Envelope
        ALTER TABLE inbound_messages ADD COLUMN reply TEXT;                          -- JSON of the Reply, once answered
        ALTER TABLE inbound_messages ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;  -- answering started this often
        CREATE INDEX inbound_messages_status ON inbound_messages(channel, status);
        """,
    ),
    Migration(
        "0300_inbox_intake",
        """
        -- the shared intake (bot.intake): what kind of message a row is, its lane, how delivery ended
        ALTER TABLE inbound_messages ADD COLUMN kind TEXT NOT NULL DEFAULT 'text';  -- text | unsupported
        ALTER TABLE inbound_messages ADD COLUMN lane TEXT;                          -- the conversation it belongs to
        ALTER TABLE inbound_messages ADD COLUMN detail TEXT;                        -- why it ended as it did
        """,
    ),
)
