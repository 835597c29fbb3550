-- PostgreSQL twin of ../1475_llm_calls_trouble.sql.
CREATE INDEX llm_calls_trouble ON llm_calls(ts) WHERE (outcome <> 'ok' OR attempt > 1);
