-- A meeting called while its estimate is above board.meetings.confirm_over_usd waits here for the owner's Start
-- (board/room/meeting/pending.py): what was asked (request: JSON of the topic, roster, rounds, agenda, evidence and
-- the caller's envelope), the estimate as said, and where it stands: waiting -> started (meeting_id set) |
-- cancelled | expired (a day without Start). Claimed by one UPDATE ... WHERE status = 'waiting': a second press
-- starts nothing.
CREATE TABLE meeting_starts (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    topic        TEXT NOT NULL,
    request      TEXT NOT NULL,
    channel      TEXT NOT NULL,
    chat_id      TEXT NOT NULL,
    thread_id    INTEGER,
    estimate_usd REAL NOT NULL,
    estimate     TEXT NOT NULL,
    status       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    decided_by   TEXT,
    decided_at   TEXT,
    meeting_id   TEXT
);
CREATE INDEX meeting_starts_by_place ON meeting_starts(channel, chat_id, status);
