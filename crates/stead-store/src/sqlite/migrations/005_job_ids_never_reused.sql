-- A job's id is never given to another job. Without AUTOINCREMENT SQLite hands the
-- largest id out again once its row is removed, and a new job would inherit the removed
-- one's runs in flight (an overlap), its fires (the one-run-per-fire index) and its
-- restart dependencies. The table is rebuilt with AUTOINCREMENT, and the sequence starts
-- past every id any run still names.
CREATE TABLE jobs_new (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    name             TEXT NOT NULL UNIQUE,
    spec             TEXT NOT NULL,
    enabled          INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    created_at_ms    INTEGER NOT NULL,
    updated_at_ms    INTEGER NOT NULL,
    anchor_ms        INTEGER NOT NULL,
    fired_through_ms INTEGER
) STRICT;
INSERT INTO jobs_new (id, name, spec, enabled, created_at_ms, updated_at_ms, anchor_ms,
                      fired_through_ms)
    SELECT id, name, spec, enabled, created_at_ms, updated_at_ms, anchor_ms, fired_through_ms
    FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;
DELETE FROM sqlite_sequence WHERE name IN ('jobs', 'jobs_new');
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'jobs', max(coalesce((SELECT max(id) FROM jobs), 0),
                       coalesce((SELECT max(job_id) FROM runs), 0));
