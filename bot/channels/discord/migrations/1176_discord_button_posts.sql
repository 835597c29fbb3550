-- Issue 41: the Discord messages that carry a decision's Ratify / Veto / Revisit buttons
-- (bot.channels.discord.verdicts), so their buttons can say the verdict once it is ruled on.
CREATE TABLE discord_button_posts (
    subject     TEXT NOT NULL,  -- what the buttons act on: a meeting (decision) id
    channel_id  TEXT NOT NULL,
    message_id  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (channel_id, message_id)
);
CREATE INDEX discord_button_posts_by_subject ON discord_button_posts(subject);
