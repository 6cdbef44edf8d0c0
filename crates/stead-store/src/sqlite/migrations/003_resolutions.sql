-- A resume remembers the trigger of the run first cut (a scheduled run stays scheduled,
-- an on-demand run keeps its mark).
ALTER TABLE runs ADD COLUMN original_trigger TEXT
    CHECK (original_trigger IN ('scheduled', 'on_demand', 'catch_up'));

-- How an interrupted run's debt was settled, exactly once: "resumed as run N",
-- "not resumed: ...", or "landed, proven by receipt". NULL: still owed.
ALTER TABLE runs ADD COLUMN resolution TEXT;
ALTER TABLE runs ADD COLUMN resolved_at_ms INTEGER;

CREATE INDEX runs_owed ON runs (machine_id, id)
    WHERE status = 'interrupted' AND resolution IS NULL;
