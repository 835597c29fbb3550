-- Where a fact was learned (its scope): 'direct' (a direct chat: private to the person) or
-- 'group:<channel>:<chat id>' (a group or forum, whose members read the answers); a turn sees only the facts
-- of its own scope, so a group never sees what was said elsewhere. Facts kept before this have no scope
-- recorded: they count as direct-chat (private) facts. The same key may be kept once per scope, so the table
-- is rebuilt with the wider unique key (SQLite cannot drop a table's UNIQUE constraint). See board/memory/facts.py.
CREATE TABLE memory_facts_scoped (
    id             INTEGER PRIMARY KEY,
    user           TEXT NOT NULL,
    role           TEXT NOT NULL,
    key            TEXT NOT NULL,
    value          TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    source         TEXT NOT NULL DEFAULT 'tool',
    source_entry   TEXT,
    source_message TEXT,
    source_session TEXT,
    scope          TEXT NOT NULL DEFAULT 'direct',  -- direct | group:<channel>:<chat id>
    UNIQUE (user, role, key, scope)
);
INSERT INTO memory_facts_scoped(id, user, role, key, value, created_at, updated_at, source, source_entry,
                                source_message, source_session, scope)
    SELECT id, user, role, key, value, created_at, updated_at, source, source_entry, source_message, source_session,
           'direct'
    FROM memory_facts;
DROP TABLE memory_facts;
ALTER TABLE memory_facts_scoped RENAME TO memory_facts;
CREATE INDEX memory_facts_user ON memory_facts(user, updated_at);
