-- PostgreSQL twin of ../1001_meeting_resume.sql (same columns).
-- Issue 40: meetings survive a restart. ``resume``: what rebuilding the meeting's fixed inputs takes (its
-- origin place, settings, chair, evidence, preset agenda, extra owners), written with the row;
-- ``checkpoint``: the meeting's state as of its last finished phase (framing, each statement, the peer review,
-- the synthesis, the objection), written when the phase ends (board.room.meeting.resume).
ALTER TABLE meetings ADD COLUMN resume TEXT;
ALTER TABLE meetings ADD COLUMN checkpoint TEXT;
