-- PostgreSQL twin of ../0301_inbound_messages_by_message_id.sql
CREATE INDEX inbound_messages_message ON inbound_messages(channel, message_id);
