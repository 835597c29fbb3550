-- a reply whose request had left when its answer was lost (Sabha stopped, the connection dropped):
-- resends: how often it was sent once more, marked as possibly repeated (bot.intake.inbox: at most once);
-- unconfirmed_at: since when it waits for the service to confirm it (WhatsApp's status webhook), else it is resent
ALTER TABLE inbound_messages ADD COLUMN resends INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inbound_messages ADD COLUMN unconfirmed_at TEXT;
