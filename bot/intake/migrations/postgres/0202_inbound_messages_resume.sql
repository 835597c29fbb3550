-- PostgreSQL twin of ../0202_inbound_messages_resume.sql (same tables, columns and indexes).
-- the durable inbox (bot.intake.inbox): what a message needs to be answered after a restart
ALTER TABLE inbound_messages ADD COLUMN envelope TEXT;                       -- JSON of the Envelope
ALTER TABLE inbound_messages ADD COLUMN reply TEXT;                          -- JSON of the Reply, once answered
ALTER TABLE inbound_messages ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;  -- answering started this often
CREATE INDEX inbound_messages_status ON inbound_messages(channel, status);
