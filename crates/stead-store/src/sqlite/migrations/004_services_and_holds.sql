-- Services runs depend on. The spec is kept whole as JSON (stead-protocol ServiceSpec).
CREATE TABLE services (
    name                TEXT PRIMARY KEY,
    spec                TEXT NOT NULL,
    created_at_ms       INTEGER NOT NULL,
    -- A gated restart is under way since then: dependent fires wait, and a dependent run
    -- that fails meanwhile ended because of the restart (interrupted, not failed).
    restarting_since_ms INTEGER
) STRICT;

-- Holds: "I am mid-work on this service". Past its expiry a hold is wedged: reported,
-- blocking nothing.
CREATE TABLE holds (
    name           TEXT PRIMARY KEY,
    service        TEXT NOT NULL,
    acquired_at_ms INTEGER NOT NULL,
    expires_at_ms  INTEGER NOT NULL
) STRICT;
