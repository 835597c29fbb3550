-- Albums (notes/inputs.md): every stored item of an album, under the message id the album was stored
-- as (its head), so an item Telegram sends again (alone, or regrouped with a late item) is known stored.
CREATE TABLE telegram_album_items (
    chat_id     INTEGER NOT NULL,
    message_id  INTEGER NOT NULL,
    head_id     INTEGER NOT NULL,         -- the message id the album was stored as (the intake's id)
    created_at  TEXT NOT NULL,
    PRIMARY KEY (chat_id, message_id)
);
CREATE INDEX telegram_album_items_by_age ON telegram_album_items(created_at);
