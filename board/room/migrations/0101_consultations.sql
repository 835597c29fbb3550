CREATE TABLE consultations (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    ts          TEXT NOT NULL,
    from_role   TEXT NOT NULL,
    to_role     TEXT NOT NULL,
    depth       INTEGER NOT NULL,
    chain       TEXT NOT NULL,              -- JSON list of roles so far, ending with the caller
    question    TEXT NOT NULL,
    outcome     TEXT NOT NULL,              -- ok | degraded | refused | timeout
    latency_ms  REAL NOT NULL,
    cost_usd    REAL NOT NULL DEFAULT 0,
    session_key TEXT,
    meeting_id  TEXT,
    error       TEXT
);
CREATE INDEX consultations_by_ts ON consultations(ts);
