-- Issue 40: what each channel has posted of a meeting (bot/channels/meeting_posts.py), so a meeting that goes on
-- after a restart is caught up without posting anything twice. Shared by the channels (a channel column); it
-- lives with Telegram's tables because every channel's migrations are applied, enabled or not.
CREATE TABLE meeting_posts (
    meeting_id  TEXT NOT NULL,
    channel     TEXT NOT NULL,            -- telegram | whatsapp
    chat_id     TEXT NOT NULL,
    item        TEXT NOT NULL,            -- thread, status, statement:2:finance, pointer:finance, round:2, decision, minutes
    status      TEXT NOT NULL,            -- sending (its request started to leave) | sent
    message_id  TEXT,                     -- the (first) message it became; a thread's topic id
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (meeting_id, channel, chat_id, item)
);
