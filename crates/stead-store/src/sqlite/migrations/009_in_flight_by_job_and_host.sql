-- The runs not yet ended, by job and by host: what every admission reads (a job's runs
-- in flight, for its concurrency policy) and what a server coming back reads (its own).
-- Without them the first read walked every run the job ever had, so an admission grew
-- slower with each run of its job kept on the ledger. PostgreSQL has had both since its
-- migration 2.
CREATE INDEX runs_active_by_job ON runs (job_id, id) WHERE status IN ('queued', 'running');
CREATE INDEX runs_active_by_machine ON runs (machine_id, id) WHERE status IN ('queued', 'running');
