-- Issue 29: on PostgreSQL the knowledge index lives in the state database (postgres/0550_knowledge_index.sql).
-- On SQLite it stays in its own FTS5 file, <data_dir>/knowledge.db (board/memory/knowledge/index.py): derived
-- data that the state db's backups and quick_check need not carry. Nothing to do here; the step keeps the two
-- backends' migration lists the same.
SELECT 1;
