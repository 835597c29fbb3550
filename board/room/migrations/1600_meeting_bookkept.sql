-- Issue 40: a meeting's end bookkeeping (its record in the members' sessions, the review scheduled) runs after the
-- meeting's task returned (board/room/subscribers.py: Bookkeeping). bookkept_at is set once it is all done; a start
-- finds an ended meeting without it (a kill cut it short) and does what is left. Meetings that ended before this
-- migration had theirs done before they returned.
ALTER TABLE meetings ADD COLUMN bookkept_at TEXT;
UPDATE meetings SET bookkept_at = COALESCE(ended_at, started_at) WHERE status = 'ended';
CREATE INDEX meetings_not_bookkept ON meetings(id) WHERE status = 'ended' AND bookkept_at IS NULL;
