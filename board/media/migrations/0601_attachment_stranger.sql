-- whether an attachment came from a stranger (public mode): the strangers' media quota sums these
-- (board/media/quota.py); the index serves one sender's kept files of the last keep_days
ALTER TABLE message_attachments ADD COLUMN from_stranger INTEGER NOT NULL DEFAULT 0;
CREATE INDEX message_attachments_sender ON message_attachments(channel, sender, created_at);
