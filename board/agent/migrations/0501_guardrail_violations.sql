-- Answers a guardrail changed (or, with enforce off, would have changed); see board/agent/guardrails.py.
CREATE TABLE guardrail_violations (
    id          INTEGER PRIMARY KEY,
    ts          TEXT NOT NULL,
    role        TEXT NOT NULL,
    session_key TEXT,
    meeting_id  TEXT,
    sender      TEXT,
    purpose     TEXT,
    model       TEXT,
    tier        TEXT NOT NULL,   -- persona | agent
    rule        TEXT NOT NULL,   -- empty | prompt_leak | model_name | unsourced_figures
    action      TEXT NOT NULL,   -- replace | rewrite | scrub | annotate | log
    detail      TEXT,            -- JSON
    excerpt     TEXT             -- the start of the answer as the model gave it
);
CREATE INDEX guardrail_violations_ts ON guardrail_violations(ts);
