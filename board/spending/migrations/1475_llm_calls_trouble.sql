-- Issue 44: the operations page (/ui/ops) counts and lists the model calls that failed, or that answered only on
-- a later attempt (a retry or a fallback), in the last day; this partial index holds only those rows, so the
-- page reads them and not the whole day of the ledger.
CREATE INDEX llm_calls_trouble ON llm_calls(ts) WHERE (outcome <> 'ok' OR attempt > 1);
