-- What a role remembers about a user (the remember tool, /memory, /forget); see board/memory/facts.py.
CREATE TABLE memory_facts (
    id         INTEGER PRIMARY KEY,
    user       TEXT NOT NULL,    -- <channel>:<sender id>, as the ledger records senders
    role       TEXT NOT NULL,    -- the role that was told
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (user, role, key)
);
CREATE INDEX memory_facts_user ON memory_facts(user, updated_at);
