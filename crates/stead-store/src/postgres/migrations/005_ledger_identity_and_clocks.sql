-- Which ledger this is: an id made once, with the schema. A run's plan names its ledger
-- by this id and the database's name instead of by URL (a URL may carry a password, and
-- no row may), and a monitor checks that its host's URL leads here.
CREATE TABLE ledger (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    ledger_id     TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);

INSERT INTO ledger (id, ledger_id, created_at_ms)
VALUES (1, gen_random_uuid()::text, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);

-- How far each host's clock was from the database's at its last claim or renewal
-- (positive: the host is ahead). Expiries are judged by the database alone; this is only
-- reported, so a skewed host is told.
ALTER TABLE hosts ADD COLUMN clock_offset_ms BIGINT;

-- Plans written before kept the URL the monitor connected with, password included.
UPDATE runs
SET plan = jsonb_set(
        plan::jsonb, '{ledger}',
        jsonb_build_object('kind', 'postgres',
                           'ledger_id', (SELECT ledger_id FROM ledger),
                           'database', current_database()))::text
WHERE plan::jsonb -> 'ledger' ->> 'kind' = 'postgres';
