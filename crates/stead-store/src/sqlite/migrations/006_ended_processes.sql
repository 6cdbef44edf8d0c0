-- How many processes the run's monitor ended (its command's group when it stopped the
-- run, leftovers, and descendants that had left the group); NULL when it ended none.
ALTER TABLE runs ADD COLUMN ended_processes INTEGER;
