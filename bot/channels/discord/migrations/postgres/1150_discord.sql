-- PostgreSQL twin of ../1150_discord.sql (same table and columns).
-- the Discord places Sabha has seen (bot.channels.discord.store): each channel, thread or DM channel a message came
-- from or a thread Sabha starts for a question, what it is to the board, and the newest message stored from it
-- (where its history is read from after a restart)
CREATE TABLE discord_places (
    channel_id      TEXT PRIMARY KEY,  -- Discord's id (a thread Sabha starts from a message has that message's id)
    kind            TEXT NOT NULL,     -- advisor | board | forum | thread | dm
    parent_id       TEXT,              -- a thread's channel (or forum); a DM channel's user
    role            TEXT,              -- the advisor the place (or a thread's first question) addressed
    started         INTEGER NOT NULL DEFAULT 1,  -- 0: a thread Sabha is to start for a question, not created yet
    last_message_id TEXT,              -- the newest message from here stored in the intake
    updated_at      TEXT NOT NULL
);
