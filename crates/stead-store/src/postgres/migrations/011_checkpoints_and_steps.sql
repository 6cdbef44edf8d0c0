-- Checkpoints and completed steps: what a run's command recorded under its idempotency
-- key, so the run's resume and retries see it and skip what was done. Kept by key, not
-- by run (a run's attempts share the key); no foreign key, since the runs that wrote
-- them may be pruned while a later attempt of the key remains. Deleted with the last
-- run of their key.
CREATE TABLE checkpoints (
    idempotency_key TEXT COLLATE "C" NOT NULL,
    name            TEXT COLLATE "C" NOT NULL,
    value           TEXT NOT NULL,
    -- The attempt that set it last.
    run_id          BIGINT NOT NULL,
    set_at_ms       BIGINT NOT NULL,
    PRIMARY KEY (idempotency_key, name)
);

CREATE TABLE steps (
    idempotency_key TEXT COLLATE "C" NOT NULL,
    name            TEXT COLLATE "C" NOT NULL,
    -- The attempt that completed it.
    run_id          BIGINT NOT NULL,
    attempt         BIGINT NOT NULL,
    completed_at_ms BIGINT NOT NULL,
    PRIMARY KEY (idempotency_key, name)
);

-- Which run holds a key now (its newest attempt not ended), read by every write above,
-- and whether a pruned run was the last of its key.
CREATE INDEX runs_by_idempotency_key ON runs (idempotency_key, id);
