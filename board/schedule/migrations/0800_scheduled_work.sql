-- Issue 27: every scheduled thing (reminder, resolution request, review, follow-up) is a row
-- claimed before it is sent: exactly once across restarts and kill -9 (board.schedule).
CREATE TABLE scheduled_work (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    key         TEXT NOT NULL UNIQUE,              -- idempotency key: scheduling it twice makes one row
    kind        TEXT NOT NULL,                     -- board.schedule.WorkKind
    due_at      TEXT NOT NULL,                     -- UTC, 'YYYY-MM-DDTHH:MM:SS.ffffffZ' (sorts as text)
    channel     TEXT NOT NULL,                     -- where it is sent: the channel,
    chat_id     TEXT NOT NULL,                     --   the chat,
    thread_id   INTEGER,                           --   the topic (NULL: none)
    payload     TEXT NOT NULL DEFAULT '{}',        -- JSON object of the kind's typed fields
    status      TEXT NOT NULL DEFAULT 'pending',   -- pending | claimed | sending | done | cancelled | failed
    outcome     TEXT,                              -- sent | may_have_arrived | acted | not_sent | error ...
    detail      TEXT,                              -- what happened, in words (an error, why it waits)
    held        TEXT,                              -- NOT NULL: pending but waiting for this (a channel, a window)
    attempts    INTEGER NOT NULL DEFAULT 0,        -- tries that failed before it was sent
    claim       TEXT,                              -- the claim token of the runner that holds it
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    claimed_at  TEXT,
    sending_at  TEXT,
    finished_at TEXT
);
CREATE INDEX scheduled_work_due ON scheduled_work(status, due_at);
CREATE INDEX scheduled_work_place ON scheduled_work(channel, chat_id, status);
