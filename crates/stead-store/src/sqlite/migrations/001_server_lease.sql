-- The epoch lease: exactly one row (id = 1). A released row has a NULL owner.
CREATE TABLE server_lease (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    epoch          INTEGER NOT NULL,
    server_id      TEXT,
    token_hash     TEXT,
    pid            INTEGER,
    start_identity TEXT,
    expires_at_ms  INTEGER NOT NULL,
    claimed_at_ms  INTEGER,
    renewed_at_ms  INTEGER,
    CHECK ((server_id IS NULL) = (token_hash IS NULL)
       AND (server_id IS NULL) = (pid IS NULL)
       AND (server_id IS NULL) = (start_identity IS NULL))
) STRICT;

INSERT INTO server_lease (id, epoch, expires_at_ms) VALUES (1, 0, 0);
