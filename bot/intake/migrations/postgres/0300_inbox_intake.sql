-- PostgreSQL twin of ../0300_inbox_intake.sql
ALTER TABLE inbound_messages ADD COLUMN kind TEXT NOT NULL DEFAULT 'text';  -- text | unsupported
ALTER TABLE inbound_messages ADD COLUMN lane TEXT;                          -- the conversation it belongs to
ALTER TABLE inbound_messages ADD COLUMN detail TEXT;                        -- why it ended as it did
