-- PostgreSQL twin of ../0400_whatsapp.sql (same tables, columns and indexes).
-- the role a WhatsApp user talks to until they switch (bot.channels.whatsapp.store)
CREATE TABLE whatsapp_users (
    user_key   TEXT PRIMARY KEY,   -- wa_id, else the business-scoped user id
    role       TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- every message Sabha sent (or tried to send) and its latest status from Meta
CREATE TABLE whatsapp_outbound (
    wamid       TEXT,               -- Meta's id of the sent message (NULL when the send was refused)
    user_key    TEXT NOT NULL,
    reply_to    TEXT,               -- the inbound wamid it answers
    status      TEXT NOT NULL,      -- accepted | sent | delivered | read | failed | undeliverable
    error_code  BIGINT,
    error_title TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE UNIQUE INDEX whatsapp_outbound_wamid ON whatsapp_outbound(wamid) WHERE wamid IS NOT NULL;
CREATE INDEX whatsapp_outbound_status ON whatsapp_outbound(status, updated_at);
