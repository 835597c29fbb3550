CREATE TABLE sessions (
    session_id  TEXT PRIMARY KEY,
    key         TEXT NOT NULL,
    role        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    archived_at TEXT
);
CREATE UNIQUE INDEX sessions_current ON sessions(key) WHERE archived_at IS NULL;
