-- Every sleep a host woke from, and how long each run slept (docs/recovery.md); the
-- overdue lapse of a job that expects a success within a while (`expect_within`).

ALTER TABLE runs ADD COLUMN slept_ms BIGINT NOT NULL DEFAULT 0 CHECK (slept_ms >= 0);
COMMENT ON COLUMN runs.slept_ms IS 'how long the machine slept while the run ran, in ms';

CREATE TABLE sleeps (
    id            BIGSERIAL PRIMARY KEY,
    machine_id    TEXT NOT NULL,
    host          TEXT NOT NULL,
    started_at_ms BIGINT NOT NULL,
    ended_at_ms   BIGINT NOT NULL,
    duration_ms   BIGINT NOT NULL CHECK (duration_ms >= 0),
    wall_set_ms   BIGINT
);
COMMENT ON TABLE sleeps IS 'every sleep a host''s server lived through, ending when it noticed';
CREATE INDEX sleeps_by_end ON sleeps (ended_at_ms);

ALTER TABLE jobs ADD COLUMN overdue_since_ms BIGINT;
COMMENT ON COLUMN jobs.overdue_since_ms IS 'when the job''s current overdue lapse began';
