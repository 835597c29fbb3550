-- how often a reply was sent once more, marked as possibly repeated, because it was being sent when Sabha stopped
-- (bot.intake.inbox: Inbox.unfinished sends such a reply again at most once)
ALTER TABLE inbound_messages ADD COLUMN resends INTEGER NOT NULL DEFAULT 0;
