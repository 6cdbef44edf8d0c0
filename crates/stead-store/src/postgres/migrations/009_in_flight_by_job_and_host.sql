-- The runs not yet ended, by job and by host. PostgreSQL has had both indexes since its
-- migration 2 (SQLite gained them in its migration 9, of this name): from here on both
-- ledgers number their migrations alike, one number and name for each change of the
-- schema, each in its backend's SQL.
COMMENT ON INDEX runs_active IS 'the runs not yet ended, by host';
COMMENT ON INDEX runs_active_by_job IS 'the runs not yet ended, by job';
