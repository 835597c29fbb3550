-- PostgreSQL twin of ../0901_web_sessions.sql (same tables, columns and indexes).
-- r28: a signed-in browser's session, so Sign out (and `sabha web logout --all`) ends it for good: the
-- signed cookie alone would stay valid until it expires. Only the session id's SHA-256 is kept.
CREATE TABLE web_sessions (
    sid_hash    TEXT PRIMARY KEY,   -- sha256 hex of the session id in the signed cookie
    created_at  TEXT NOT NULL,      -- UTC ISO 8601
    expires_at  TEXT NOT NULL,      -- UTC ISO 8601: the cookie's own expiry
    revoked_at  TEXT,               -- set by Sign out or `sabha web logout --all`: the cookie is refused
    created_by  TEXT                -- the client address that signed in
);
CREATE INDEX web_sessions_expires ON web_sessions(expires_at);
