-- PostgreSQL twin of ../0900_web_login_links.sql (same tables, columns and indexes).
-- Issue 28: one-time login links to the owner's web pages (`sabha web link` writes a row, the daemon
-- redeems it). Only the token's SHA-256 is kept: the db alone never lets anyone in.
CREATE TABLE web_login_links (
    token_hash  TEXT PRIMARY KEY,   -- sha256 hex of the token in the link
    created_at  TEXT NOT NULL,      -- UTC ISO 8601
    expires_at  TEXT NOT NULL,      -- UTC ISO 8601; past it the link is refused
    used_at     TEXT,               -- set once, when the link is redeemed: a second use is refused
    used_by     TEXT                -- the client address that redeemed it
);
CREATE INDEX web_login_links_expires ON web_login_links(expires_at);
