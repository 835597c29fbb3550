-- Issue 13: every meeting statement carries a structured stance; decisions leave action items to close.
ALTER TABLE meeting_statements ADD COLUMN stance TEXT;   -- JSON of board.room.decision.Stance, NULL if none stated
CREATE TABLE action_items (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,   -- the n of /done <n>
    meeting_id  TEXT NOT NULL REFERENCES meetings(id),
    position    INTEGER NOT NULL,                    -- 1-based, as in the decision
    task        TEXT NOT NULL,
    owner       TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'open',        -- open | done
    created_at  TEXT NOT NULL,
    done_at     TEXT,
    done_by     TEXT
);
CREATE INDEX action_items_open ON action_items(status, created_at);
