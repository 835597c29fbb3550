-- Issue 27: a member's stance may carry a checkable prediction; the owner resolves it later.
CREATE TABLE predictions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,   -- the n of /resolve <n>
    meeting_id   TEXT NOT NULL REFERENCES meetings(id),
    round        INTEGER NOT NULL,                    -- the statement that (last) stated it
    role         TEXT NOT NULL,                       -- the advisor
    model        TEXT,                                -- the model that spoke for the advisor
    claim        TEXT NOT NULL,
    claim_key    TEXT NOT NULL,                       -- the claim folded (case, spaces): one row per claim
    probability  REAL NOT NULL CHECK (probability >= 0 AND probability <= 1),
    resolve_by   TEXT NOT NULL,                       -- ISO date
    created_at   TEXT NOT NULL,
    outcome      TEXT CHECK (outcome IN ('yes', 'no', 'unknown')),   -- NULL while open
    resolved_at  TEXT,
    resolved_by  TEXT,
    UNIQUE (meeting_id, role, claim_key)
);
CREATE INDEX predictions_open ON predictions(outcome, resolve_by);
CREATE INDEX predictions_role ON predictions(role, outcome);
