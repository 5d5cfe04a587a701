-- Migration 2 -> 3: a run may be "not_applicable": the probe
-- measures what this architecture does not have (map32 on arm64). Applied
-- by daemon/store.c in one transaction, foreign keys off, to a database at
-- version 2; a new database gets the same table from sql/schema.sql.
--
-- SQLite cannot change a CHECK constraint in place, so runs is rebuilt
-- (https://www.sqlite.org/lang_altertable.html, "other kinds of table
-- schema changes"): run_docs, samples and series keep referring to runs by
-- name, and the ids are kept.

CREATE TABLE runs_v3 (
	id INTEGER PRIMARY KEY,
	cycle_id INTEGER REFERENCES cycles (id) ON DELETE SET NULL,
	probe TEXT NOT NULL CHECK (length(probe) BETWEEN 1 AND 64),
	started_ms INTEGER NOT NULL,
	ended_ms INTEGER NOT NULL,
	status TEXT NOT NULL CHECK (status IN ('ok', 'skipped', 'not_applicable', 'error')),
	reason TEXT CHECK (status = 'ok' OR length(reason) > 0),
	params TEXT CHECK (params IS NULL OR json_valid(params)),
	loadavg1 REAL,
	steal_pct REAL,
	cpu_s REAL,
	pruned_ms INTEGER,
	CHECK (status = 'ok' OR reason IS NOT NULL)
) STRICT;
INSERT INTO runs_v3 SELECT id, cycle_id, probe, started_ms, ended_ms, status, reason, params,
	loadavg1, steal_pct, cpu_s, pruned_ms FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v3 RENAME TO runs;
CREATE INDEX runs_probe ON runs (probe, id);
CREATE INDEX runs_status ON runs (status, id);
CREATE INDEX runs_started ON runs (started_ms);
CREATE INDEX runs_cycle ON runs (cycle_id);
CREATE INDEX runs_unpruned ON runs (started_ms) WHERE pruned_ms IS NULL;

PRAGMA user_version = 3;
