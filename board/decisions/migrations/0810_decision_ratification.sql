-- Issue 27: a meeting's decision is proposed until the owner ratifies, vetoes or sends it back.
-- The current verdict lives on the meeting (NULL with a decision = proposed); every ruling is kept.
ALTER TABLE meetings ADD COLUMN ratification TEXT;        -- proposed | ratified | vetoed | revisit (NULL: proposed)
ALTER TABLE meetings ADD COLUMN ruled_by TEXT;            -- channel:sender id of whoever ruled
ALTER TABLE meetings ADD COLUMN ruled_by_name TEXT;
ALTER TABLE meetings ADD COLUMN ruled_at TEXT;            -- ISO 8601, UTC, from the board's clock
ALTER TABLE meetings ADD COLUMN ruling_reason TEXT;       -- a veto's or a revisit's reason
ALTER TABLE meetings ADD COLUMN follow_up_id TEXT;        -- the meeting a revisit convened
ALTER TABLE meetings ADD COLUMN revisit_of TEXT;          -- the decision this meeting revisits
CREATE TABLE decision_rulings (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    meeting_id  TEXT NOT NULL REFERENCES meetings(id),
    verdict     TEXT NOT NULL,                          -- ratified | vetoed | revisit
    previous    TEXT NOT NULL,
    by_id       TEXT NOT NULL,
    by_name     TEXT,
    reason      TEXT,
    via         TEXT NOT NULL,                          -- the channel (telegram, whatsapp, console, cli)
    at          TEXT NOT NULL,
    dropped     TEXT NOT NULL DEFAULT '[]'              -- JSON list of the action item ids a veto dropped
);
CREATE INDEX decision_rulings_by_meeting ON decision_rulings(meeting_id, id);
CREATE INDEX meetings_by_ratification ON meetings(ratification, started_at);
