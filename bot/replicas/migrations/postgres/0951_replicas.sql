-- The replicas of `sabha run` sharing this state (bot/replicas/registry.py): one row per running process,
-- its heartbeat in seen_at (epoch seconds); alive = seen within replicas.lease_s. polling = 1 for the one
-- replica that polls Telegram's getUpdates (bot/replicas/leader.py).
CREATE TABLE IF NOT EXISTS replicas (
    name TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid BIGINT NOT NULL,
    started_at TEXT NOT NULL,
    seen_at DOUBLE PRECISION NOT NULL,
    polling BIGINT NOT NULL DEFAULT 0
);
