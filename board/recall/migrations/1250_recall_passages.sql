-- Issue 43: one recall over what a person may see. Each passage is one thing said or read (a line of a
-- conversation, a meeting statement, a document's text) with who may see it (`audience`: owner,
-- id:<channel>:<sender>, group:<channel>:<chat>, board) and how an answer cites it (`cite`).
-- Filled in the background (board/recall/indexer.py), never on an answer's path; decisions and minutes are
-- searched where they already are (decision_search, migration 0821).
CREATE TABLE recall_passages (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    source    TEXT NOT NULL,              -- conversation | meeting | document
    ref       TEXT NOT NULL UNIQUE,       -- where it came from, unique: <session id>#<seq>, stmt:<id>, doc:<id>
    audience  TEXT NOT NULL,
    speaker   TEXT NOT NULL,              -- the role, or user
    cite      TEXT NOT NULL,              -- [finance, 2026-03-04], [meeting m-..., round 2], [deck.pdf]
    said_at   TEXT NOT NULL,
    text      TEXT NOT NULL
);
CREATE INDEX recall_passages_audience ON recall_passages(audience);
CREATE VIRTUAL TABLE recall_search USING fts5(
    text, content = 'recall_passages', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER recall_passages_index AFTER INSERT ON recall_passages
BEGIN
    INSERT INTO recall_search(rowid, text) VALUES (NEW.id, NEW.text);
END;
CREATE TRIGGER recall_passages_forget AFTER DELETE ON recall_passages
BEGIN
    INSERT INTO recall_search(recall_search, rowid, text) VALUES ('delete', OLD.id, OLD.text);
END;
-- How far the indexer got in each source (statements: last id; a session: entries read and a hash of
-- the last entry it read), so a restart resumes where it stopped.
CREATE TABLE recall_progress (
    source    TEXT PRIMARY KEY,
    position  INTEGER NOT NULL,
    mark      TEXT NOT NULL DEFAULT ''
);
