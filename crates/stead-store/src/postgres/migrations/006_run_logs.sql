-- Run logs shipped to the shared ledger by the host that ran each run, so every host
-- reads every run's output (docs/cluster.md, "Logs from every host").

-- One row per run whose host has shipped (or will never ship) its log.
CREATE TABLE run_logs (
    run_id        BIGINT PRIMARY KEY REFERENCES runs (id),
    -- How many bytes of the log file the ledger holds: chunks cover [0, shipped_bytes).
    shipped_bytes BIGINT NOT NULL DEFAULT 0 CHECK (shipped_bytes >= 0),
    -- The run ended and its log is shipped up to the file's final length (or the cap).
    complete      BOOLEAN NOT NULL DEFAULT FALSE,
    -- The run ended before logs were shipped (it predates this migration): its log is
    -- only on its host, and nothing of it will be shipped.
    kept_on_host  BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at_ms BIGINT NOT NULL
);

-- The shipped bytes, in chunks of at most 256 KiB that start at multiples of 256 KiB:
-- the chunk at byte_offset holds the file's bytes from there on.
CREATE TABLE run_log_chunks (
    run_id      BIGINT NOT NULL REFERENCES run_logs (run_id),
    byte_offset BIGINT NOT NULL CHECK (byte_offset >= 0 AND byte_offset % 262144 = 0),
    data        BYTEA NOT NULL CHECK (octet_length(data) BETWEEN 1 AND 262144),
    PRIMARY KEY (run_id, byte_offset)
);

INSERT INTO run_logs (run_id, complete, kept_on_host, updated_at_ms)
SELECT id, TRUE, TRUE, 0 FROM runs WHERE status NOT IN ('queued', 'running');
