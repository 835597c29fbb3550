CREATE TABLE llm_calls (
    id                 INTEGER PRIMARY KEY,
    ts                 TEXT NOT NULL,
    provider           TEXT NOT NULL,
    model              TEXT NOT NULL,
    role               TEXT,
    session_key        TEXT,
    meeting_id         TEXT,
    purpose            TEXT,
    attempt            INTEGER NOT NULL DEFAULT 1,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL,
    latency_ms         REAL,
    ttft_ms            REAL,
    outcome            TEXT NOT NULL,
    error              TEXT,
    blocks             TEXT,
    tags               TEXT
);
CREATE INDEX llm_calls_ts ON llm_calls(ts);
CREATE INDEX llm_calls_session ON llm_calls(session_key, ts);
