-- Migration 4 -> 5: the workloads' history (see sql/schema.sql). Applied
-- by daemon/store.c in one transaction to a database at version 4; a new
-- database gets the same tables from sql/schema.sql. Nothing before this
-- version was kept of the workloads, so the tables start empty.

-- What threadwatch-observer saw the host's workloads pay for threads,
-- window after window (daemon/workload_keep.c). A workload is its key as
-- the observer names it (its unit, its own cgroup, or a process's
-- executable and comm), never a PID, so a restarted service keeps its
-- history; ref is the key's hash, a URL path segment; name the label a
-- person and /metrics use.
CREATE TABLE workloads (
	id INTEGER PRIMARY KEY,
	key TEXT NOT NULL UNIQUE CHECK (length(key) BETWEEN 1 AND 16384),
	ref TEXT NOT NULL UNIQUE CHECK (length(ref) = 16),
	kind TEXT NOT NULL CHECK (kind IN ('unit', 'cgroup', 'process', 'other')),
	name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 16384)
) STRICT;

-- One observer window: when it ended, how long it was, how many workloads
-- the observer saw in all (the top workloads_top of them have rows, the
-- rest one row, "other").
CREATE TABLE workload_windows (
	id INTEGER PRIMARY KEY,
	t_ms INTEGER NOT NULL,
	window_s REAL NOT NULL CHECK (window_s > 0),
	seen INTEGER NOT NULL CHECK (seen >= 0)
) STRICT;
CREATE INDEX workload_windows_t ON workload_windows (t_ms);

-- The names of the figures (lib/catalog_workloads.c) by their place in a
-- row's array: a row stores numbers alone, and a figure added later takes
-- the next place, so no row is ever read by the wrong name.
CREATE TABLE workload_figure_names (
	idx INTEGER PRIMARY KEY CHECK (idx >= 0),
	name TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64)
) STRICT;

-- A workload's figures in a window: a JSON array, element idx the figure
-- workload_figure_names names (a number or null). rank 0 is the dearest.
CREATE TABLE workload_figures (
	window_id INTEGER NOT NULL REFERENCES workload_windows (id) ON DELETE CASCADE,
	rank INTEGER NOT NULL CHECK (rank >= 0),
	workload_id INTEGER NOT NULL REFERENCES workloads (id),
	figures TEXT NOT NULL CHECK (json_valid(figures)),
	PRIMARY KEY (window_id, rank)
) STRICT, WITHOUT ROWID;
CREATE INDEX workload_figures_workload ON workload_figures (workload_id, window_id);

-- The latest window whole, as GET /api/v1/workloads serves it: its
-- workloads priced, with their costs, findings and verdicts, and the
-- host's mechanisms (one row, replaced each window).
CREATE TABLE workload_latest (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	window_id INTEGER NOT NULL REFERENCES workload_windows (id) ON DELETE CASCADE,
	doc TEXT NOT NULL CHECK (json_valid(doc))
) STRICT;

PRAGMA user_version = 5;
