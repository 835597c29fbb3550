-- PostgreSQL twin of ../1060_inbound_messages_parts_posted.sql.
ALTER TABLE inbound_messages ADD COLUMN parts_posted INTEGER NOT NULL DEFAULT 0;
