-- PostgreSQL twin of ../1327_llm_calls_reads.sql.
CREATE INDEX llm_calls_by_role ON llm_calls(role, ts);
CREATE INDEX llm_calls_by_meeting ON llm_calls(meeting_id);
