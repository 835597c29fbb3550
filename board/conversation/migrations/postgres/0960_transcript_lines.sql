-- PostgreSQL twin of ../0960_transcript_lines.sql (same tables, columns and indexes).
-- Each session's transcript, one row per JSONL line; seq 0 is the header (type session), events from 1.
-- `line` is JSON: PostgreSQL checks it is JSON but keeps its text as written (key order, spacing), so
-- `sabha sessions export` gives byte for byte the file SQLite mode would hold. `entry` is the same line as JSONB
-- (computed by the server, never written twice by Sabha), for SQL that queries fields or indexes them.
CREATE TABLE transcript_lines (
    session_id TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    line       JSON NOT NULL,
    entry      JSONB GENERATED ALWAYS AS (line::jsonb) STORED,
    written_at TEXT NOT NULL,    -- ISO-8601 UTC of the write ("last active" in sabha sessions list)
    PRIMARY KEY (session_id, seq)
);
