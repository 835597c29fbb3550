-- PostgreSQL twin of ../0004_llm_calls_sender.sql (same tables, columns and indexes).
-- who a model call was made for (the budget's per-sender spend): "<channel>:<sender id>", NULL when unknown
ALTER TABLE llm_calls ADD COLUMN sender TEXT;
CREATE INDEX llm_calls_sender ON llm_calls(sender, ts);
