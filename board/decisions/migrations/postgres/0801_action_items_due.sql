-- PostgreSQL twin of ../0801_action_items_due.sql (same tables, columns and indexes).
-- Issue 27: action items have a due date (and a reminder at it: board.room.reminders, board.schedule).
ALTER TABLE action_items ADD COLUMN due_at TEXT;     -- UTC 'YYYY-MM-DDTHH:MM:SS.ffffffZ' (board.schedule.work.stamp); NULL: none
ALTER TABLE action_items ADD COLUMN due_text TEXT;   -- as the decision or the owner wrote it ("in two weeks", "+2h")
CREATE INDEX action_items_due ON action_items(status, due_at);
