-- Retention (docs/ledger.md, "Retention"): when a run's log was deleted while its row is
-- kept, and the indexes pruning reads by.
ALTER TABLE runs ADD COLUMN log_pruned_at_ms INTEGER;
-- A job's runs by id: its N newest, its latest, and its oldest first.
CREATE INDEX runs_by_job_id ON runs (job_id, id);
-- Whether a run is some run's parent (such a run is kept).
CREATE INDEX runs_by_parent ON runs (parent_id) WHERE parent_id IS NOT NULL;
