-- which spending scope a model call falls under: "public:<channel>" for one a stranger caused in public
-- mode (the channel's daily cap sums these), NULL otherwise
ALTER TABLE llm_calls ADD COLUMN scope TEXT;
CREATE INDEX llm_calls_scope ON llm_calls(scope, ts);
