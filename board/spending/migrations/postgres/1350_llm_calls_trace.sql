-- PostgreSQL twin of ../1350_llm_calls_trace.sql (same column).
-- the OpenTelemetry trace a model call was made in (32 hex digits; telemetry.enabled), so a ledger row leads to
-- its trace and a trace to its rows; NULL: tracing was off
ALTER TABLE llm_calls ADD COLUMN trace_id TEXT;
