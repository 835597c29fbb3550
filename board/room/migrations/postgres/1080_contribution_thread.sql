-- The thread a contribution was written in (a forum topic's id; NULL: none, or a chat without topics), so a
-- channel shows a contribution written in the meeting's origin (a forum's General) in the meeting's own topic,
-- and does not repeat one written in that topic.
ALTER TABLE meeting_contributions ADD COLUMN thread_id TEXT;
