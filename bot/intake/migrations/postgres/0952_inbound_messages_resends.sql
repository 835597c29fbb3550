-- PostgreSQL twin of ../0952_inbound_messages_resends.sql.
ALTER TABLE inbound_messages ADD COLUMN resends INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inbound_messages ADD COLUMN unconfirmed_at TEXT;
