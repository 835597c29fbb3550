-- Issue 43 "Scale" (recall <= 50 ms at 1,000,000 lines): the passage's audience is indexed beside its text, so
-- a search matches only what the asker may see inside the full-text index itself (the audience's doclist is
-- intersected with the words'), instead of ranking everyone's passages and dropping the others' afterwards.
-- The `aud` column holds one token per passage: a fixed 64-character prefix and the hex of its audience (longer
-- than 64 characters, so the porter stemmer leaves it whole; hex, so no two audiences share a token); the
-- search names it with a column filter (`aud : ...`), so a word in a passage's text can never pass for one.
-- The index is contentless (it keeps no copy of the text; recall reads the rows from recall_passages); a
-- passage is never updated, and a deleted one is taken out with the values it was indexed with.
-- Every passage is indexed again here, in the migration's transaction (all or nothing: a start that stops
-- half-way re-indexes from the beginning next time).
DROP TRIGGER recall_passages_index;
DROP TRIGGER recall_passages_forget;
DROP TABLE recall_search;
CREATE VIRTUAL TABLE recall_search USING fts5(
    text, aud, content = '',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO recall_search(rowid, text, aud)
    SELECT id, text, 'audienceaudienceaudienceaudienceaudienceaudienceaudienceaudience' || hex(audience)
    FROM recall_passages;
CREATE TRIGGER recall_passages_index AFTER INSERT ON recall_passages
BEGIN
    INSERT INTO recall_search(rowid, text, aud) VALUES (NEW.id, NEW.text,
        'audienceaudienceaudienceaudienceaudienceaudienceaudienceaudience' || hex(NEW.audience));
END;
CREATE TRIGGER recall_passages_forget AFTER DELETE ON recall_passages
BEGIN
    INSERT INTO recall_search(recall_search, rowid, text, aud) VALUES ('delete', OLD.id, OLD.text,
        'audienceaudienceaudienceaudienceaudienceaudienceaudienceaudience' || hex(OLD.audience));
END;
