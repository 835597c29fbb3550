-- PostgreSQL twin of ../1610_meetings_ended_at.sql.
CREATE INDEX meetings_ended_at ON meetings(ended_at) WHERE status = 'ended';
