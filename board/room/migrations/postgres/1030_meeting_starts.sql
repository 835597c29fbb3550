-- PostgreSQL twin of ../1030_meeting_starts.sql (same table, columns and index).
CREATE TABLE meeting_starts (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    topic        TEXT NOT NULL,
    request      TEXT NOT NULL,
    channel      TEXT NOT NULL,
    chat_id      TEXT NOT NULL,
    thread_id    BIGINT,
    estimate_usd DOUBLE PRECISION NOT NULL,
    estimate     TEXT NOT NULL,
    status       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    decided_by   TEXT,
    decided_at   TEXT,
    meeting_id   TEXT
);
CREATE INDEX meeting_starts_by_place ON meeting_starts(channel, chat_id, status);
