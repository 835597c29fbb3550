-- PostgreSQL twin of ../0910_web_chat.sql (same tables, columns and indexes).
-- what the web chat page shows of each conversation (bot.channels.web.store): the owner's
-- messages and the board's replies, in order; the page reads it over SSE from a seq on
CREATE TABLE web_chat_outbox (
    conversation TEXT NOT NULL,     -- the advisor the chat is with (the envelope's chat_id)
    seq          BIGINT NOT NULL,  -- 1, 2, ... per conversation: the SSE event id
    entry_key    TEXT NOT NULL,     -- what it is: q:<client id> (a question), r:<client id>:<part> (a reply)
    kind         TEXT NOT NULL,     -- question | answer | command | error | meeting | progress | notice
    role         TEXT,
    label        TEXT,              -- "<emoji> <Name>" of a reply
    body         TEXT NOT NULL,
    reply_to     TEXT,              -- the client id of the question a reply answers
    buttons      TEXT,              -- JSON [[label, command], ...]
    created_at   TEXT NOT NULL,
    PRIMARY KEY (conversation, seq),
    UNIQUE (conversation, entry_key)
);
CREATE INDEX web_chat_outbox_created ON web_chat_outbox(created_at);
