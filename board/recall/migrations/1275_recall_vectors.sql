-- Issue 43, recall by meaning: one vector per passage, made by the configured embedding model
-- (memory.embedding_model) in the background (board/recall/vector_index.py), searched by cosine distance
-- with sqlite-vec (board/recall/vector_store.py). `model` is the model and size that made it: a vector of
-- another model is never compared, and is embedded again. A passage deleted ("forget everything") takes
-- its vector with it.
CREATE TABLE recall_vectors (
    passage_id INTEGER PRIMARY KEY REFERENCES recall_passages(id) ON DELETE CASCADE,
    model      TEXT NOT NULL,
    vector     BLOB NOT NULL              -- little-endian float32, as sqlite-vec reads it
);
CREATE INDEX recall_vectors_model ON recall_vectors(model);
