-- Migration 1 -> 2: the regression events. Applied by
-- daemon/store.c in one transaction to a database at version 1; a new
-- database gets the same table from sql/schema.sql.
--
-- One row per change found by daemon/detect.c: a key figure that moved for
-- k runs in a row against the host's own baseline ("step"), or a flip of
-- the recommendation's verdict ("flip"). Events are few and kept forever,
-- so their count per metric is a counter for /metrics. data holds the
-- event as GET /api/v1/events shows it (daemon/detect.h). ref_id is the
-- change's first run (step) or the new recommendation (flip); no foreign
-- key, because retention may drop that run long before the event.

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

PRAGMA user_version = 2;
