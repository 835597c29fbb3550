-- PostgreSQL twin of ../0902_web_form_nonces.sql (same tables, columns and indexes).
-- r28: the New meeting form's nonce, kept with the meeting it started, so the same form sent again
-- (a double submit, a resubmit after the daemon restarted) opens that meeting instead of a second one.
CREATE TABLE web_form_nonces (
    nonce       TEXT PRIMARY KEY,   -- the form's random nonce
    meeting_id  TEXT NOT NULL,      -- the meeting it started
    created_at  TEXT NOT NULL       -- UTC ISO 8601; rows older than 30 days are dropped
);
CREATE INDEX web_form_nonces_created ON web_form_nonces(created_at);
