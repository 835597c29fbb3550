-- PostgreSQL twin of ../1275_recall_vectors.sql. Vector search on PostgreSQL needs pgvector, which Sabha does
-- not use yet: recall there is lexical only (sabha doctor says so) and this table stays empty; it keeps the
-- two schemas alike.
CREATE TABLE recall_vectors (
    passage_id BIGINT PRIMARY KEY REFERENCES recall_passages(id) ON DELETE CASCADE,
    model      TEXT NOT NULL,
    vector     BYTEA NOT NULL
);
CREATE INDEX recall_vectors_model ON recall_vectors(model);
