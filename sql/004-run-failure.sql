-- Migration 3 -> 4: what a failed run was, as data. `failure` is the kind
-- (crash: killed by a signal; timeout: killed at the time limit; error:
-- anything else) and `term_signal` a crash's signal number; the reason
-- stays the sentence for people. Applied by daemon/store.c in one
-- transaction to a database at version 3; a new database gets the same
-- columns from sql/schema.sql.
--
-- Runs stored before this version carry only their reason, worded by the
-- runner of the time ("crashed with SIGSEGV", "killed after the 20 s time
-- limit"): they are read once, here, and never again.

ALTER TABLE runs ADD COLUMN failure TEXT
	CHECK (failure IS NULL OR failure IN ('crash', 'timeout', 'error'));
ALTER TABLE runs ADD COLUMN term_signal INTEGER
	CHECK (term_signal IS NULL OR term_signal BETWEEN 1 AND 128);

UPDATE runs SET failure = CASE
		WHEN reason LIKE 'crashed with %' THEN 'crash'
		WHEN reason LIKE 'killed after the %' THEN 'timeout'
		ELSE 'error' END
	WHERE status = 'error';
UPDATE runs SET term_signal = CASE
		WHEN reason LIKE 'crashed with SIGILL%' THEN 4
		WHEN reason LIKE 'crashed with SIGTRAP%' THEN 5
		WHEN reason LIKE 'crashed with SIGABRT%' THEN 6
		WHEN reason LIKE 'crashed with SIGBUS%' THEN 7
		WHEN reason LIKE 'crashed with SIGFPE%' THEN 8
		WHEN reason LIKE 'crashed with SIGKILL%' THEN 9
		WHEN reason LIKE 'crashed with SIGSEGV%' THEN 11
		WHEN reason LIKE 'crashed with SIGTERM%' THEN 15
		WHEN reason LIKE 'crashed with SIGSYS%' THEN 31
		END
	WHERE failure = 'crash';

PRAGMA user_version = 4;
