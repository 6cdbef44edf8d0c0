-- Jobs and runs as in the SQLite ledger (docs/ledger.md), with the columns SQLite added
-- in later migrations folded in. Times are milliseconds since the Unix epoch, UTC, as
-- the caller's clock gave them (never the database's clock). Names collate "C" so
-- listings order bytewise, as SQLite's do, whatever the database's locale.

-- The spec is kept whole as JSON (the stead-protocol JobSpec), so new job options need
-- no migration; the columns are what queries select and order by.
CREATE TABLE jobs (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name             TEXT COLLATE "C" NOT NULL UNIQUE,
    spec             TEXT NOT NULL,
    enabled          BOOLEAN NOT NULL,
    created_at_ms    BIGINT NOT NULL,
    updated_at_ms    BIGINT NOT NULL,
    -- Interval schedules fire at anchor + k * interval.
    anchor_ms        BIGINT NOT NULL,
    -- Every fire scheduled at or before this instant has been handled (run, skipped or
    -- coalesced). NULL: nothing handled yet; fires count from created_at_ms.
    fired_through_ms BIGINT
);

-- Runs: one row per execution, written before its process starts.
CREATE TABLE runs (
    id                     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- No foreign key: a run outlives its job, which may be removed.
    job_id                 BIGINT NOT NULL,
    job                    TEXT COLLATE "C" NOT NULL,
    trigger                TEXT NOT NULL
        CHECK (trigger IN ('scheduled', 'on_demand', 'resume', 'catch_up')),
    scheduled_at_ms        BIGINT,
    idempotency_key        TEXT NOT NULL,
    parent_id              BIGINT REFERENCES runs (id),
    attempt                BIGINT NOT NULL DEFAULT 1,
    machine_id             TEXT COLLATE "C" NOT NULL,
    boot_id                TEXT NOT NULL,
    monitor_pid            BIGINT,
    monitor_start_identity TEXT,
    status                 TEXT NOT NULL
        CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled',
                          'interrupted', 'skipped')),
    exit_code              INTEGER,
    signal                 INTEGER,
    reason                 TEXT,
    created_at_ms          BIGINT NOT NULL,
    started_at_ms          BIGINT,
    ended_at_ms            BIGINT,
    cancel_requested_at_ms BIGINT,
    log_path               TEXT NOT NULL,
    -- What the monitor runs (argv, cwd, env, timeout), fixed when the run is created so a
    -- later edit of the job never changes a run in flight.
    plan                   TEXT NOT NULL,
    -- The lease epoch (of its host) of the server that created the row.
    epoch                  BIGINT NOT NULL,
    -- A resume remembers the trigger of the run first cut.
    original_trigger       TEXT
        CHECK (original_trigger IN ('scheduled', 'on_demand', 'catch_up')),
    -- How an interrupted run's debt was settled, exactly once: "resumed as run N",
    -- "not resumed: ...", or "landed, proven by receipt". NULL: still owed.
    resolution             TEXT,
    resolved_at_ms         BIGINT,
    -- The token of the server that claimed a queued run (machine_id '' until then), so
    -- a run is started by one host only, and a host can tell its own claims.
    claim_token            TEXT,
    CHECK ((status IN ('queued', 'running')) = (ended_at_ms IS NULL))
);

-- A fire is recorded once per (job, scheduled time), whoever records it.
CREATE UNIQUE INDEX runs_one_per_fire ON runs (job_id, scheduled_at_ms)
    WHERE trigger IN ('scheduled', 'catch_up');
-- Runs in flight: per host (reconciliation at boot) and per job (admission).
CREATE INDEX runs_active ON runs (machine_id, id) WHERE status IN ('queued', 'running');
CREATE INDEX runs_active_by_job ON runs (job_id, id) WHERE status IN ('queued', 'running');
CREATE INDEX runs_by_job ON runs (job, id);
CREATE INDEX runs_by_status ON runs (status, id);
-- The debts a booting server reads for its own host.
CREATE INDEX runs_owed ON runs (machine_id, id)
    WHERE status = 'interrupted' AND resolution IS NULL;
