-- What media produced (board/media/store.py): text derived from stored bytes, kept so a retried
-- turn (a crash mid-transcription) does not pay twice, and each message's attachments, so a
-- conversation's files can be listed and a meeting can take the last one as evidence.
CREATE TABLE media_derived (
    blob       TEXT NOT NULL,     -- sha256 of the bytes
    how        TEXT NOT NULL,     -- what made the text: "transcript:<model>", "document", ...
    text       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (blob, how)
);
CREATE TABLE message_attachments (
    id          INTEGER PRIMARY KEY,
    channel     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    thread_id   INTEGER,
    message_id  TEXT,
    sender      TEXT NOT NULL,
    ord         INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    name        TEXT,
    mime        TEXT,
    size        INTEGER,
    blob        TEXT,
    derived     TEXT,             -- the text the board read from it (cut), or NULL
    problem     TEXT,             -- why it could not be read, or NULL
    created_at  TEXT NOT NULL,
    UNIQUE (channel, chat_id, message_id, ord)
);
CREATE INDEX message_attachments_place ON message_attachments(channel, chat_id, created_at);
