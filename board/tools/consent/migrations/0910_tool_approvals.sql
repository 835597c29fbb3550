-- Issue 39: a tool that changes the world runs only with the owner's Allow, recorded before the call
-- (board.tools.consent). One row per call asked for (its key names the call across a restart):
-- asked -> answered (allowed_once | always_allowed | denied | timed_out) -> started -> finished.
CREATE TABLE tool_approvals (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,  -- the number /allow and /deny name
    key         TEXT NOT NULL UNIQUE,               -- ConsentAsk.key: the message, the tool, its arguments
    server      TEXT NOT NULL,                      -- the MCP server's name in sabha.yaml
    tool        TEXT NOT NULL,                      -- the server's name for the tool
    arguments   TEXT NOT NULL DEFAULT '{}',         -- JSON, as the model sent them
    role        TEXT NOT NULL,                      -- the advisor that wants it run
    session_key TEXT NOT NULL,
    meeting_id  TEXT,
    channel     TEXT,                               -- where it was asked: the channel,
    chat_id     TEXT,                               --   the chat,
    thread_id   INTEGER,                            --   the topic (NULL: none)
    asker       TEXT,                               -- who the advisor answers (the sender)
    answer      TEXT,                               -- allowed_once | always_allowed | denied | timed_out
    answered_by TEXT,
    asked_at    TEXT NOT NULL,                      -- UTC, 'YYYY-MM-DDTHH:MM:SS.ffffffZ'
    answered_at TEXT,
    started_at  TEXT,                               -- set BEFORE the call is made: never made twice
    finished_at TEXT,
    ok          INTEGER,                            -- the server answered without an error
    summary     TEXT,                               -- what the call gave back, shortened
    reported_at TEXT                                -- the owner was told a call may have run
);
CREATE INDEX tool_approvals_open ON tool_approvals(answer, asked_at);

-- The tools the owner always allows (Always allow this tool, /allow <n> always, sabha tools allow).
CREATE TABLE tool_always_allowed (
    server     TEXT NOT NULL,
    tool       TEXT NOT NULL,
    granted_by TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    PRIMARY KEY (server, tool)
);

-- Where the owner was last seen on each channel (their own chat with the board): a member's advisor asks there.
CREATE TABLE tool_consent_places (
    channel   TEXT PRIMARY KEY,
    chat_id   TEXT NOT NULL,
    thread_id INTEGER,
    seen_at   TEXT NOT NULL
);
