-- PostgreSQL twin of ../0811_telegram_button_posts.sql (same tables, columns and indexes).
-- Issue 27: the messages that carry a decision's Ratify / Veto / Revisit buttons, so the buttons
-- can be changed to say the verdict once the decision is ratified, vetoed or sent back.
CREATE TABLE telegram_button_posts (
    subject     TEXT NOT NULL,            -- what the buttons act on: a meeting (decision) id
    chat_id     BIGINT NOT NULL,
    message_id  BIGINT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (chat_id, message_id)
);
CREATE INDEX telegram_button_posts_by_subject ON telegram_button_posts(subject);
