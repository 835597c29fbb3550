-- PostgreSQL twin of ../1490_recall_audience_token.sql. Nothing to change here: a member's search already reads
-- only their passages on PostgreSQL (EXPLAIN at 100,000 lines: a bitmap scan of recall_passages_audience, the
-- tsvector checked on those rows only); the SQLite side needed the audience inside its full-text index for that.
SELECT 1;
