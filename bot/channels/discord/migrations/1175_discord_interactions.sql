-- Issue 41: Discord interactions (a button pressed, a slash command) taken in by the board
-- (bot.channels.discord.followups): each one's token, so its answer is sent as the interaction's
-- follow-up (the token works for 15 minutes, also after a restart), and whether Discord was answered.
CREATE TABLE discord_interactions (
    interaction_id  TEXT PRIMARY KEY,
    token           TEXT NOT NULL,
    application_id  TEXT NOT NULL,
    kind            TEXT NOT NULL,             -- press | slash
    created_at      REAL NOT NULL,             -- epoch seconds when it arrived
    acknowledged    INTEGER NOT NULL DEFAULT 0 -- 1: Discord took the deferred response (a follow-up may come)
);
