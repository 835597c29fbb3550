-- PostgreSQL twin of ../1325_prediction_tallies.sql: the same table, kept in step by one trigger function.
CREATE TABLE prediction_tallies (
    role       TEXT NOT NULL,
    model      TEXT NOT NULL,
    demo       INTEGER NOT NULL,
    bin        INTEGER NOT NULL,
    open_n     BIGINT NOT NULL DEFAULT 0,
    unknown_n  BIGINT NOT NULL DEFAULT 0,
    scored_n   BIGINT NOT NULL DEFAULT 0,
    sum_sq     DOUBLE PRECISION NOT NULL DEFAULT 0,
    sum_p      DOUBLE PRECISION NOT NULL DEFAULT 0,
    came_true  BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (role, model, demo, bin)
);

-- A prediction's reliability bin (scoring.bin_index) when resolved yes or no, else -1.
CREATE FUNCTION sabha_prediction_bin(probability DOUBLE PRECISION, outcome TEXT) RETURNS INTEGER
    LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN outcome IN ('yes', 'no')
                THEN LEAST(floor(round(CAST(probability * 10 AS NUMERIC), 9))::INTEGER, 9) ELSE -1 END
$$;

-- Add (sign 1) or take out (sign -1) one prediction's share of its tallies.
CREATE FUNCTION sabha_prediction_tally(p predictions, sign INTEGER) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    scored INTEGER := CASE WHEN p.outcome IN ('yes', 'no') THEN 1 ELSE 0 END;
    truth INTEGER := CASE WHEN p.outcome = 'yes' THEN 1 ELSE 0 END;
BEGIN
    INSERT INTO prediction_tallies AS t (role, model, demo, bin, open_n, unknown_n, scored_n, sum_sq, sum_p,
                                         came_true)
    VALUES (p.role, coalesce(p.model, ''), CASE WHEN left(p.meeting_id, 5) = 'demo-' THEN 1 ELSE 0 END,
            sabha_prediction_bin(p.probability, p.outcome),
            sign * (CASE WHEN p.outcome IS NULL THEN 1 ELSE 0 END),
            sign * (CASE WHEN p.outcome = 'unknown' THEN 1 ELSE 0 END), sign * scored,
            sign * scored * (p.probability - truth) * (p.probability - truth), sign * scored * p.probability,
            sign * truth)
    ON CONFLICT (role, model, demo, bin) DO UPDATE SET
        open_n = t.open_n + excluded.open_n, unknown_n = t.unknown_n + excluded.unknown_n,
        scored_n = t.scored_n + excluded.scored_n, sum_sq = t.sum_sq + excluded.sum_sq,
        sum_p = t.sum_p + excluded.sum_p, came_true = t.came_true + excluded.came_true;
END;
$$;

CREATE FUNCTION sabha_prediction_tallies() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.role IS NOT DISTINCT FROM NEW.role AND OLD.model IS NOT DISTINCT FROM NEW.model
            AND OLD.meeting_id IS NOT DISTINCT FROM NEW.meeting_id
            AND OLD.probability IS NOT DISTINCT FROM NEW.probability
            AND OLD.outcome IS NOT DISTINCT FROM NEW.outcome THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM sabha_prediction_tally(OLD, -1);
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        PERFORM sabha_prediction_tally(NEW, 1);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER prediction_tallies_kept AFTER INSERT OR UPDATE OR DELETE ON predictions
    FOR EACH ROW EXECUTE FUNCTION sabha_prediction_tallies();

INSERT INTO prediction_tallies (role, model, demo, bin, open_n, unknown_n, scored_n, sum_sq, sum_p, came_true)
    SELECT role, coalesce(model, ''), CASE WHEN left(meeting_id, 5) = 'demo-' THEN 1 ELSE 0 END,
           sabha_prediction_bin(probability, outcome),
           count(*) FILTER (WHERE outcome IS NULL), count(*) FILTER (WHERE outcome = 'unknown'),
           count(*) FILTER (WHERE outcome IN ('yes', 'no')),
           coalesce(sum(CASE outcome WHEN 'yes' THEN (probability - 1) * (probability - 1)
                                     WHEN 'no' THEN probability * probability END), 0),
           coalesce(sum(probability) FILTER (WHERE outcome IN ('yes', 'no')), 0),
           count(*) FILTER (WHERE outcome = 'yes')
    FROM predictions GROUP BY 1, 2, 3, 4;

CREATE INDEX predictions_resolved ON predictions(resolved_at);
