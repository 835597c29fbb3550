-- a conversation's unanswered messages in the order they were stored (bot.intake: lane_order, the dispatcher);
-- SQLite orders by rowid, PostgreSQL by the `seq` column its twin adds
CREATE INDEX inbound_messages_lane ON inbound_messages(channel, lane, status);
