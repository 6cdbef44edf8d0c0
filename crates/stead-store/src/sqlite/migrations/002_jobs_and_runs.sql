-- Jobs: the spec is kept whole as JSON (the stead-protocol JobSpec), so new job options
-- need no migration; the columns are what queries select and order by.
CREATE TABLE jobs (
    id               INTEGER PRIMARY KEY,
    name             TEXT NOT NULL UNIQUE,
    spec             TEXT NOT NULL,
    enabled          INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    created_at_ms    INTEGER NOT NULL,
    updated_at_ms    INTEGER NOT NULL,
    -- Interval schedules fire at anchor + k * interval.
    anchor_ms        INTEGER NOT NULL,
    -- Every fire scheduled at or before this instant has been handled (run, skipped or
    -- coalesced). NULL: nothing handled yet; fires count from created_at_ms.
    fired_through_ms INTEGER
) STRICT;

-- Runs: one row per execution, written before its process starts.
CREATE TABLE runs (
    id                     INTEGER PRIMARY KEY,
    -- No foreign key: a run outlives its job, which may be removed.
    job_id                 INTEGER NOT NULL,
    job                    TEXT NOT NULL,
    trigger                TEXT NOT NULL
        CHECK (trigger IN ('scheduled', 'on_demand', 'resume', 'catch_up')),
    scheduled_at_ms        INTEGER,
    idempotency_key        TEXT NOT NULL,
    parent_id              INTEGER REFERENCES runs (id),
    attempt                INTEGER NOT NULL DEFAULT 1,
    machine_id             TEXT NOT NULL,
    boot_id                TEXT NOT NULL,
    monitor_pid            INTEGER,
    monitor_start_identity TEXT,
    status                 TEXT NOT NULL
        CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled',
                          'interrupted', 'skipped')),
    exit_code              INTEGER,
    signal                 INTEGER,
    reason                 TEXT,
    created_at_ms          INTEGER NOT NULL,
    started_at_ms          INTEGER,
    ended_at_ms            INTEGER,
    cancel_requested_at_ms INTEGER,
    log_path               TEXT NOT NULL,
    -- What the monitor runs (argv, cwd, env, timeout), fixed when the run is created so a
    -- later edit of the job never changes a run in flight.
    plan                   TEXT NOT NULL,
    -- The lease epoch of the server that created the row.
    epoch                  INTEGER NOT NULL,
    CHECK ((status IN ('queued', 'running')) = (ended_at_ms IS NULL))
) STRICT;

-- A fire is recorded once per (job, scheduled time), whoever records it.
CREATE UNIQUE INDEX runs_one_per_fire ON runs (job_id, scheduled_at_ms)
    WHERE trigger IN ('scheduled', 'catch_up');
CREATE INDEX runs_active ON runs (status) WHERE status IN ('queued', 'running');
CREATE INDEX runs_by_job ON runs (job, id);
CREATE INDEX runs_by_status ON runs (status, id);
