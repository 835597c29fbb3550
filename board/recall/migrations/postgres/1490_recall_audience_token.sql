-- PostgreSQL twin of ../1490_recall_audience_token.sql. Nothing to change here: PostgreSQL's planner already
-- combines the audience's b-tree index (recall_passages_audience) with the tsvector's GIN index
-- (recall_passages_document) in one bitmap scan when the asker's passages are few, so the search reads only
-- what the asker may see; the SQLite side needed the audience inside its full-text index for the same.
SELECT 1;
