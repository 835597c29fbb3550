-- Issue 44: track records read in one statement, whatever the number of predictions. Each advisor's tallies
-- (per model, demo or not, and reliability bin) are kept in step with `predictions` by triggers, so every way
-- a prediction is stored, restated, resolved or removed (/resolve, the CLI, the web page, `sabha demo`) moves
-- them in the same transaction and no code path can forget it. `bin` is the reliability bin (0-9, as
-- board.decisions.predictions.scoring.bin_index) of a prediction resolved yes or no, -1 for one open or
-- can't tell. Derived: `sabha state copy` leaves it to the target's triggers.
CREATE TABLE prediction_tallies (
    role       TEXT NOT NULL,
    model      TEXT NOT NULL,                 -- '' when no model was recorded
    demo       INTEGER NOT NULL,              -- 1: a made-up meeting of `sabha demo` (id demo-...)
    bin        INTEGER NOT NULL,
    open_n     INTEGER NOT NULL DEFAULT 0,
    unknown_n  INTEGER NOT NULL DEFAULT 0,
    scored_n   INTEGER NOT NULL DEFAULT 0,    -- resolved yes or no
    sum_sq     REAL NOT NULL DEFAULT 0,       -- sum of (p - outcome)^2 over the scored: the Brier score's numerator
    sum_p      REAL NOT NULL DEFAULT 0,       -- sum of the scored's stated probabilities
    came_true  INTEGER NOT NULL DEFAULT 0,    -- how many of the scored came true
    PRIMARY KEY (role, model, demo, bin)
);
INSERT INTO prediction_tallies (role, model, demo, bin, open_n, unknown_n, scored_n, sum_sq, sum_p, came_true)
    SELECT role, coalesce(model, ''), substr(meeting_id, 1, 5) = 'demo-',
           CASE WHEN outcome IN ('yes', 'no') THEN min(CAST(round(probability * 10, 9) AS INTEGER), 9) ELSE -1 END
               AS b,
           sum(outcome IS NULL), sum(coalesce(outcome = 'unknown', 0)), sum(coalesce(outcome IN ('yes', 'no'), 0)),
           total(CASE outcome WHEN 'yes' THEN (probability - 1) * (probability - 1)
                              WHEN 'no' THEN probability * probability ELSE 0 END),
           total(CASE WHEN outcome IN ('yes', 'no') THEN probability ELSE 0 END), sum(coalesce(outcome = 'yes', 0))
    FROM predictions GROUP BY 1, 2, 3, 4;
CREATE TRIGGER prediction_tallies_add AFTER INSERT ON predictions
BEGIN
    INSERT INTO prediction_tallies (role, model, demo, bin, open_n, unknown_n, scored_n, sum_sq, sum_p, came_true)
    VALUES (NEW.role, coalesce(NEW.model, ''), substr(NEW.meeting_id, 1, 5) = 'demo-',
            CASE WHEN NEW.outcome IN ('yes', 'no') THEN min(CAST(round(NEW.probability * 10, 9) AS INTEGER), 9)
                 ELSE -1 END,
            NEW.outcome IS NULL, coalesce(NEW.outcome = 'unknown', 0), coalesce(NEW.outcome IN ('yes', 'no'), 0),
            CASE NEW.outcome WHEN 'yes' THEN (NEW.probability - 1) * (NEW.probability - 1)
                             WHEN 'no' THEN NEW.probability * NEW.probability ELSE 0 END,
            CASE WHEN NEW.outcome IN ('yes', 'no') THEN NEW.probability ELSE 0 END, coalesce(NEW.outcome = 'yes', 0))
    ON CONFLICT (role, model, demo, bin) DO UPDATE SET
        open_n = open_n + excluded.open_n, unknown_n = unknown_n + excluded.unknown_n,
        scored_n = scored_n + excluded.scored_n, sum_sq = sum_sq + excluded.sum_sq, sum_p = sum_p + excluded.sum_p,
        came_true = came_true + excluded.came_true;
END;
CREATE TRIGGER prediction_tallies_take AFTER DELETE ON predictions
BEGIN
    UPDATE prediction_tallies SET
        open_n = open_n - (OLD.outcome IS NULL), unknown_n = unknown_n - coalesce(OLD.outcome = 'unknown', 0),
        scored_n = scored_n - coalesce(OLD.outcome IN ('yes', 'no'), 0),
        sum_sq = sum_sq - CASE OLD.outcome WHEN 'yes' THEN (OLD.probability - 1) * (OLD.probability - 1)
                                           WHEN 'no' THEN OLD.probability * OLD.probability ELSE 0 END,
        sum_p = sum_p - CASE WHEN OLD.outcome IN ('yes', 'no') THEN OLD.probability ELSE 0 END,
        came_true = came_true - coalesce(OLD.outcome = 'yes', 0)
    WHERE role = OLD.role AND model = coalesce(OLD.model, '') AND demo = (substr(OLD.meeting_id, 1, 5) = 'demo-')
      AND bin = CASE WHEN OLD.outcome IN ('yes', 'no') THEN min(CAST(round(OLD.probability * 10, 9) AS INTEGER), 9)
                     ELSE -1 END;
END;
-- A change (a restated claim's probability or model, a resolution): the old row taken out, the new one added.
CREATE TRIGGER prediction_tallies_move AFTER UPDATE OF role, model, meeting_id, probability, outcome ON predictions
WHEN OLD.role IS NOT NEW.role OR OLD.model IS NOT NEW.model OR OLD.meeting_id IS NOT NEW.meeting_id
     OR OLD.probability IS NOT NEW.probability OR OLD.outcome IS NOT NEW.outcome
BEGIN
    UPDATE prediction_tallies SET
        open_n = open_n - (OLD.outcome IS NULL), unknown_n = unknown_n - coalesce(OLD.outcome = 'unknown', 0),
        scored_n = scored_n - coalesce(OLD.outcome IN ('yes', 'no'), 0),
        sum_sq = sum_sq - CASE OLD.outcome WHEN 'yes' THEN (OLD.probability - 1) * (OLD.probability - 1)
                                           WHEN 'no' THEN OLD.probability * OLD.probability ELSE 0 END,
        sum_p = sum_p - CASE WHEN OLD.outcome IN ('yes', 'no') THEN OLD.probability ELSE 0 END,
        came_true = came_true - coalesce(OLD.outcome = 'yes', 0)
    WHERE role = OLD.role AND model = coalesce(OLD.model, '') AND demo = (substr(OLD.meeting_id, 1, 5) = 'demo-')
      AND bin = CASE WHEN OLD.outcome IN ('yes', 'no') THEN min(CAST(round(OLD.probability * 10, 9) AS INTEGER), 9)
                     ELSE -1 END;
    INSERT INTO prediction_tallies (role, model, demo, bin, open_n, unknown_n, scored_n, sum_sq, sum_p, came_true)
    VALUES (NEW.role, coalesce(NEW.model, ''), substr(NEW.meeting_id, 1, 5) = 'demo-',
            CASE WHEN NEW.outcome IN ('yes', 'no') THEN min(CAST(round(NEW.probability * 10, 9) AS INTEGER), 9)
                 ELSE -1 END,
            NEW.outcome IS NULL, coalesce(NEW.outcome = 'unknown', 0), coalesce(NEW.outcome IN ('yes', 'no'), 0),
            CASE NEW.outcome WHEN 'yes' THEN (NEW.probability - 1) * (NEW.probability - 1)
                             WHEN 'no' THEN NEW.probability * NEW.probability ELSE 0 END,
            CASE WHEN NEW.outcome IN ('yes', 'no') THEN NEW.probability ELSE 0 END, coalesce(NEW.outcome = 'yes', 0))
    ON CONFLICT (role, model, demo, bin) DO UPDATE SET
        open_n = open_n + excluded.open_n, unknown_n = unknown_n + excluded.unknown_n,
        scored_n = scored_n + excluded.scored_n, sum_sq = sum_sq + excluded.sum_sq, sum_p = sum_p + excluded.sum_p,
        came_true = came_true + excluded.came_true;
END;
-- The web page's newest resolutions, read by index.
CREATE INDEX predictions_resolved ON predictions(resolved_at);
