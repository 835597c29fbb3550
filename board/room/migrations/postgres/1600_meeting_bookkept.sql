-- PostgreSQL twin of ../1600_meeting_bookkept.sql.
ALTER TABLE meetings ADD COLUMN bookkept_at TEXT;
UPDATE meetings SET bookkept_at = COALESCE(ended_at, started_at) WHERE status = 'ended';
CREATE INDEX meetings_not_bookkept ON meetings(id) WHERE status = 'ended' AND bookkept_at IS NULL;
