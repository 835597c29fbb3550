-- Issue 41 review: /board in a channel is echoed as a message whose thread is the conversation. The command is
-- recorded here (keyed on its trigger_id) before the echo is posted, and the echo's ts as soon as Slack answers,
-- so a command that could not be stored is never echoed and a repeated delivery of it reuses its echo
-- (bot.channels.slack.store.SlackBoardEchoes).
CREATE TABLE slack_board_echoes (
    trigger_id  TEXT PRIMARY KEY,  -- the command's trigger_id (the same in every delivery of one command)
    channel_id  TEXT NOT NULL,
    ts          TEXT,              -- the echo's ts once Slack posted it (NULL: not posted yet, or its outcome unknown)
    created_at  TEXT NOT NULL
);
CREATE INDEX slack_board_echoes_created ON slack_board_echoes(created_at);
