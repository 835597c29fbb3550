-- parts_posted: of a reply sent in several messages, how many the service confirmed in order (its answer to each
-- request; WhatsApp: also the status webhook of a part), stored as each comes back: after a stop, what is sent
-- once more starts after them (bot.intake.inbox). 0: nothing confirmed, or a reply in one message.
ALTER TABLE inbound_messages ADD COLUMN parts_posted INTEGER NOT NULL DEFAULT 0;
