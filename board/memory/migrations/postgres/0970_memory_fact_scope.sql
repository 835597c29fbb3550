-- PostgreSQL twin of ../0970_memory_fact_scope.sql (same tables, columns and indexes).
-- Where a fact was learned (its scope): 'direct' (a direct chat: private to the person) or
-- 'group:<channel>:<chat id>' (a group or forum, whose members read the answers); a turn sees only the facts
-- of its own scope. Facts kept before this count as direct-chat (private) facts. The same key may be kept
-- once per scope. See board/memory/facts.py.
ALTER TABLE memory_facts ADD COLUMN scope TEXT NOT NULL DEFAULT 'direct';  -- direct | group:<channel>:<chat id>
ALTER TABLE memory_facts DROP CONSTRAINT memory_facts_user_role_key_key;
ALTER TABLE memory_facts ADD CONSTRAINT memory_facts_user_role_key_scope_key UNIQUE ("user", role, key, scope);
