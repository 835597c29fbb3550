-- Memory that tidies itself (issue 43): see board/memory/consolidation/.
-- A fact the person corrected (said again with a new value) is fixed: consolidation never changes it.
ALTER TABLE memory_facts ADD COLUMN corrected_at TEXT;
-- Each consolidation run that was applied, with every fact as it was before and after (the owner's diff and
-- undo: sabha memory changes / sabha memory undo). One row per run, written in the run's one transaction.
CREATE TABLE memory_changes (
    id             INTEGER PRIMARY KEY,
    "user"         TEXT NOT NULL,           -- whose facts (<channel>:<sender id> or person:<n>)
    work_key       TEXT NOT NULL UNIQUE,    -- the scheduled_work key of the run (a run redone after a kill: once)
    created_at     TEXT NOT NULL,           -- UTC ISO, microseconds (as memory_facts.updated_at)
    ops            TEXT NOT NULL,           -- JSON list: merged / rewritten / expired, with the rows before and after
    profile_before TEXT,
    profile_after  TEXT,
    model          TEXT,                    -- the model that proposed it
    undone_at      TEXT,                    -- set by sabha memory undo
    undo_note      TEXT                     -- what the undo could not restore, and why
);
CREATE INDEX memory_changes_user ON memory_changes("user", created_at);
-- The short profile consolidation keeps per person (quoted data, like the facts).
CREATE TABLE memory_profiles (
    "user"     TEXT PRIMARY KEY,
    text       TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    change_id  INTEGER                      -- the memory_changes row that wrote it
);
-- What a person (or the owner) asked to forget, and when: an undo never brings it back.
CREATE TABLE memory_forgets (
    id     INTEGER PRIMARY KEY,
    "user" TEXT NOT NULL,
    key    TEXT,                            -- NULL: everything about the user
    at     TEXT NOT NULL                    -- UTC ISO, microseconds
);
CREATE INDEX memory_forgets_user ON memory_forgets("user", at);
