-- Retries, run parameters, queues, pauses and notifications (docs/ledger.md).
--
-- Two new triggers ('retry', 'after') widen the CHECK on runs.trigger and
-- runs.original_trigger, which SQLite can change only by rebuilding the table: the rows
-- are copied into a table of the new shape, which then takes the old one's name. The
-- self-reference (parent_id) is checked at the commit, once the new table has the name.
PRAGMA defer_foreign_keys = ON;

CREATE TABLE runs_new (
    id                     INTEGER PRIMARY KEY,
    job_id                 INTEGER NOT NULL,
    job                    TEXT NOT NULL,
    trigger                TEXT NOT NULL
        CHECK (trigger IN ('scheduled', 'on_demand', 'resume', 'catch_up', 'retry', 'after')),
    scheduled_at_ms        INTEGER,
    idempotency_key        TEXT NOT NULL,
    parent_id              INTEGER REFERENCES runs_new (id),
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
    plan                   TEXT NOT NULL,
    epoch                  INTEGER NOT NULL,
    original_trigger       TEXT
        CHECK (original_trigger IN ('scheduled', 'on_demand', 'catch_up', 'retry', 'after')),
    resolution             TEXT,
    resolved_at_ms         INTEGER,
    ended_processes        INTEGER,
    log_pruned_at_ms       INTEGER,
    -- The run's own environment and arguments, as JSON ({"env": {...}, "args": [...]}).
    params                 TEXT,
    -- The queue whose limit it shares (NULL: the host's default limit, if any).
    queue                  TEXT,
    -- 1 while a queued run waits for its time (a retry's delay) or a place in its queue:
    -- no monitor has been handed it, and a server coming back leaves it waiting.
    waiting                INTEGER NOT NULL DEFAULT 0 CHECK (waiting IN (0, 1)),
    -- A waiting retry does not start before this instant.
    not_before_ms          INTEGER,
    CHECK ((status IN ('queued', 'running')) = (ended_at_ms IS NULL)),
    CHECK (waiting = 0 OR status = 'queued')
) STRICT;

INSERT INTO runs_new (id, job_id, job, trigger, scheduled_at_ms, idempotency_key, parent_id,
    attempt, machine_id, boot_id, monitor_pid, monitor_start_identity, status, exit_code,
    signal, reason, created_at_ms, started_at_ms, ended_at_ms, cancel_requested_at_ms,
    log_path, plan, epoch, original_trigger, resolution, resolved_at_ms, ended_processes,
    log_pruned_at_ms)
SELECT id, job_id, job, trigger, scheduled_at_ms, idempotency_key, parent_id,
    attempt, machine_id, boot_id, monitor_pid, monitor_start_identity, status, exit_code,
    signal, reason, created_at_ms, started_at_ms, ended_at_ms, cancel_requested_at_ms,
    log_path, plan, epoch, original_trigger, resolution, resolved_at_ms, ended_processes,
    log_pruned_at_ms
FROM runs;

DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;

CREATE UNIQUE INDEX runs_one_per_fire ON runs (job_id, scheduled_at_ms)
    WHERE trigger IN ('scheduled', 'catch_up');
CREATE INDEX runs_active ON runs (status) WHERE status IN ('queued', 'running');
CREATE INDEX runs_by_job ON runs (job, id);
CREATE INDEX runs_by_status ON runs (status, id);
CREATE INDEX runs_owed ON runs (machine_id, id)
    WHERE status = 'interrupted' AND resolution IS NULL;
CREATE INDEX runs_by_job_id ON runs (job_id, id);
CREATE INDEX runs_by_parent ON runs (parent_id) WHERE parent_id IS NOT NULL;
-- The runs a server hands to monitors once their time and their queue allow.
CREATE INDEX runs_waiting ON runs (machine_id, id) WHERE waiting = 1;

-- A paused job's fires until then are recorded skipped (NULL: not paused).
ALTER TABLE jobs ADD COLUMN paused_until_ms INTEGER;

CREATE TABLE queues (
    name          TEXT PRIMARY KEY,
    parallel      INTEGER NOT NULL CHECK (parallel >= 1),
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE notifiers (
    name          TEXT PRIMARY KEY,
    -- The NotifierSpec, whole, as JSON.
    spec          TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
) STRICT;

-- Events written in the same transaction as the outcome that causes them, delivered
-- (in id order per notifier) until their receiver answers 2xx.
CREATE TABLE outbox (
    id                 INTEGER PRIMARY KEY,
    event_id           TEXT NOT NULL UNIQUE,
    notifier           TEXT NOT NULL,
    event              TEXT NOT NULL,
    run_id             INTEGER,
    -- The body POSTed, as JSON.
    payload            TEXT NOT NULL,
    created_at_ms      INTEGER NOT NULL,
    attempts           INTEGER NOT NULL DEFAULT 0,
    next_attempt_at_ms INTEGER NOT NULL,
    delivered_at_ms    INTEGER,
    last_error         TEXT
) STRICT;
CREATE INDEX outbox_pending ON outbox (notifier, id) WHERE delivered_at_ms IS NULL;
CREATE INDEX outbox_delivered ON outbox (delivered_at_ms) WHERE delivered_at_ms IS NOT NULL;
