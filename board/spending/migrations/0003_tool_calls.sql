CREATE TABLE tool_calls (
    id           INTEGER PRIMARY KEY,
    ts           TEXT NOT NULL,
    role         TEXT,
    session_key  TEXT,
    meeting_id   TEXT,
    name         TEXT NOT NULL,
    call_id      TEXT,
    args         TEXT,
    ok           INTEGER NOT NULL,
    error        TEXT,
    retryable    INTEGER NOT NULL DEFAULT 0,
    result_bytes INTEGER NOT NULL DEFAULT 0,
    latency_ms   REAL
);
CREATE INDEX tool_calls_ts ON tool_calls(ts);
