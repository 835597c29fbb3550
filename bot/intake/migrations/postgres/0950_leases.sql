-- PostgreSQL twin of ../0950_leases.sql
CREATE TABLE leases (
    key        TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,  -- epoch seconds
    taken_at   TEXT NOT NULL               -- ISO 8601, when this holder took it
);
CREATE INDEX leases_holder ON leases(holder);
