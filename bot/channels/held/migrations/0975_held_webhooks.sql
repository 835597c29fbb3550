-- Webhook requests that arrived while the daemon was starting (bot/channels/held/): stored before they were
-- answered 200, handed to their channel once it is up, deleted once it has taken them.
CREATE TABLE IF NOT EXISTS held_webhooks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL,
    headers TEXT NOT NULL,
    body BLOB NOT NULL,
    received_at TEXT NOT NULL
);
