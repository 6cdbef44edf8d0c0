-- What a run waited for before its command started (the network, mains power), as its
-- monitor recorded it with the run's end: how long, and in words how the wait ended.
ALTER TABLE runs ADD COLUMN waited_ms INTEGER;
ALTER TABLE runs ADD COLUMN wait_note TEXT;
