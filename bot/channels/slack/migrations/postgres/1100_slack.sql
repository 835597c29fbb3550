-- PostgreSQL twin of ../1100_slack.sql (same tables, columns and indexes).
-- The Slack channel (issue 41).
-- slack_drafts: a streamed answer's message, recorded before its first post leaves (ts NULL), then with its
-- ts, so a restart edits that message into the answer instead of posting a second one; deleted once the
-- answer is delivered.
CREATE TABLE slack_drafts (
    chat_id    TEXT NOT NULL,
    reply_to   TEXT NOT NULL,
    ts         TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (chat_id, reply_to)
);
-- slack_thread_roles: the advisor a thread in the board channel addressed first; its follow-ups go to them.
CREATE TABLE slack_thread_roles (
    chat_id    TEXT PRIMARY KEY,
    role       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
