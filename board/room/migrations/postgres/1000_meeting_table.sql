-- PostgreSQL twin of ../1000_meeting_table.sql (same tables, columns and indexes).
CREATE TABLE meeting_contributions (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    meeting_id TEXT NOT NULL REFERENCES meetings(id),
    sender     TEXT NOT NULL,
    name       TEXT NOT NULL,
    text       TEXT NOT NULL,
    via        TEXT NOT NULL,
    round      INTEGER NOT NULL,
    addressed  TEXT,
    message_id TEXT,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX meeting_contributions_once ON meeting_contributions(meeting_id, via, message_id);
CREATE TABLE meeting_controls (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    meeting_id TEXT NOT NULL REFERENCES meetings(id),
    kind       TEXT NOT NULL,
    by_whom    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    applied_at TEXT
);
CREATE INDEX meeting_controls_by_meeting ON meeting_controls(meeting_id, id);
CREATE TABLE meeting_places (
    meeting_id TEXT NOT NULL REFERENCES meetings(id),
    channel    TEXT NOT NULL,
    chat_id    TEXT NOT NULL,
    thread_id  TEXT NOT NULL DEFAULT '',
    kind       TEXT NOT NULL,
    PRIMARY KEY (channel, chat_id, thread_id, meeting_id)
);
CREATE INDEX meeting_places_by_meeting ON meeting_places(meeting_id);
