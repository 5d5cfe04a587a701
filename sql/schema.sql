-- threadwatch database schema, the latest version, applied in one
-- transaction to an empty database by daemon/store.c. A later version
-- changes this file and adds sql/NNN-name.sql, which migrates a database at
-- version NNN-1 to NNN; every file ends by setting PRAGMA user_version.
--
-- Times are Unix milliseconds. JSON columns hold compact jansson output.

PRAGMA application_id = 1415013474; -- "TWdb": refuse other programs' files

-- The host as the probes saw it: a new row only when the identity (kernel,
-- glibc, CPU and microcode, the hypervisor's views, CPUs, vulnerabilities,
-- capabilities, what ctxsw proved) changed, so the rows are the host's
-- upgrade history; a value learned where it was unknown updates the row.
CREATE TABLE fingerprints (
	id INTEGER PRIMARY KEY,
	first_seen_ms INTEGER NOT NULL,
	last_seen_ms INTEGER NOT NULL,
	identity TEXT NOT NULL CHECK (json_valid(identity)),
	full TEXT NOT NULL CHECK (json_valid(full)), -- the latest reading
	diff TEXT -- what changed since the previous row; NULL on the first
) STRICT;

-- One scheduler cycle: the probes run one after another.
CREATE TABLE cycles (
	id INTEGER PRIMARY KEY,
	started_ms INTEGER NOT NULL,
	ended_ms INTEGER, -- NULL while running (or if the daemon died)
	trigger TEXT NOT NULL CHECK (length(trigger) BETWEEN 1 AND 32),
	waited_s REAL NOT NULL DEFAULT 0 CHECK (waited_s >= 0),
	status TEXT CHECK (length(status) BETWEEN 1 AND 32),
	fingerprint_id INTEGER REFERENCES fingerprints (id)
) STRICT;

-- One probe run. Its document and raw output are in run_docs; retention
-- drops those (and the run's series) after raw_days and records when in
-- pruned_ms, while the run and its samples stay until samples_days.
CREATE TABLE runs (
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
	-- a failed run's kind (crash, timeout, error) and a crash's signal
	failure TEXT CHECK (failure IS NULL OR failure IN ('crash', 'timeout', 'error')),
	term_signal INTEGER CHECK (term_signal IS NULL OR term_signal BETWEEN 1 AND 128),
	CHECK (status = 'ok' OR reason IS NOT NULL),
	CHECK ((status = 'error') = (failure IS NOT NULL))
) STRICT;
CREATE INDEX runs_probe ON runs (probe, id);
CREATE INDEX runs_status ON runs (status, id);
CREATE INDEX runs_started ON runs (started_ms);
CREATE INDEX runs_cycle ON runs (cycle_id);
CREATE INDEX runs_unpruned ON runs (started_ms) WHERE pruned_ms IS NULL;

-- The bulky part of a run, in its own table so that dropping it frees whole
-- pages: the validated document of an ok or skipped run, or an error run's
-- output (at most 64 KiB; an error run has no document).
CREATE TABLE run_docs (
	run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	doc TEXT CHECK (doc IS NULL OR json_valid(doc)),
	raw BLOB CHECK (raw IS NULL OR length(raw) <= 65536)
) STRICT;

-- Runs stored per probe and status: counters for /metrics, never lowered
-- by retention.
CREATE TABLE run_totals (
	probe TEXT NOT NULL,
	status TEXT NOT NULL,
	n INTEGER NOT NULL,
	PRIMARY KEY (probe, status)
) STRICT, WITHOUT ROWID;

-- Scalar metric names ("probe.scalar") and their units, so that a sample
-- row carries a small integer instead of the name.
CREATE TABLE metrics (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 3 AND 129),
	unit TEXT NOT NULL CHECK (length(unit) <= 32)
) STRICT;

-- One scalar of one run. t is the run's started_ms, so that a series query
-- reads this table alone, in (metric, time) order.
CREATE TABLE samples (
	metric_id INTEGER NOT NULL REFERENCES metrics (id),
	t INTEGER NOT NULL,
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	value REAL NOT NULL,
	PRIMARY KEY (metric_id, t, run_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX samples_run ON samples (run_id);

-- A series of one run with its units; its points are in points.
CREATE TABLE series (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
	x_unit TEXT NOT NULL CHECK (length(x_unit) <= 32),
	y_unit TEXT NOT NULL CHECK (length(y_unit) <= 32),
	UNIQUE (run_id, name)
) STRICT;

CREATE TABLE points (
	series_id INTEGER NOT NULL REFERENCES series (id) ON DELETE CASCADE,
	i INTEGER NOT NULL, -- position in the series
	x REAL NOT NULL,
	y REAL NOT NULL,
	PRIMARY KEY (series_id, i)
) STRICT, WITHOUT ROWID;

CREATE TABLE recommendations (
	id INTEGER PRIMARY KEY,
	computed_ms INTEGER NOT NULL,
	verdict TEXT NOT NULL CHECK (verdict IN ('low', 'high')),
	confidence TEXT NOT NULL CHECK (confidence IN ('strong', 'weak', 'none')),
	result TEXT NOT NULL CHECK (json_valid(result)),
	inputs TEXT NOT NULL CHECK (json_valid(inputs))
) STRICT;
CREATE INDEX recommendations_computed ON recommendations (computed_ms);

-- The runs whose documents a recommendation was computed from.
CREATE TABLE recommendation_runs (
	recommendation_id INTEGER NOT NULL REFERENCES recommendations (id) ON DELETE CASCADE,
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	PRIMARY KEY (recommendation_id, run_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX recommendation_runs_run ON recommendation_runs (run_id);

-- How close the host was to its thread and map limits.
CREATE TABLE headroom (
	id INTEGER PRIMARY KEY,
	computed_ms INTEGER NOT NULL,
	data TEXT NOT NULL CHECK (json_valid(data))
) STRICT;
CREATE INDEX headroom_computed ON headroom (computed_ms);

-- Small key/value state the scheduler publishes for the API.
CREATE TABLE state (
	key TEXT PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 64),
	value TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Regressions found by daemon/detect.c (added in version 2 by
-- sql/002-events.sql; see there): a key figure that moved for k runs in a
-- row against the host's own baseline ("step"), or a flip of the
-- recommendation's verdict ("flip"). Kept forever; data is the event as
-- GET /api/v1/events shows it. ref_id is the change's first run or the new
-- recommendation (no foreign key: retention may drop the run).
CREATE TABLE events (
	id INTEGER PRIMARY KEY,
	kind TEXT NOT NULL CHECK (kind IN ('step', 'flip')),
	metric TEXT NOT NULL CHECK (length(metric) BETWEEN 1 AND 129),
	t_ms INTEGER NOT NULL, -- when the change began
	ref_id INTEGER NOT NULL,
	detected_ms INTEGER NOT NULL, -- the run that completed the evidence
	recorded_ms INTEGER NOT NULL,
	data TEXT NOT NULL CHECK (json_valid(data)),
	UNIQUE (metric, ref_id)
) STRICT;
CREATE INDEX events_t ON events (t_ms);

-- What threadwatch-observer saw the host's workloads pay for threads,
-- window after window (daemon/workload_keep.c; added in
-- version 5 by sql/005-workloads.sql). A workload is its key as
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
