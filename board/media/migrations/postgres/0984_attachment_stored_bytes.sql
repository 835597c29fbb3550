-- PostgreSQL twin of ../0984_attachment_stored_bytes.sql (same tables, columns and indexes).
-- the bytes an attachment keeps in the media store: the file as sent plus what was made from it (a
-- picture's scaled copy); the media quotas sum these (board/media/quota.py), size stays what was sent
ALTER TABLE message_attachments ADD COLUMN stored_bytes BIGINT;
