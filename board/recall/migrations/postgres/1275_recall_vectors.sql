-- PostgreSQL twin of ../1275_recall_vectors.sql: the vector as REAL[], which needs no extension to store; the
-- search casts it to pgvector's `vector` (board/recall/vector_store.py), so a server without pgvector still
-- migrates, and recall there stays lexical (sabha doctor says so).
CREATE TABLE recall_vectors (
    passage_id BIGINT PRIMARY KEY REFERENCES recall_passages(id) ON DELETE CASCADE,
    model      TEXT NOT NULL,
    vector     REAL[] NOT NULL             -- searched as pgvector's vector (cast) where the extension is in the database
);
CREATE INDEX recall_vectors_model ON recall_vectors(model);
