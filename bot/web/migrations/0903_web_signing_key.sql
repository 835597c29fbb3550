-- r29: the web pages' session-signing key when the state is shared by replicas (PostgreSQL): one row, made by
-- the first replica that needs it, so a cookie signed by one replica is valid on every other
-- (bot.web.auth.shared_signing_key). On SQLite one process owns the data dir and the key stays in
-- <data_dir>/web-secret.key; this table stays empty there. $SABHA_WEB_SECRET, when set, wins on both.
CREATE TABLE web_signing_key (
    id       INTEGER PRIMARY KEY CHECK (id = 1),  -- one key per state
    key      TEXT NOT NULL,                       -- 64 hex characters
    made_at  TEXT NOT NULL                        -- UTC ISO 8601
);
