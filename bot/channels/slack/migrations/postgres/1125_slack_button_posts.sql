-- PostgreSQL twin of ../1125_slack_button_posts.sql (same tables, columns and indexes).
-- Issue 41: the Slack messages that carry a decision's Ratify / Veto / Revisit buttons
-- (bot.channels.slack.verdicts), so that a ruling made anywhere (the CLI, Telegram, the web) replaces their
-- buttons with the verdict. settled_verdict is the verdict the message shows (NULL: still the buttons).
CREATE TABLE slack_button_posts (
    subject          TEXT NOT NULL,  -- what the buttons act on: a meeting (decision) id
    channel_id       TEXT NOT NULL,
    ts               TEXT NOT NULL,  -- the message's ts in that channel
    body             TEXT NOT NULL,  -- the message's mrkdwn text (chat.update sends it again with the verdict)
    created_at       TEXT NOT NULL,
    settled_verdict  TEXT,
    settled_at       TEXT,
    PRIMARY KEY (channel_id, ts)
);
CREATE INDEX slack_button_posts_open ON slack_button_posts(settled_verdict, subject);
