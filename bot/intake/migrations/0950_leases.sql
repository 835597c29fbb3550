-- leases (board.storage.leases): which replica works a conversation ('lane:<lane>') now; `sabha status` reads it
CREATE TABLE leases (
    key        TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at REAL NOT NULL,     -- epoch seconds
    taken_at   TEXT NOT NULL      -- ISO 8601, when this holder took it
);
CREATE INDEX leases_holder ON leases(holder);
