-- Issue 40: the owner at the table. What people write into a running meeting (contributions), what they
-- tell it to do (controls: wrap, pause, resume, extend, cancel), and every place a meeting is shown in
-- (its origin, and the thread a channel opened for it), so a message written there finds the meeting.
CREATE TABLE meeting_contributions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    meeting_id TEXT NOT NULL REFERENCES meetings(id),
    sender     TEXT NOT NULL,               -- who wrote it: the channel's sender id (or person), "owner" from the terminal
    name       TEXT NOT NULL,               -- how the members are told who said it ("the owner", a display name)
    text       TEXT NOT NULL,
    via        TEXT NOT NULL,               -- telegram | whatsapp | web | terminal | ...
    round      INTEGER NOT NULL,            -- the round that was running when it arrived (0: framing)
    addressed  TEXT,                        -- the role it names ("@finance redo it ..."), NULL for all
    message_id TEXT,                        -- the channel's message id, for dedupe (NULL from the terminal)
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX meeting_contributions_once ON meeting_contributions(meeting_id, via, message_id);
CREATE TABLE meeting_controls (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    meeting_id TEXT NOT NULL REFERENCES meetings(id),
    kind       TEXT NOT NULL,               -- wrap | pause | resume | extend | cancel
    by_whom    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    applied_at TEXT                         -- when the meeting acted on it (NULL: not yet)
);
CREATE INDEX meeting_controls_by_meeting ON meeting_controls(meeting_id, id);
CREATE TABLE meeting_places (
    meeting_id TEXT NOT NULL REFERENCES meetings(id),
    channel    TEXT NOT NULL,
    chat_id    TEXT NOT NULL,
    thread_id  TEXT NOT NULL DEFAULT '',    -- '' for a chat without topics
    kind       TEXT NOT NULL,               -- origin | thread
    PRIMARY KEY (channel, chat_id, thread_id, meeting_id)
);
CREATE INDEX meeting_places_by_meeting ON meeting_places(meeting_id);
