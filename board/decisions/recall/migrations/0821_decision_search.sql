-- Issue 27: a new meeting recalls earlier decisions on related topics. A full-text index (SQLite FTS5)
-- over each ended meeting's topic, recommendation, rationale and minutes, kept in step by triggers on
-- meetings: a meeting's row is (re)indexed when it ends with a decision, so no code path can forget it.
CREATE VIRTUAL TABLE decision_search USING fts5(
    meeting_id UNINDEXED, topic, recommendation, rationale, minutes,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
-- Each meeting's document number in the index (its rowid there), so re-indexing one is a lookup, not a scan.
CREATE TABLE decision_search_docs (
    doc         INTEGER PRIMARY KEY,
    meeting_id  TEXT NOT NULL UNIQUE
);
INSERT INTO decision_search_docs(meeting_id)
    SELECT id FROM meetings WHERE status = 'ended' AND decision IS NOT NULL AND json_valid(decision);
INSERT INTO decision_search(rowid, meeting_id, topic, recommendation, rationale, minutes)
    SELECT d.doc, m.id, m.topic, coalesce(json_extract(m.decision, '$.recommendation'), ''),
           coalesce(json_extract(m.decision, '$.rationale'), ''), coalesce(m.minutes, '')
    FROM meetings m JOIN decision_search_docs d ON d.meeting_id = m.id;
CREATE TRIGGER decision_search_index AFTER UPDATE OF status, decision, minutes ON meetings
WHEN NEW.status = 'ended' AND NEW.decision IS NOT NULL AND json_valid(NEW.decision)
BEGIN
    DELETE FROM decision_search WHERE rowid = (SELECT doc FROM decision_search_docs WHERE meeting_id = NEW.id);
    INSERT OR IGNORE INTO decision_search_docs(meeting_id) VALUES (NEW.id);
    INSERT INTO decision_search(rowid, meeting_id, topic, recommendation, rationale, minutes)
        VALUES ((SELECT doc FROM decision_search_docs WHERE meeting_id = NEW.id), NEW.id, NEW.topic,
                coalesce(json_extract(NEW.decision, '$.recommendation'), ''),
                coalesce(json_extract(NEW.decision, '$.rationale'), ''), coalesce(NEW.minutes, ''));
END;
CREATE TRIGGER decision_search_forget AFTER DELETE ON meetings
BEGIN
    DELETE FROM decision_search WHERE rowid = (SELECT doc FROM decision_search_docs WHERE meeting_id = OLD.id);
    DELETE FROM decision_search_docs WHERE meeting_id = OLD.id;
END;
-- A review meeting looks back at a decision: what happened, and whether it is kept, reversed or superseded.
CREATE TABLE decision_reviews (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    meeting_id         TEXT NOT NULL REFERENCES meetings(id),   -- the decision reviewed
    review_meeting_id  TEXT,             -- the review meeting (NULL: none held yet; named as it starts, before its row)
    due_at             TEXT,                                    -- when it was scheduled for
    verdict            TEXT CHECK (verdict IN ('kept', 'reversed', 'superseded', 'unclear')),
    summary            TEXT,
    created_at         TEXT NOT NULL,
    reviewed_at        TEXT
);
CREATE INDEX decision_reviews_meeting ON decision_reviews(meeting_id);
