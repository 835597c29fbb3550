BEGIN TRANSACTION;
CREATE TABLE consultations (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            ts          TEXT NOT NULL,
            from_role   TEXT NOT NULL,
            to_role     TEXT NOT NULL,
            depth       INTEGER NOT NULL,
            chain       TEXT NOT NULL,              -- JSON list of roles so far, ending with the caller
            question    TEXT NOT NULL,
            outcome     TEXT NOT NULL,              -- ok | degraded | refused | timeout
            latency_ms  REAL NOT NULL,
            cost_usd    REAL NOT NULL DEFAULT 0,
            session_key TEXT,
            meeting_id  TEXT,
            error       TEXT
        );
CREATE TABLE inbound_messages (
            channel     TEXT NOT NULL,
            chat_id     TEXT NOT NULL,
            message_id  TEXT NOT NULL,
            received_at TEXT NOT NULL,
            status      TEXT NOT NULL DEFAULT 'received',
            answered_at TEXT, envelope TEXT, reply TEXT, attempts INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (channel, chat_id, message_id)
        );
INSERT INTO "inbound_messages" VALUES('telegram','1001','10','2026-11-22T20:23:44+00:00','answered','2026-11-22T20:23:44+00:00','{"channel": "telegram", "text": "hello", "sender": "1001", "chat_id": "1001", "thread_id": null, "message_id": "10", "sender_name": "Owner", "is_group": false, "is_owner": true, "role_hint": null, "received_at": "2026-11-22T20:23:44.804723+00:00"}','{"role": "general", "name": "General", "emoji": "🧭", "text": "Hi there", "channel": "telegram", "chat_id": "1001", "thread_id": null, "reply_to": "10", "session_key": "main", "kind": "answer", "degraded": false}',1);
INSERT INTO "inbound_messages" VALUES('telegram','1001','11','2026-11-22T20:23:44+00:00','replied',NULL,'{"channel": "telegram", "text": "draft a memo", "sender": "1001", "chat_id": "1001", "thread_id": null, "message_id": "11", "sender_name": "Owner", "is_group": false, "is_owner": true, "role_hint": null, "received_at": "2026-11-22T20:23:44.805466+00:00"}','{"role": "general", "name": "General", "emoji": "🧭", "text": "A memo", "channel": "telegram", "chat_id": "1001", "thread_id": null, "reply_to": "11", "session_key": "main", "kind": "answer", "degraded": false}',1);
INSERT INTO "inbound_messages" VALUES('telegram','2002','12','2026-11-22T20:23:44+00:00','denied','2026-11-22T20:23:44+00:00',NULL,NULL,1);
INSERT INTO "inbound_messages" VALUES('telegram','1001','13','2026-11-22T20:23:44+00:00','received',NULL,'{"channel": "telegram", "text": "what did finance say?", "sender": "1001", "chat_id": "1001", "thread_id": null, "message_id": "13", "sender_name": "Owner", "is_group": false, "is_owner": true, "role_hint": null, "received_at": "2026-11-22T20:23:44.806429+00:00"}',NULL,1);
CREATE TABLE llm_calls (
            id                 INTEGER PRIMARY KEY,
            ts                 TEXT NOT NULL,
            provider           TEXT NOT NULL,
            model              TEXT NOT NULL,
            role               TEXT,
            session_key        TEXT,
            meeting_id         TEXT,
            purpose            TEXT,
            attempt            INTEGER NOT NULL DEFAULT 1,
            input_tokens       INTEGER NOT NULL DEFAULT 0,
            output_tokens      INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            cost_usd           REAL,
            latency_ms         REAL,
            ttft_ms            REAL,
            outcome            TEXT NOT NULL,
            error              TEXT,
            blocks             TEXT,
            tags               TEXT
        );
INSERT INTO "llm_calls" VALUES(1,'2026-11-22T20:23:44+00:00','offline','offline','general','main',NULL,'turn',1,2926,98,0,0,0.0,0.7,NULL,'ok',NULL,'{"cacheable_prefix": 2515, "dynamic": 647, "history": 0, "message": 9, "method": "estimate:chars/4", "soul": 792, "static": 1489, "step": 0, "tools": 234}',NULL);
INSERT INTO "llm_calls" VALUES(2,'2026-11-22T20:23:44+00:00','offline','offline','general','main',NULL,'turn',1,3031,116,0,0,0.0,0.26,NULL,'ok',NULL,'{"cacheable_prefix": 2515, "dynamic": 647, "history": 112, "message": 12, "method": "estimate:chars/4", "soul": 792, "static": 1489, "step": 0, "tools": 234}',NULL);
INSERT INTO "llm_calls" VALUES(3,'2026-11-22T20:23:44+00:00','offline','offline','general','meeting:m-20261122-202344-bba2:general','m-20261122-202344-bba2','meeting',1,3177,204,0,0,0.0,0.14,NULL,'ok',NULL,'{"cacheable_prefix": 2281, "dynamic": 653, "history": 0, "message": 253, "method": "estimate:chars/4", "soul": 792, "static": 1489, "step": 0}',NULL);
INSERT INTO "llm_calls" VALUES(4,'2026-11-22T20:23:44+00:00','offline','offline','research','meeting:m-20261122-202344-bba2:research','m-20261122-202344-bba2','meeting',1,2938,116,0,0,0.0,0.3,NULL,'ok',NULL,'{"cacheable_prefix": 2634, "dynamic": 653, "history": 0, "message": 101, "method": "estimate:chars/4", "soul": 706, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(5,'2026-11-22T20:23:44+00:00','offline','offline','content','meeting:m-20261122-202344-bba2:content','m-20261122-202344-bba2','meeting',1,2889,114,0,0,0.0,0.33,NULL,'ok',NULL,'{"cacheable_prefix": 2581, "dynamic": 653, "history": 0, "message": 104, "method": "estimate:chars/4", "soul": 653, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(6,'2026-11-22T20:23:44+00:00','offline','offline','finance','meeting:m-20261122-202344-bba2:finance','m-20261122-202344-bba2','meeting',1,2839,104,0,0,0.0,0.21,NULL,'ok',NULL,'{"cacheable_prefix": 2531, "dynamic": 653, "history": 0, "message": 105, "method": "estimate:chars/4", "soul": 603, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(7,'2026-11-22T20:23:44+00:00','offline','offline','strategy','meeting:m-20261122-202344-bba2:strategy','m-20261122-202344-bba2','meeting',1,2883,114,0,0,0.0,0.21,NULL,'ok',NULL,'{"cacheable_prefix": 2575, "dynamic": 653, "history": 0, "message": 104, "method": "estimate:chars/4", "soul": 648, "static": 1488, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(8,'2026-11-22T20:23:44+00:00','offline','offline','critic','meeting:m-20261122-202344-bba2:critic','m-20261122-202344-bba2','meeting',1,2941,110,0,0,0.0,0.38,NULL,'ok',NULL,'{"cacheable_prefix": 2634, "dynamic": 653, "history": 0, "message": 103, "method": "estimate:chars/4", "soul": 706, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(9,'2026-11-22T20:23:44+00:00','offline','offline','research','meeting:m-20261122-202344-bba2:research','m-20261122-202344-bba2','meeting',1,3513,114,0,0,0.0,0.24,NULL,'ok',NULL,'{"cacheable_prefix": 2634, "dynamic": 653, "history": 0, "message": 676, "method": "estimate:chars/4", "soul": 706, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(10,'2026-11-22T20:23:44+00:00','offline','offline','content','meeting:m-20261122-202344-bba2:content','m-20261122-202344-bba2','meeting',1,3462,114,0,0,0.0,0.19,NULL,'ok',NULL,'{"cacheable_prefix": 2581, "dynamic": 653, "history": 0, "message": 676, "method": "estimate:chars/4", "soul": 653, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(11,'2026-11-22T20:23:44+00:00','offline','offline','finance','meeting:m-20261122-202344-bba2:finance','m-20261122-202344-bba2','meeting',1,3411,103,0,0,0.0,0.19,NULL,'ok',NULL,'{"cacheable_prefix": 2531, "dynamic": 653, "history": 0, "message": 676, "method": "estimate:chars/4", "soul": 603, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(12,'2026-11-22T20:23:44+00:00','offline','offline','strategy','meeting:m-20261122-202344-bba2:strategy','m-20261122-202344-bba2','meeting',1,3455,114,0,0,0.0,0.22,NULL,'ok',NULL,'{"cacheable_prefix": 2575, "dynamic": 653, "history": 0, "message": 676, "method": "estimate:chars/4", "soul": 648, "static": 1488, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(13,'2026-11-22T20:23:44+00:00','offline','offline','critic','meeting:m-20261122-202344-bba2:critic','m-20261122-202344-bba2','meeting',1,3515,108,0,0,0.0,0.18,NULL,'ok',NULL,'{"cacheable_prefix": 2634, "dynamic": 653, "history": 0, "message": 677, "method": "estimate:chars/4", "soul": 706, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(14,'2026-11-22T20:23:44+00:00','offline','offline','research','meeting:m-20261122-202344-bba2:research','m-20261122-202344-bba2','meeting',1,3508,116,0,0,0.0,0.2,NULL,'ok',NULL,'{"cacheable_prefix": 2634, "dynamic": 653, "history": 0, "message": 671, "method": "estimate:chars/4", "soul": 706, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(15,'2026-11-22T20:23:44+00:00','offline','offline','content','meeting:m-20261122-202344-bba2:content','m-20261122-202344-bba2','meeting',1,3457,114,0,0,0.0,0.18,NULL,'ok',NULL,'{"cacheable_prefix": 2581, "dynamic": 653, "history": 0, "message": 671, "method": "estimate:chars/4", "soul": 653, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(16,'2026-11-22T20:23:44+00:00','offline','offline','finance','meeting:m-20261122-202344-bba2:finance','m-20261122-202344-bba2','meeting',1,3406,103,0,0,0.0,0.16,NULL,'ok',NULL,'{"cacheable_prefix": 2531, "dynamic": 653, "history": 0, "message": 671, "method": "estimate:chars/4", "soul": 603, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(17,'2026-11-22T20:23:44+00:00','offline','offline','strategy','meeting:m-20261122-202344-bba2:strategy','m-20261122-202344-bba2','meeting',1,3450,111,0,0,0.0,0.16,NULL,'ok',NULL,'{"cacheable_prefix": 2575, "dynamic": 653, "history": 0, "message": 671, "method": "estimate:chars/4", "soul": 648, "static": 1488, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(18,'2026-11-22T20:23:44+00:00','offline','offline','critic','meeting:m-20261122-202344-bba2:critic','m-20261122-202344-bba2','meeting',1,3510,108,0,0,0.0,0.16,NULL,'ok',NULL,'{"cacheable_prefix": 2634, "dynamic": 653, "history": 0, "message": 672, "method": "estimate:chars/4", "soul": 706, "static": 1489, "step": 0, "tools": 439}',NULL);
INSERT INTO "llm_calls" VALUES(19,'2026-11-22T20:23:44+00:00','offline','offline','general','meeting:m-20261122-202344-bba2:general','m-20261122-202344-bba2','meeting',1,5104,264,0,0,0.0,0.14,NULL,'ok',NULL,'{"cacheable_prefix": 2281, "dynamic": 653, "history": 0, "message": 2180, "method": "estimate:chars/4", "soul": 792, "static": 1489, "step": 0}',NULL);
CREATE TABLE meeting_events (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            meeting_id TEXT NOT NULL REFERENCES meetings(id),
            kind       TEXT NOT NULL,               -- disagreement | consensus | decision
            role       TEXT NOT NULL,
            round      INTEGER,
            data       TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
INSERT INTO "meeting_events" VALUES(1,'m-20261122-202344-bba2','decision','general',3,'{"recommendation": "[offline] Recommendation from General on Should we expand to Europe?: What decision are we actually making here, and by when?", "rationale": "[offline] Rationale from General on Should we expand to Europe?: Which one of us is best placed to answer this?", "consensus_points": ["[offline] Consensus point from General on Should we expand to Europe?: What would have to be true for this to be the right call?"], "dissent": [], "action_items": [{"task": "[offline] Task from General on Should we expand to Europe?: Who on the board disagrees, and have we really heard them out?", "owner": "general"}, {"task": "[offline] Task from General on Should we expand to Europe?: What is the one next step the Director can take this week?", "owner": "research"}, {"task": "[offline] Task from General on Should we expand to Europe?: What decision are we actually making here, and by when?", "owner": "content"}], "open_questions": ["[offline] Open question from General on Should we expand to Europe?: Which one of us is best placed to answer this?"], "best_effort": false}','2026-11-22T20:23:44+00:00');
CREATE TABLE meeting_participants (
            meeting_id TEXT NOT NULL REFERENCES meetings(id),
            role       TEXT NOT NULL,
            status     TEXT NOT NULL,               -- present | absent
            reason     TEXT,
            PRIMARY KEY (meeting_id, role)
        );
INSERT INTO "meeting_participants" VALUES('m-20261122-202344-bba2','general','present',NULL);
INSERT INTO "meeting_participants" VALUES('m-20261122-202344-bba2','research','present',NULL);
INSERT INTO "meeting_participants" VALUES('m-20261122-202344-bba2','content','present',NULL);
INSERT INTO "meeting_participants" VALUES('m-20261122-202344-bba2','finance','present',NULL);
INSERT INTO "meeting_participants" VALUES('m-20261122-202344-bba2','strategy','present',NULL);
INSERT INTO "meeting_participants" VALUES('m-20261122-202344-bba2','critic','present',NULL);
CREATE TABLE meeting_statements (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            meeting_id TEXT NOT NULL REFERENCES meetings(id),
            round      INTEGER NOT NULL,
            role       TEXT NOT NULL,
            text       TEXT NOT NULL,
            model      TEXT,
            cost_usd   REAL NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL
        );
INSERT INTO "meeting_statements" VALUES(1,'m-20261122-202344-bba2',1,'research','I separate what is known from what is guessed: every claim I make arrives labelled as verified, reported or speculation, with a note of where it came from. On "Board meeting on: Should we expand to Europe?": What does the data actually show, as opposed to what we hope it shows? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(2,'m-20261122-202344-bba2',1,'content','I see every decision through the eyes of the audience: who hears it, what story they tell themselves about it, and whether they would repeat it to a friend. On "Board meeting on: Should we expand to Europe?": What''s the smallest way to test this message with real people? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(3,'m-20261122-202344-bba2',1,'finance','I think in numbers: every idea has a cost, a return and a runway impact, and I want all three on the table before anyone says yes. On "Board meeting on: Should we expand to Europe?": What does this cost, all-in, including our time? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(4,'m-20261122-202344-bba2',1,'strategy','I play the long game: I look six to twelve months ahead and ask what a move makes possible, what it rules out, and how the competition will answer it. On "Board meeting on: Should we expand to Europe?": Where do we want to be in twelve months, and does this get us there? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(5,'m-20261122-202344-bba2',1,'critic','I am the board''s pre-mortem: I imagine the plan has already failed, work backwards to find out why, and bring a fix for every flaw I find. On "Board meeting on: Should we expand to Europe?": What would make us stop, and have we agreed on that in advance? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(6,'m-20261122-202344-bba2',2,'research','I separate what is known from what is guessed: every claim I make arrives labelled as verified, reported or speculation, with a note of where it came from. On "Board meeting on: Should we expand to Europe?": What is the cheapest experiment that would give us real data? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(7,'m-20261122-202344-bba2',2,'content','I see every decision through the eyes of the audience: who hears it, what story they tell themselves about it, and whether they would repeat it to a friend. On "Board meeting on: Should we expand to Europe?": Who exactly is this for, and what do they care about this week? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(8,'m-20261122-202344-bba2',2,'finance','I think in numbers: every idea has a cost, a return and a runway impact, and I want all three on the table before anyone says yes. On "Board meeting on: Should we expand to Europe?": How many months of runway does this use up? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(9,'m-20261122-202344-bba2',2,'strategy','I play the long game: I look six to twelve months ahead and ask what a move makes possible, what it rules out, and how the competition will answer it. On "Board meeting on: Should we expand to Europe?": Where do we want to be in twelve months, and does this get us there? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(10,'m-20261122-202344-bba2',2,'critic','I am the board''s pre-mortem: I imagine the plan has already failed, work backwards to find out why, and bring a fix for every flaw I find. On "Board meeting on: Should we expand to Europe?": What could go wrong here, and how would we notice early? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(11,'m-20261122-202344-bba2',3,'research','I separate what is known from what is guessed: every claim I make arrives labelled as verified, reported or speculation, with a note of where it came from. On "Board meeting on: Should we expand to Europe?": What does the data actually show, as opposed to what we hope it shows? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(12,'m-20261122-202344-bba2',3,'content','I see every decision through the eyes of the audience: who hears it, what story they tell themselves about it, and whether they would repeat it to a friend. On "Board meeting on: Should we expand to Europe?": Who exactly is this for, and what do they care about this week? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(13,'m-20261122-202344-bba2',3,'finance','I think in numbers: every idea has a cost, a return and a runway impact, and I want all three on the table before anyone says yes. On "Board meeting on: Should we expand to Europe?": What has to be true for this to break even? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(14,'m-20261122-202344-bba2',3,'strategy','I play the long game: I look six to twelve months ahead and ask what a move makes possible, what it rules out, and how the competition will answer it. On "Board meeting on: Should we expand to Europe?": How will our strongest competitor respond if we do this? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
INSERT INTO "meeting_statements" VALUES(15,'m-20261122-202344-bba2',3,'critic','I am the board''s pre-mortem: I imagine the plan has already failed, work backwards to find out why, and bring a fix for every flaw I find. On "Board meeting on: Should we expand to Europe?": What could go wrong here, and how would we notice early? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)','offline',0.0,'2026-11-22T20:23:44+00:00');
CREATE TABLE meetings (
            id           TEXT PRIMARY KEY,
            topic        TEXT NOT NULL,
            roster       TEXT NOT NULL,
            chair        TEXT NOT NULL,
            status       TEXT NOT NULL,             -- running | ended
            stop_reason  TEXT,                      -- completed | converged | budget | deadline | cancelled | error
            error        TEXT,
            agenda       TEXT,
            channel      TEXT,
            chat_id      TEXT,
            thread_id    INTEGER,
            started_at   TEXT NOT NULL,
            ended_at     TEXT,
            cost_usd     REAL NOT NULL DEFAULT 0,
            decision     TEXT,                      -- JSON of board.decision.Decision
            minutes      TEXT                       -- Markdown
        );
INSERT INTO "meetings" VALUES('m-20261122-202344-bba2','Should we expand to Europe?','board','general','ended','completed',NULL,'[offline] Agenda from General on Should we expand to Europe?: What decision are we actually making here, and by when?','console','cli-meeting',NULL,'2026-11-22T20:23:44+00:00','2026-11-22T20:23:44+00:00',0.0,'{"recommendation": "[offline] Recommendation from General on Should we expand to Europe?: What decision are we actually making here, and by when?", "rationale": "[offline] Rationale from General on Should we expand to Europe?: Which one of us is best placed to answer this?", "consensus_points": ["[offline] Consensus point from General on Should we expand to Europe?: What would have to be true for this to be the right call?"], "dissent": [], "action_items": [{"task": "[offline] Task from General on Should we expand to Europe?: Who on the board disagrees, and have we really heard them out?", "owner": "general"}, {"task": "[offline] Task from General on Should we expand to Europe?: What is the one next step the Director can take this week?", "owner": "research"}, {"task": "[offline] Task from General on Should we expand to Europe?: What decision are we actually making here, and by when?", "owner": "content"}], "open_questions": ["[offline] Open question from General on Should we expand to Europe?: Which one of us is best placed to answer this?"], "best_effort": false}','# Board meeting: Should we expand to Europe?

- Meeting: `m-20261122-202344-bba2` (board roster)
- Held: 2026-11-22T20:23:44+00:00 to 2026-11-22T20:23:44+00:00
- Ended because: completed
- Estimated cost: $0.0000
- Present: 🧭 General, 🔬 Research, 📣 Content, 💰 Finance, ♟️ Strategy, 🦉 Critic

## Agenda
[offline] Agenda from General on Should we expand to Europe?: What decision are we actually making here, and by when?

## Round 1

**🔬 Research:** I separate what is known from what is guessed: every claim I make arrives labelled as verified, reported or speculation, with a note of where it came from. On "Board meeting on: Should we expand to Europe?": What does the data actually show, as opposed to what we hope it shows? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**📣 Content:** I see every decision through the eyes of the audience: who hears it, what story they tell themselves about it, and whether they would repeat it to a friend. On "Board meeting on: Should we expand to Europe?": What''s the smallest way to test this message with real people? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**💰 Finance:** I think in numbers: every idea has a cost, a return and a runway impact, and I want all three on the table before anyone says yes. On "Board meeting on: Should we expand to Europe?": What does this cost, all-in, including our time? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**♟️ Strategy:** I play the long game: I look six to twelve months ahead and ask what a move makes possible, what it rules out, and how the competition will answer it. On "Board meeting on: Should we expand to Europe?": Where do we want to be in twelve months, and does this get us there? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**🦉 Critic:** I am the board''s pre-mortem: I imagine the plan has already failed, work backwards to find out why, and bring a fix for every flaw I find. On "Board meeting on: Should we expand to Europe?": What would make us stop, and have we agreed on that in advance? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

## Round 2

**🔬 Research:** I separate what is known from what is guessed: every claim I make arrives labelled as verified, reported or speculation, with a note of where it came from. On "Board meeting on: Should we expand to Europe?": What is the cheapest experiment that would give us real data? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**📣 Content:** I see every decision through the eyes of the audience: who hears it, what story they tell themselves about it, and whether they would repeat it to a friend. On "Board meeting on: Should we expand to Europe?": Who exactly is this for, and what do they care about this week? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**💰 Finance:** I think in numbers: every idea has a cost, a return and a runway impact, and I want all three on the table before anyone says yes. On "Board meeting on: Should we expand to Europe?": How many months of runway does this use up? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**♟️ Strategy:** I play the long game: I look six to twelve months ahead and ask what a move makes possible, what it rules out, and how the competition will answer it. On "Board meeting on: Should we expand to Europe?": Where do we want to be in twelve months, and does this get us there? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**🦉 Critic:** I am the board''s pre-mortem: I imagine the plan has already failed, work backwards to find out why, and bring a fix for every flaw I find. On "Board meeting on: Should we expand to Europe?": What could go wrong here, and how would we notice early? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

## Round 3

**🔬 Research:** I separate what is known from what is guessed: every claim I make arrives labelled as verified, reported or speculation, with a note of where it came from. On "Board meeting on: Should we expand to Europe?": What does the data actually show, as opposed to what we hope it shows? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**📣 Content:** I see every decision through the eyes of the audience: who hears it, what story they tell themselves about it, and whether they would repeat it to a friend. On "Board meeting on: Should we expand to Europe?": Who exactly is this for, and what do they care about this week? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**💰 Finance:** I think in numbers: every idea has a cost, a return and a runway impact, and I want all three on the table before anyone says yes. On "Board meeting on: Should we expand to Europe?": What has to be true for this to break even? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**♟️ Strategy:** I play the long game: I look six to twelve months ahead and ask what a move makes possible, what it rules out, and how the competition will answer it. On "Board meeting on: Should we expand to Europe?": How will our strongest competitor respond if we do this? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

**🦉 Critic:** I am the board''s pre-mortem: I imagine the plan has already failed, work backwards to find out why, and bring a fix for every flaw I find. On "Board meeting on: Should we expand to Europe?": What could go wrong here, and how would we notice early? (offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "anthropic:claude-sonnet-4-6" with ANTHROPIC_API_KEY, or "openai:gpt-4o-mini" with OPENAI_API_KEY, for real answers.)

## Decision
**Recommendation:** [offline] Recommendation from General on Should we expand to Europe?: What decision are we actually making here, and by when?

**Rationale:** [offline] Rationale from General on Should we expand to Europe?: Which one of us is best placed to answer this?

**Agreed:**
- [offline] Consensus point from General on Should we expand to Europe?: What would have to be true for this to be the right call?

**Action items:**
- [ ] [offline] Task from General on Should we expand to Europe?: Who on the board disagrees, and have we really heard them out? (owner: general)
- [ ] [offline] Task from General on Should we expand to Europe?: What is the one next step the Director can take this week? (owner: research)
- [ ] [offline] Task from General on Should we expand to Europe?: What decision are we actually making here, and by when? (owner: content)

**Open questions:**
- [offline] Open question from General on Should we expand to Europe?: Which one of us is best placed to answer this?

');
CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL);
INSERT INTO "schema_migrations" VALUES('0001_sessions','2026-11-22 20:23:44');
INSERT INTO "schema_migrations" VALUES('0002_llm_calls','2026-11-22 20:23:44');
INSERT INTO "schema_migrations" VALUES('0003_tool_calls','2026-11-22 20:23:44');
INSERT INTO "schema_migrations" VALUES('0200_telegram_topics','2026-11-22 20:23:44');
INSERT INTO "schema_migrations" VALUES('0201_inbound_messages','2026-11-22 20:23:44');
INSERT INTO "schema_migrations" VALUES('0100_meetings','2026-11-22 20:23:44');
INSERT INTO "schema_migrations" VALUES('0101_consultations','2026-11-22 20:23:44');
INSERT INTO "schema_migrations" VALUES('0202_inbound_messages_resume','2026-11-22 20:23:44');
CREATE TABLE sessions (
            session_id  TEXT PRIMARY KEY,
            key         TEXT NOT NULL,
            role        TEXT NOT NULL,
            created_at  TEXT NOT NULL,
            archived_at TEXT
        );
INSERT INTO "sessions" VALUES('20261122T202344-general-8de007','main','general','2026-11-22T20:23:44+00:00',NULL);
CREATE TABLE telegram_topics (
            chat_id    TEXT NOT NULL,
            role       TEXT NOT NULL,
            thread_id  INTEGER NOT NULL,
            name       TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (chat_id, role)
        );
INSERT INTO "telegram_topics" VALUES('-1001234567890','finance',42,'💰 Finance','2026-11-22T20:23:44+00:00');
INSERT INTO "telegram_topics" VALUES('-1001234567890','research',43,'🔬 Research','2026-11-22T20:23:44+00:00');
CREATE TABLE tool_calls (
            id           INTEGER PRIMARY KEY,
            ts           TEXT NOT NULL,
            role         TEXT,
            session_key  TEXT,
            meeting_id   TEXT,
            name         TEXT NOT NULL,
            call_id      TEXT,
            args         TEXT,
            ok           INTEGER NOT NULL,
            error        TEXT,
            retryable    INTEGER NOT NULL DEFAULT 0,
            result_bytes INTEGER NOT NULL DEFAULT 0,
            latency_ms   REAL
        );
CREATE UNIQUE INDEX sessions_current ON sessions(key) WHERE archived_at IS NULL;
CREATE INDEX llm_calls_ts ON llm_calls(ts);
CREATE INDEX llm_calls_session ON llm_calls(session_key, ts);
CREATE INDEX tool_calls_ts ON tool_calls(ts);
CREATE INDEX inbound_messages_received ON inbound_messages(channel, received_at);
CREATE INDEX meeting_statements_by_meeting ON meeting_statements(meeting_id, round);
CREATE INDEX meeting_events_by_meeting ON meeting_events(meeting_id, kind);
CREATE INDEX consultations_by_ts ON consultations(ts);
CREATE INDEX inbound_messages_status ON inbound_messages(channel, status);
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('meeting_statements',15);
INSERT INTO "sqlite_sequence" VALUES('meeting_events',1);
COMMIT;
