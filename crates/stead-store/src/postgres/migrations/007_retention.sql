-- Retention (docs/ledger.md, "Retention"): when a run's log was deleted while its row is
-- kept, and the indexes pruning reads by.
ALTER TABLE runs ADD COLUMN log_pruned_at_ms BIGINT;
CREATE INDEX runs_by_job_id ON runs (job_id, id);
CREATE INDEX runs_by_parent ON runs (parent_id) WHERE parent_id IS NOT NULL;
