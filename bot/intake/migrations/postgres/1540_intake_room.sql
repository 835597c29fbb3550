-- PostgreSQL twin of ../1540_intake_room.sql
-- intake_room (bot/intake/leasing.py): each replica's spare turns (its cap less the turns running and queued), as it
-- last published them (seen_at, epoch seconds). A replica whose conversations wait behind its busy turns hands
-- them over only while another replica, seen within replicas.lease_s, has room for them.
CREATE TABLE IF NOT EXISTS intake_room (
    holder  TEXT PRIMARY KEY,
    spare   BIGINT NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL
);
