-- PostgreSQL twin of ../0710_memory_fact_sources.sql (same tables, columns and indexes).
-- Where a fact came from (issue 26): said in a message and heard by the board, told to a role with the
-- remember tool, or written by the owner (sabha memory edit); see board/memory/facts.py.
ALTER TABLE memory_facts ADD COLUMN source TEXT NOT NULL DEFAULT 'tool';  -- tool | heard | owner
ALTER TABLE memory_facts ADD COLUMN source_entry TEXT;    -- the transcript entry id of the user's message
ALTER TABLE memory_facts ADD COLUMN source_message TEXT;  -- <channel>:<message id>, when the channel gave one
ALTER TABLE memory_facts ADD COLUMN source_session TEXT;  -- the session key the message was said in
