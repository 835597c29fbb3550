-- one WhatsApp person behind a phone number and a business-scoped user id (bot.channels.whatsapp.identity)
CREATE TABLE whatsapp_people (
    person     TEXT PRIMARY KEY,   -- the stable key: sessions board:<role>:wa-<person>, lanes, sticky role, facts
    phone      TEXT UNIQUE,        -- the current phone number (wa_id), when Meta shared it
    bsuid      TEXT UNIQUE,        -- the current business-scoped user id (US.1349...), when seen
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- what Sabha learned about people: pairings, number and user id changes, merged conversations
CREATE TABLE whatsapp_identity_events (
    id     INTEGER PRIMARY KEY,
    at     TEXT NOT NULL,
    kind   TEXT NOT NULL,          -- paired | number_changed | user_id_changed | merged
    person TEXT NOT NULL,
    old    TEXT,                   -- the identifier before (a former number or user id; a merged key)
    new    TEXT                    -- the identifier after
);
CREATE INDEX whatsapp_identity_events_person ON whatsapp_identity_events(person);
