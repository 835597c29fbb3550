-- PostgreSQL twin of ../1065_telegram_album_staged.sql (same tables, columns and indexes).
-- Webhook albums (bot/channels/telegram/album_staging.py, notes/inputs.md): each item of an album posted to the
-- webhook, kept as Telegram posted it until its album is stored with the intake as one message.
CREATE TABLE telegram_album_staged (
    chat_id     BIGINT NOT NULL,
    message_id  BIGINT NOT NULL,
    group_id    TEXT NOT NULL,            -- the album's media_group_id
    body        TEXT NOT NULL,            -- the update as posted (JSON)
    staged_at   TEXT NOT NULL,
    PRIMARY KEY (chat_id, message_id)
);
CREATE INDEX telegram_album_staged_by_album ON telegram_album_staged(chat_id, group_id);
