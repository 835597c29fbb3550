-- The meetings and roundtables a standing item (sabha schedule, /every) held (board/room/standing.py): which item,
-- which kind, the run's label as the ledger tags its model calls (llm_calls.schedule_run) and when it started. A
-- run while the item's previous meeting still runs on record holds no second one; what an item cost this month
-- counts its meetings' calls (also those made after a restart resumed them).
CREATE TABLE standing_meetings (
    meeting_id TEXT PRIMARY KEY,
    item_id    INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    label      TEXT NOT NULL,
    started_at TEXT NOT NULL
);
CREATE INDEX standing_meetings_by_item ON standing_meetings(item_id, started_at);
