-- the bytes of text an attachment keeps in the state db (what was read from it, in media_derived, and the
-- copy on its own row); the media quotas sum these beside stored_bytes (board/media/quota.py)
ALTER TABLE message_attachments ADD COLUMN text_bytes INTEGER;
