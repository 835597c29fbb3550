-- the standing item (sabha schedule, /every) whose run made a model call, and a short label of that run
-- ("#7 roundtable: growth ideas (2026-11-30 09:00Z)") for `sabha cost --by schedule`; NULL: not a scheduled run
ALTER TABLE llm_calls ADD COLUMN schedule_item INTEGER;
ALTER TABLE llm_calls ADD COLUMN schedule_run TEXT;
CREATE INDEX llm_calls_schedule ON llm_calls(schedule_item, ts);
