-- PostgreSQL twin of ../0903_web_signing_key.sql (same table and columns).
-- r29: the web pages' session-signing key shared by the replicas: one row, made by the first replica that
-- needs it (bot.web.auth.shared_signing_key); $SABHA_WEB_SECRET, when set, wins.
CREATE TABLE web_signing_key (
    id       INTEGER PRIMARY KEY CHECK (id = 1),  -- one key per state
    key      TEXT NOT NULL,                       -- 64 hex characters
    made_at  TEXT NOT NULL                        -- UTC ISO 8601
);
