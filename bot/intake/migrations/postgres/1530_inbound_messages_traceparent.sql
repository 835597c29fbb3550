-- PostgreSQL twin of ../1530_inbound_messages_traceparent.sql.
ALTER TABLE inbound_messages ADD COLUMN traceparent TEXT;
