-- Every sleep the machine woke from, and how long each run slept (docs/recovery.md);
-- the overdue lapse of a job that expects a success within a while (`expect_within`).

-- How long the machine slept while the run ran, in milliseconds.
ALTER TABLE runs ADD COLUMN slept_ms INTEGER NOT NULL DEFAULT 0 CHECK (slept_ms >= 0);

-- One row per sleep a server lived through, placed on the wall clock as it read at the
-- wake (ending when the server noticed it).
CREATE TABLE sleeps (
    id            INTEGER PRIMARY KEY,
    machine_id    TEXT NOT NULL,
    host          TEXT NOT NULL,
    started_at_ms INTEGER NOT NULL,
    ended_at_ms   INTEGER NOT NULL,
    duration_ms   INTEGER NOT NULL CHECK (duration_ms >= 0),
    -- How far the wall clock was set besides (positive: forward), when it was.
    wall_set_ms   INTEGER
) STRICT;
CREATE INDEX sleeps_by_end ON sleeps (ended_at_ms);

-- When the job's current lapse began (its expected success was due); NULL: none.
ALTER TABLE jobs ADD COLUMN overdue_since_ms INTEGER;
