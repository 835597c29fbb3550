CREATE TABLE meetings (
    id           TEXT PRIMARY KEY,
    topic        TEXT NOT NULL,
    roster       TEXT NOT NULL,
    chair        TEXT NOT NULL,
    status       TEXT NOT NULL,             -- running | ended
    stop_reason  TEXT,                      -- completed | converged | budget | deadline | cancelled | error
    error        TEXT,
    agenda       TEXT,
    channel      TEXT,
    chat_id      TEXT,
    thread_id    INTEGER,
    started_at   TEXT NOT NULL,
    ended_at     TEXT,
    cost_usd     REAL NOT NULL DEFAULT 0,
    decision     TEXT,                      -- JSON of board.decision.Decision
    minutes      TEXT                       -- Markdown
);
CREATE TABLE meeting_participants (
    meeting_id TEXT NOT NULL REFERENCES meetings(id),
    role       TEXT NOT NULL,
    status     TEXT NOT NULL,               -- present | absent
    reason     TEXT,
    PRIMARY KEY (meeting_id, role)
);
CREATE TABLE meeting_statements (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    meeting_id TEXT NOT NULL REFERENCES meetings(id),
    round      INTEGER NOT NULL,
    role       TEXT NOT NULL,
    text       TEXT NOT NULL,
    model      TEXT,
    cost_usd   REAL NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE TABLE meeting_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    meeting_id TEXT NOT NULL REFERENCES meetings(id),
    kind       TEXT NOT NULL,               -- disagreement | consensus | decision
    role       TEXT NOT NULL,
    round      INTEGER,
    data       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX meeting_statements_by_meeting ON meeting_statements(meeting_id, round);
CREATE INDEX meeting_events_by_meeting ON meeting_events(meeting_id, kind);
