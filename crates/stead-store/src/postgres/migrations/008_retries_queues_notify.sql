-- Retries, run parameters, queues, pauses and notifications (docs/ledger.md).
ALTER TABLE runs DROP CONSTRAINT runs_trigger_check;
ALTER TABLE runs ADD CONSTRAINT runs_trigger_check
    CHECK (trigger IN ('scheduled', 'on_demand', 'resume', 'catch_up', 'retry', 'after'));
ALTER TABLE runs DROP CONSTRAINT runs_original_trigger_check;
ALTER TABLE runs ADD CONSTRAINT runs_original_trigger_check
    CHECK (original_trigger IN ('scheduled', 'on_demand', 'catch_up', 'retry', 'after'));
-- The run's own environment and arguments, as JSON ({"env": {...}, "args": [...]}).
ALTER TABLE runs ADD COLUMN params TEXT;
-- The queue whose limit it shares (NULL: the host's default limit, if any).
ALTER TABLE runs ADD COLUMN queue TEXT COLLATE "C";
-- 1 while a queued run waits for its time (a retry's delay) or a place in its queue:
-- no monitor has been handed it, and a server coming back leaves it waiting.
ALTER TABLE runs ADD COLUMN waiting SMALLINT NOT NULL DEFAULT 0
    CHECK (waiting IN (0, 1));
-- A waiting retry does not start before this instant.
ALTER TABLE runs ADD COLUMN not_before_ms BIGINT;
ALTER TABLE runs ADD CONSTRAINT runs_waiting_is_queued CHECK (waiting = 0 OR status = 'queued');
CREATE INDEX runs_waiting ON runs (machine_id, id) WHERE waiting = 1;

-- A paused job's fires until then are recorded skipped (NULL: not paused).
ALTER TABLE jobs ADD COLUMN paused_until_ms BIGINT;

CREATE TABLE queues (
    name          TEXT COLLATE "C" PRIMARY KEY,
    parallel      BIGINT NOT NULL CHECK (parallel >= 1),
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);

CREATE TABLE notifiers (
    name          TEXT COLLATE "C" PRIMARY KEY,
    -- The NotifierSpec, whole, as JSON.
    spec          TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);

-- Events written in the same transaction as the outcome that causes them, delivered
-- (in id order per notifier) until their receiver answers 2xx.
CREATE TABLE outbox (
    id                 BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id           TEXT NOT NULL UNIQUE,
    notifier           TEXT COLLATE "C" NOT NULL,
    event              TEXT NOT NULL,
    run_id             BIGINT,
    payload            TEXT NOT NULL,
    created_at_ms      BIGINT NOT NULL,
    attempts           BIGINT NOT NULL DEFAULT 0,
    next_attempt_at_ms BIGINT NOT NULL,
    delivered_at_ms    BIGINT,
    last_error         TEXT
);
CREATE INDEX outbox_pending ON outbox (notifier, id) WHERE delivered_at_ms IS NULL;
CREATE INDEX outbox_delivered ON outbox (delivered_at_ms) WHERE delivered_at_ms IS NOT NULL;
