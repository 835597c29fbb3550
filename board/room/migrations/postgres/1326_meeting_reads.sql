-- PostgreSQL twin of ../1326_meeting_reads.sql.
CREATE INDEX meetings_by_start ON meetings(started_at);
CREATE INDEX action_items_by_created ON action_items(created_at);
CREATE INDEX action_items_by_meeting ON action_items(meeting_id);
