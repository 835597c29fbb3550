-- Transcript lines as rows (issue 29). With state.url on PostgreSQL every session's transcript lives here,
-- so any replica reads any conversation; on SQLite the transcripts stay JSONL files under data_dir and this
-- table stays empty (`sabha state copy` fills the PostgreSQL one from the files).
-- seq 0 is the header line (type session), events follow from 1 in order. `line` is the JSONL line exactly as
-- the file holds it (no newline), so `sabha sessions export` writes the same bytes as SQLite mode's file.
CREATE TABLE transcript_lines (
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    line       TEXT NOT NULL,
    written_at TEXT NOT NULL,    -- ISO-8601 UTC of the write ("last active" in sabha sessions list)
    PRIMARY KEY (session_id, seq)
);
