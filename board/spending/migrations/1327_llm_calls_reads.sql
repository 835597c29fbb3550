-- Issue 44: the board page's "last active" per role is one index lookup per role, not a scan of the ledger;
-- a meeting's cost is summed over its own calls.
CREATE INDEX llm_calls_by_role ON llm_calls(role, ts);
CREATE INDEX llm_calls_by_meeting ON llm_calls(meeting_id);
