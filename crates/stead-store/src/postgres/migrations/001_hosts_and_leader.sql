-- Hosts sharing this ledger, one row each, keyed by machine id. Each row is that host's
-- server lease, with exactly the rules of SQLite's single `server_lease` row: an epoch
-- bumped by every claim, and an owner (all NULL once released). The row is inserted by
-- the host's first claim; a host without a row reads as epoch 0, never claimed.
CREATE TABLE hosts (
    machine_id     TEXT COLLATE "C" PRIMARY KEY,
    -- What `--host` names (STEAD_HOST_NAME, else the system's host name); written by
    -- every connection of the host.
    name           TEXT COLLATE "C" NOT NULL DEFAULT '',
    epoch          BIGINT NOT NULL,
    server_id      TEXT,
    token_hash     TEXT,
    pid            BIGINT,
    start_identity TEXT,
    expires_at_ms  BIGINT NOT NULL,
    claimed_at_ms  BIGINT,
    renewed_at_ms  BIGINT,
    CHECK ((server_id IS NULL) = (token_hash IS NULL)
       AND (server_id IS NULL) = (pid IS NULL)
       AND (server_id IS NULL) = (start_identity IS NULL))
);

-- The one server that schedules for all hosts (exactly one row, id = 1), elected by the
-- same epoch rules as a host's lease; every fire it records is fenced by its epoch. A
-- NULL machine_id: no leader.
CREATE TABLE leader (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    epoch         BIGINT NOT NULL,
    machine_id    TEXT COLLATE "C",
    server_id     TEXT,
    expires_at_ms BIGINT NOT NULL,
    CHECK ((machine_id IS NULL) = (server_id IS NULL))
);

INSERT INTO leader (id, epoch, expires_at_ms) VALUES (1, 0, 0);
