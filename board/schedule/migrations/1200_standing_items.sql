-- Issue 42: standing work the owner sets (/every monday 9am brief): each item, and each of its runs.
-- An item's runs are scheduled_work rows (kind 'standing', key 'standing:<id>:<due>'), claimed before they run.
CREATE TABLE standing_items (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,   -- the n of /standing pause <n>
    kind        TEXT NOT NULL,                       -- brief | meeting | roundtable (board.schedule.StandingKind)
    topic       TEXT NOT NULL DEFAULT '',            -- a meeting's or a roundtable's topic; a brief's focus
    rule        TEXT NOT NULL,                       -- JSON of board.schedule.recurrence.Recurrence
    said        TEXT NOT NULL,                       -- the rule in words ("every Monday at 09:00 (UTC)")
    phrase      TEXT NOT NULL,                       -- as the owner wrote it
    channel     TEXT NOT NULL,                       -- where it runs: the channel,
    chat_id     TEXT NOT NULL,                       --   the chat,
    thread_id   INTEGER,                             --   the topic or thread (NULL: none)
    created_by  TEXT NOT NULL,                       -- channel:sender of the owner who set it
    status      TEXT NOT NULL DEFAULT 'active',      -- active | paused | removed
    next_at     TEXT,                                -- UTC stamp of the next run scheduled (NULL: none)
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX standing_items_status ON standing_items(status, next_at);
CREATE TABLE standing_runs (
    work_key     TEXT PRIMARY KEY,                   -- scheduled_work.key of the run
    item_id      INTEGER NOT NULL REFERENCES standing_items(id),
    due_at       TEXT NOT NULL,
    outcome      TEXT NOT NULL,                      -- wrote | nothing_new | missed | ran
    text         TEXT NOT NULL,                      -- what was written: a rerun after a crash sends it, unpaid
    facts        TEXT NOT NULL DEFAULT '{}',         -- a brief's facts (JSON: key -> line)
    model_calls  INTEGER NOT NULL DEFAULT 0,         -- model calls the run made (0 when nothing changed)
    created_at   TEXT NOT NULL
);
CREATE INDEX standing_runs_item ON standing_runs(item_id, due_at);
