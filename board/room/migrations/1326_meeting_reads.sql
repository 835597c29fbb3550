-- Issue 44: the lists of meetings (web pages, `sabha meetings list`, the decisions page) read the newest first
-- by this index instead of sorting every meeting (0.98 s at 10,000 meetings); the decisions page's actions
-- oldest first likewise; a meeting's actions (its page, the outcome a recalled decision shows) by meeting.
CREATE INDEX meetings_by_start ON meetings(started_at);
CREATE INDEX action_items_by_created ON action_items(created_at);
CREATE INDEX action_items_by_meeting ON action_items(meeting_id);
