-- PostgreSQL twin of ../0007_llm_calls_thinking.sql (same tables, columns and indexes).
-- how much the model was asked to think before answering (off, low, medium, high); NULL: not asked
ALTER TABLE llm_calls ADD COLUMN thinking TEXT;
