-- PostgreSQL twin of ../0301_inbound_messages_by_message_id.sql (same tables, columns and indexes).
-- a redelivery recognised by its message id alone, for channels whose ids are unique across
-- chats (WhatsApp: a person's messages may be filed under another of their ids since)
CREATE INDEX inbound_messages_message ON inbound_messages(channel, message_id);
