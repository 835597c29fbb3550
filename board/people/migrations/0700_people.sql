-- One person across channels (board/people): a person and the identities linked to it.
-- An identity with no row here is a person of its own, keyed <channel>:<sender> as before.
CREATE TABLE people (
    id         INTEGER PRIMARY KEY,
    owner      INTEGER NOT NULL DEFAULT 0,   -- 1: linked from the owner's own accounts
    created_at TEXT NOT NULL
);
CREATE TABLE people_identities (
    identity   TEXT PRIMARY KEY,             -- <channel>:<sender>, as the ledger wrote senders before
    person     INTEGER NOT NULL REFERENCES people(id),
    linked_at  TEXT NOT NULL,
    last_text  TEXT,                         -- what they last said here (the note other channels see)
    last_at    REAL                          -- when (unix seconds)
);
CREATE INDEX people_identities_person ON people_identities(person);
-- One-time link codes: only their hash is kept.
CREATE TABLE people_link_codes (
    code_hash  TEXT PRIMARY KEY,             -- sha256 of the normalised code
    identity   TEXT NOT NULL,                -- who asked for it (the code binds to them)
    owner      INTEGER NOT NULL,             -- 1: asked by the owner (only the owner may redeem it)
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    used_at    REAL,
    used_by    TEXT
);
CREATE INDEX people_link_codes_identity ON people_link_codes(identity);
-- Wrong, reused, expired or refused codes, per identity (the rate limit on /link CODE).
CREATE TABLE people_link_failures (
    id       INTEGER PRIMARY KEY,
    identity TEXT NOT NULL,
    at       REAL NOT NULL
);
CREATE INDEX people_link_failures_identity ON people_link_failures(identity, at);
