-- One row per web_search answered (from the provider or the cache); see board/agent/web_search.py.
CREATE TABLE web_searches (
    id          INTEGER PRIMARY KEY,
    ts          TEXT NOT NULL,
    provider    TEXT NOT NULL,   -- tavily | brave
    query       TEXT NOT NULL,
    cached      INTEGER NOT NULL DEFAULT 0,
    ok          INTEGER NOT NULL,
    results     INTEGER NOT NULL DEFAULT 0,
    status      INTEGER,         -- the provider's HTTP status (NULL: cached or no answer)
    error       TEXT,
    latency_ms  REAL,
    role        TEXT,
    session_key TEXT,
    meeting_id  TEXT,
    sender      TEXT
);
CREATE INDEX web_searches_ts ON web_searches(ts);
