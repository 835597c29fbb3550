-- traceparent: the W3C trace context (text, "00-<trace id>-<span id>-<flags>") of the span that received and stored
-- the message, while tracing is on (board.telemetry); its answer's "message" span, taken up later in the conversation's
-- lane, is that span's child, so receipt, claim and answer are one trace. NULL: tracing was off (nothing written) or
-- the row was stored before this column; such a message's answer starts a trace of its own.
ALTER TABLE inbound_messages ADD COLUMN traceparent TEXT;
