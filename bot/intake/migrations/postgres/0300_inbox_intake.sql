-- PostgreSQL twin of ../0300_inbox_intake.sql (same tables, columns and indexes).
-- the shared intake (bot.intake): what kind of message a row is, its lane, how delivery ended
ALTER TABLE inbound_messages ADD COLUMN kind TEXT NOT NULL DEFAULT 'text';  -- text | unsupported
ALTER TABLE inbound_messages ADD COLUMN lane TEXT;                          -- the conversation it belongs to
ALTER TABLE inbound_messages ADD COLUMN detail TEXT;                        -- why it ended as it did
