/*-------------------------------------------------------------------------
 *
 * monitoring.c
 *		The SQL functions of the progress and history views, lancelsm_progress,
 *		lancelsm_checkpoint_history and lancelsm_run_history:
 *		lancelsm_progress(), lancelsm_progress_skipped() (for a 1.3
 *		catalog not updated yet), lancelsm_checkpoint_history(), lancelsm_checkpoint_history_reset()
 *		and lancelsm_run_history(); lancelsm_table_counters() and
 *		lancelsm_table_counters_reset(); lancelsm_last_stats(), the
 *		stats last read of each table; lancelsm_info(), how
 *		lancelsm itself stands (versions, preload, registries in use); and
 *		lancelsm_running(), the running phases behind lancelsm_status.
 *
 * What they show is kept in shared memory by src/record/progress.c,
 * which hands out copies (record.h, "in progress.c") taken under its
 * locks; this file only turns those copies into rows.  Text in shared
 * memory is UTF-8, whatever the encoding of the database that wrote it;
 * it is converted here to this database's encoding (src/wire_text.c),
 * what that encoding cannot hold escaped, so that no database can break
 * another's view with a name.
 *
 * The views serve the catalogs of 1.1 and 1.2 (without the database
 * column, and for progress without the waiting bucket), of 1.3 (progress
 * without passes_without_drop and diagnosis) and of 1.4, told apart by
 * their column count (lsm_materialize_versions, lsm_materialize_shapes).  All of this
 * needs lancelsm in shared_preload_libraries: without it each function
 * raises 55000 saying so, but for lancelsm_running(), behind the view
 * lancelsm_status that alerts read: it returns no rows, so that the view
 * works on every server (its phase columns NULL).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "task/task.h"
#include "fmgr.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "functions/functions.h"
#include "miscadmin.h"
#include "settings.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "wire_text.h"
#include "pg_compat.h"

/*
 * monitoring_text: a text datum of a string of shared memory (UTF-8) in
 * this database's encoding, what it cannot hold escaped.
 */
static Datum
monitoring_text(const char *utf8)
{
	bool		lossless;

	return CStringGetTextDatum(lsm_text_from_wire_quiet(utf8, &lossless));
}

/*
 * monitoring_server: the name of server serverid of database dbid as a
 * text datum: its current name when it is a server of this database
 * (followed through ALTER SERVER ... RENAME), else the name stored in
 * shared memory when the entry was written (stored, UTF-8).
 */
static Datum
monitoring_server(Oid dbid, Oid serverid, const char *stored)
{
	if (dbid == MyDatabaseId)
	{
		ForeignServer *server = GetForeignServerExtended(serverid,
														 FSV_MISSING_OK);

		if (server != NULL)
			return CStringGetTextDatum(server->servername);
	}
	return monitoring_text(stored);
}

/* What a monitoring function reads, for its "not available" error. */
typedef enum MonitoringSubject
{
	MONITORING_PROGRESS,
	MONITORING_HISTORY,
	MONITORING_RUNS,
	MONITORING_COUNTERS,
	MONITORING_LAST_STATS
} MonitoringSubject;

/*
 * monitoring_require_shmem: raise the "not available" error (55000), its
 * message naming subject, when lancelsm was not loaded by
 * shared_preload_libraries.
 */
static void
monitoring_require_shmem(MonitoringSubject subject)
{
	if (lsm_progress_available())
		return;
	if (subject == MONITORING_HISTORY)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lancelsm checkpoint history is not available"),
				 errhint("Add lancelsm to shared_preload_libraries and restart the server.")));
	if (subject == MONITORING_LAST_STATS)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lancelsm last stats are not available"),
				 errhint("Add lancelsm to shared_preload_libraries and restart the server.")));
	if (subject == MONITORING_COUNTERS)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lancelsm table counters are not available"),
				 errhint("Add lancelsm to shared_preload_libraries and restart the server.")));
	if (subject == MONITORING_RUNS)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lancelsm run history is not available"),
				 errhint("Add lancelsm to shared_preload_libraries and restart the server.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("lancelsm progress reporting is not available"),
			 errhint("Add lancelsm to shared_preload_libraries and restart the server.")));
}

/*
 * nullable_int8: an int64 datum, NULL when negative.
 */
static Datum
nullable_int8(int64 value, bool *isnull)
{
	*isnull = (value < 0);
	return Int64GetDatum(value);
}

/*
 * database_datum: the name of database dbid as a text datum; NULL (in
 * *isnull) once the database is dropped.
 */
static Datum
database_datum(Oid dbid, bool *isnull)
{
	char	   *name = get_database_name(dbid);

	*isnull = (name == NULL);
	return name ? CStringGetTextDatum(name) : (Datum) 0;
}

/* The shapes of lancelsm_progress, oldest first (progress_row). */
static const int progress_shapes[] = {
	LSM_PROGRESS_COLS_V1_2, LSM_PROGRESS_COLS_V1_3, LSM_PROGRESS_COLS_V1_4
};

/*
 * progress_row: the lancelsm_progress row of one entry (a copy) in shape
 * (an index of progress_shapes): LSM_PROGRESS_COLS_V1_4 columns; without
 * passes_without_drop and diagnosis (the last two) the
 * LSM_PROGRESS_COLS_V1_3 of a 1.3 catalog; without database (the second)
 * and the waiting columns too the LSM_PROGRESS_COLS_V1_2 of 1.1 and 1.2.
 */
static void
progress_row(ReturnSetInfo *rsinfo, const LsmProgressCopy *e, int shape)
{
	Datum		values[LSM_PROGRESS_COLS_V1_4];
	bool		nulls[LSM_PROGRESS_COLS_V1_4] = {0};
	bool		with_db = (shape >= 1);
	int			i = 0;

	values[i++] = Int32GetDatum(e->pid);
	if (with_db)
	{
		values[i] = database_datum(e->dbid, &nulls[i]);
		i++;
	}
	values[i++] = monitoring_text(e->server);
	values[i++] = monitoring_text(e->table_name);
	values[i++] = CStringGetTextDatum(e->phase);
	if (with_db)
	{
		nulls[i] = (e->waiting_bucket[0] == '\0');
		values[i] = nulls[i] ? (Datum) 0 :
			monitoring_text(e->waiting_bucket);
		i++;
		nulls[i] = nulls[i - 1];
		values[i] = nulls[i] ? (Datum) 0 :
			monitoring_text(e->waiting_status);
		i++;
	}
	values[i] = nullable_int8(e->counts.target, &nulls[i]);
	i++;
	values[i] = nullable_int8(e->counts.outstanding, &nulls[i]);
	i++;
	values[i++] = Int32GetDatum(e->counts.passes);
	values[i++] = Int32GetDatum(e->counts.polls);
	values[i++] = Int32GetDatum(e->counts.retries);
	values[i++] = Int32GetDatum(e->counts.reissues);
	values[i++] = TimestampTzGetDatum(e->started_at);
	if (shape >= 2)
	{
		const char *diagnosis = lsm_progress_diagnosis(&e->counts);

		values[i++] = Int32GetDatum(e->counts.stalled_passes);
		nulls[i] = (diagnosis == NULL);
		values[i++] = diagnosis ? CStringGetTextDatum(diagnosis) : (Datum) 0;
	}
	lsm_put_row(rsinfo, values, nulls, i);
}

/*
 * lancelsm_progress()
 * RETURNS TABLE (pid integer, database text, server text, table_name text,
 *   phase text, waiting_bucket text, waiting_bucket_status text,
 *   target_generations bigint, outstanding_generations bigint,
 *   passes integer, polls integer, retries integer, reissues integer,
 *   started_at timestamptz, passes_without_drop integer, diagnosis text)
 *
 * No arguments.  One row per checkpoint running in any backend of any database (one
 * per table of a multi-table checkpoint); database is the name of the
 * checkpoint's database (NULL once dropped).  waiting_bucket and
 * waiting_bucket_status name a bucket whose status is not Active (a
 * Sealed bucket: a drop in flight) that still holds L0 the checkpoint
 * waits for, as of its last poll; NULL when there is none.
 * passes_without_drop counts the compaction passes that ended in a row
 * without draining anything; diagnosis says what that suggests (from 3
 * on: what may keep compacted generations listed), NULL when
 * nothing is amiss: the checkpoint keeps waiting all the same.  Declared
 * by 1.3 without the last two columns, by 1.1 and 1.2 without database
 * and the waiting columns too: this library serves those declarations.  Each
 * row is a consistent copy of its entry; the rows are not one snapshot.
 * Needs shared_preload_libraries (55000 otherwise); 0A000 when declared
 * with another number of columns.
 */
PG_FUNCTION_INFO_V1(lancelsm_progress);
Datum
lancelsm_progress(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	LsmProgressCopy *copy;
	int			n;
	int			shape;

	monitoring_require_shmem(MONITORING_PROGRESS);
	rsinfo = lsm_materialize_shapes(fcinfo, progress_shapes,
									lengthof(progress_shapes), &shape);
	copy = lsm_progress_copy(&n);
	for (int i = 0; i < n; i++)
		progress_row(rsinfo, &copy[i], shape);
	pfree(copy);
	return (Datum) 0;
}

/*
 * lancelsm_progress_skipped() RETURNS bigint
 *
 * No arguments.  How many checkpoints since server start ran without a
 * progress entry because all lancelsm.max_progress_entries were in use,
 * or because their call had already claimed LSM_CALL_MAX_CLAIMS (32)
 * entries.  Needs shared_preload_libraries (55000 otherwise).  Declared
 * by 1.1 to 1.3 only: the update to 1.4 drops it for lancelsm_info's
 * progress_skipped; the symbol stays for a catalog not updated yet.
 */
PG_FUNCTION_INFO_V1(lancelsm_progress_skipped);
Datum
lancelsm_progress_skipped(PG_FUNCTION_ARGS)
{
	monitoring_require_shmem(MONITORING_PROGRESS);
	PG_RETURN_INT64((int64) lsm_progress_skipped_count());
}

/*
 * monitoring_removed_at: the removed_at column of a history or run
 * history row (NULL: its table was not removed) into values/nulls at
 * column i; returns the column after it.
 */
static int
monitoring_removed_at(const LsmHistoryCopy *h, Datum *values, bool *nulls,
					  int i)
{
	values[i] = TimestampTzGetDatum(h->removed_at);
	nulls[i] = (h->removed_at == 0);
	return i + 1;
}

/* The shapes of lancelsm_checkpoint_history, oldest first. */
enum
{
	HISTORY_SHAPE_V1_2, HISTORY_SHAPE_V1_3, HISTORY_SHAPE_V1_5
};

static const int history_shapes[] = {
	LSM_HISTORY_COLS_V1_2, LSM_HISTORY_COLS_V1_3, LSM_HISTORY_COLS_V1_5
};

/*
 * history_row: the lancelsm_checkpoint_history row of one entry in the
 * shape the catalog declares (an index of history_shapes):
 * LSM_HISTORY_COLS_V1_5 columns; without removed_at (the last) the
 * LSM_HISTORY_COLS_V1_3 of a 1.3 or 1.4 catalog; without database (the
 * first) too the LSM_HISTORY_COLS_V1_2 of 1.1 and 1.2.  sqlstate and
 * message are NULL for a success.
 */
static void
history_row(ReturnSetInfo *rsinfo, const LsmHistoryCopy *h, int shape)
{
	Datum		values[LSM_HISTORY_COLS_V1_5];
	bool		nulls[LSM_HISTORY_COLS_V1_5] = {0};
	int			i = 0;

	if (shape >= HISTORY_SHAPE_V1_3)
	{
		values[i] = database_datum(h->dbid, &nulls[i]);
		i++;
	}
	values[i++] = monitoring_text(h->server);
	values[i++] = monitoring_text(h->table_name);
	values[i++] = TimestampTzGetDatum(h->finished_at);
	values[i++] = BoolGetDatum(h->ok);
	nulls[i] = h->ok;
	values[i++] = CStringGetTextDatum(h->sqlstate);
	nulls[i] = h->ok;
	values[i++] = monitoring_text(h->message);
	values[i++] = DirectFunctionCall2(timestamp_mi,
									  TimestampTzGetDatum(h->finished_at),
									  TimestampTzGetDatum(h->started_at));
	values[i++] = Int32GetDatum(h->passes);
	if (shape >= HISTORY_SHAPE_V1_5)
		i = monitoring_removed_at(h, values, nulls, i);
	lsm_put_row(rsinfo, values, nulls, i);
}

/*
 * lancelsm_checkpoint_history()
 * RETURNS TABLE (database text, server text, table_name text,
 *   finished_at timestamptz, ok boolean, sqlstate text, message text,
 *   elapsed interval, passes integer, removed_at timestamptz)
 *
 * No arguments.  The last checkpoint outcome of each (database, server, table_name) kept
 * in shared memory, of every database (database: its name, NULL once
 * dropped), copied under a shared lock; removed_at: when
 * lancelsm_remove_table removed the table (NULL otherwise).  Declared by
 * 1.1 and 1.2 without database, by 1.3 and 1.4 without removed_at: this
 * library serves those declarations too.  Needs shared_preload_libraries
 * (55000 otherwise); 0A000 when declared with another number of columns.
 */
PG_FUNCTION_INFO_V1(lancelsm_checkpoint_history);
Datum
lancelsm_checkpoint_history(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	LsmHistoryCopy *copy;
	int			n;
	int			shape;

	monitoring_require_shmem(MONITORING_HISTORY);
	rsinfo = lsm_materialize_shapes(fcinfo, history_shapes,
									lengthof(history_shapes), &shape);
	copy = lsm_history_copy(&n);
	for (int i = 0; i < n; i++)
		history_row(rsinfo, &copy[i], shape);
	pfree(copy);
	return (Datum) 0;
}

/*
 * lancelsm_checkpoint_history_reset() RETURNS void
 *
 * No arguments.  Forgets every kept checkpoint outcome (of every
 * database).  EXECUTE is revoked from PUBLIC by the extension script
 * (42501 for a role not granted it).  Needs shared_preload_libraries
 * (55000 otherwise).
 */
PG_FUNCTION_INFO_V1(lancelsm_checkpoint_history_reset);
Datum
lancelsm_checkpoint_history_reset(PG_FUNCTION_ARGS)
{
	monitoring_require_shmem(MONITORING_HISTORY);
	lsm_history_reset();
	PG_RETURN_VOID();
}

/*
 * run_action_name: a run's action as lancelsm_run_history shows it.
 */
static const char *
run_action_name(LsmTaskKind kind)
{
	if (kind == LSM_TASK_STATS)
		return "reads";
	if (kind == LSM_TASK_FLUSH)
		return "flush";
	return kind == LSM_TASK_COMPACT ? "compact" : "checkpoint";
}

/*
 * run_source_name: a run's source as lancelsm_run_history shows it.
 */
static const char *
run_source_name(LsmRunSource source)
{
	if (source == LSM_RUN_CHECKPOINT_ALL)
		return "checkpoint_all";
	return source == LSM_RUN_CHECKPOINT_DUE ? "checkpoint_due" : "direct";
}

/*
 * run_row: the lancelsm_run_history row of one run (a copy); sqlstate
 * and message are NULL for a success; removed_at, reads_sent and
 * reads_skipped last unless the catalog is 1.4's (with_removed false),
 * which gets no row of a due run's reads.
 */
static void
run_row(ReturnSetInfo *rsinfo, const LsmRunCopy *run, bool with_removed)
{
	const LsmHistoryCopy *r = &run->outcome;
	Datum		values[LSM_RUN_HISTORY_COLS_V1_5];
	bool		nulls[LSM_RUN_HISTORY_COLS_V1_5] = {0};
	bool		reads = (run->kind == LSM_TASK_STATS);
	int			i = 0;

	if (reads && !with_removed)
		return;
	values[i] = database_datum(r->dbid, &nulls[i]);
	i++;
	nulls[i] = reads;
	values[i++] = monitoring_text(r->server);
	nulls[i] = reads;
	values[i++] = monitoring_text(r->table_name);
	values[i++] = CStringGetTextDatum(run_action_name(run->kind));
	values[i++] = CStringGetTextDatum(run_source_name(run->source));
	values[i++] = TimestampTzGetDatum(r->started_at);
	values[i++] = TimestampTzGetDatum(r->finished_at);
	values[i++] = BoolGetDatum(r->ok);
	nulls[i] = r->ok;
	values[i++] = CStringGetTextDatum(r->sqlstate);
	nulls[i] = r->ok;
	values[i++] = monitoring_text(r->message);
	values[i++] = Int32GetDatum(r->passes);
	values[i++] = Int32GetDatum(run->polls);
	values[i++] = Int32GetDatum(run->requests);
	if (with_removed)
	{
		i = monitoring_removed_at(r, values, nulls, i);
		values[i] = Int32GetDatum(run->reads_sent);
		nulls[i++] = !reads;
		values[i] = Int32GetDatum(run->reads_skipped);
		nulls[i++] = !reads;
	}
	lsm_put_row(rsinfo, values, nulls, i);
}

/*
 * lancelsm_run_history()
 * RETURNS TABLE (database text, server text, table_name text,
 *   action text, source text, started_at timestamptz,
 *   finished_at timestamptz, ok boolean, sqlstate text, message text,
 *   passes integer, polls integer, requests integer,
 *   removed_at timestamptz, reads_sent integer, reads_skipped integer)
 *
 * No arguments.  One row per flush, compact or checkpoint that lancelsm
 * ran on a table and (1.5) one per lancelsm_checkpoint_due() call (action
 * reads, server and table_name NULL, reads_sent the tables whose stats
 * read it sent, requests those reads' requests, reads_skipped the tables
 * it did not read because their next read was not due; both NULL on the
 * other rows; ok false with the SQLSTATE and message of the error that
 * ended the call while it read or acted, 57014 for a cancel or
 * statement_timeout), kept in shared memory (src/record/run.c: at most
 * lancelsm.max_run_history, evicted by the fair rule), of every database
 * (database: its name, NULL once dropped), in the order they ended,
 * copied under a shared lock.  action: flush, compact or checkpoint;
 * source: direct, checkpoint_all or checkpoint_due; sqlstate and message
 * NULL for a success; requests counts every request sent, retries
 * included; removed_at: when lancelsm_remove_table removed the table
 * (NULL otherwise; not in a 1.4 catalog, which this library serves too).
 * Needs shared_preload_libraries (55000 otherwise); 0A000 when declared
 * with another number of columns.
 */
PG_FUNCTION_INFO_V1(lancelsm_run_history);
Datum
lancelsm_run_history(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	LsmRunCopy *copy;
	int			n;
	bool		with_removed;

	monitoring_require_shmem(MONITORING_RUNS);
	rsinfo = lsm_materialize_versions(fcinfo, LSM_RUN_HISTORY_COLS,
									  LSM_RUN_HISTORY_COLS_V1_5,
									  &with_removed);
	copy = lsm_run_copy(&n);
	for (int i = 0; i < n; i++)
		run_row(rsinfo, &copy[i], with_removed);
	pfree(copy);
	return (Datum) 0;
}

/* The actions of the table counters, as their rows name them. */
static const char *const counted_action_names[LSM_COUNTED_ACTIONS] = {
	"flush", "compact", "checkpoint"
};

/*
 * counters_names: the dbid, database, serverid, server (its current name
 * in this database) and table_name columns of a table counters entry (a
 * copy) into values/nulls from column i on; returns the column after
 * them.
 */
static int
counters_names(const LsmCountersCopy *e, Datum *values, bool *nulls, int i)
{
	values[i++] = ObjectIdGetDatum(e->dbid);
	values[i] = database_datum(e->dbid, &nulls[i]);
	i++;
	values[i++] = ObjectIdGetDatum(e->serverid);
	values[i++] = monitoring_server(e->dbid, e->serverid, e->server);
	values[i++] = monitoring_text(e->table_name);
	return i;
}

/*
 * counters_rows: the lancelsm_table_counters rows of one entry (a copy):
 * one per action it counted a run of.
 */
static void
counters_rows(ReturnSetInfo *rsinfo, const LsmCountersCopy *e)
{
	for (int a = 0; a < LSM_COUNTED_ACTIONS; a++)
	{
		const LsmActionCounts *c = &e->actions[a];
		Datum		values[LSM_TABLE_COUNTERS_COLS];
		bool		nulls[LSM_TABLE_COUNTERS_COLS] = {0};
		int			i = 0;

		if (c->runs == 0)
			continue;
		i = counters_names(e, values, nulls, i);
		values[i++] = CStringGetTextDatum(counted_action_names[a]);
		values[i++] = Int64GetDatum(c->runs);
		values[i++] = Int64GetDatum(c->failures);
		values[i++] = Int64GetDatum(c->passes);
		values[i++] = Int64GetDatum(c->polls);
		values[i++] = Int64GetDatum(c->requests);
		values[i++] = Int64GetDatum(c->retries);
		values[i++] = Float8GetDatum((double) c->usecs / USECS_PER_SEC);
		values[i++] = TimestampTzGetDatum(e->since);
		lsm_put_row(rsinfo, values, nulls, i);
	}
}

/*
 * lancelsm_table_counters()
 * RETURNS TABLE (dbid oid, database text, serverid oid, server text,
 *   table_name text, action text, runs bigint, failures bigint,
 *   passes bigint, polls bigint, requests bigint, retries bigint,
 *   seconds double precision, stats_since timestamptz)
 *
 * No arguments.  One row per (database, foreign server, table, action)
 * that lancelsm ran at least once since the table's entry was created
 * (stats_since) or reset, of every database, copied under a shared lock
 * (src/record/counters.c: at most lancelsm.max_table_counters tables,
 * evicted by the fair rule).  dbid and serverid are the OIDs
 * lancelsm_table_counters_reset takes (serverid is an OID of database
 * dbid); database is NULL once dropped; server is the server's name when
 * last counted.  action: flush, compact or checkpoint; failures counts
 * the runs that failed or were interrupted; requests counts every
 * request sent, retries included; seconds is the time spent in the runs.
 * Needs shared_preload_libraries (55000 otherwise); 0A000 when declared
 * with another number of columns.
 */
PG_FUNCTION_INFO_V1(lancelsm_table_counters);
Datum
lancelsm_table_counters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	LsmCountersCopy *copy;
	int			n;

	monitoring_require_shmem(MONITORING_COUNTERS);
	rsinfo = lsm_materialize(fcinfo, LSM_TABLE_COUNTERS_COLS);
	copy = lsm_counters_copy(&n);
	for (int i = 0; i < n; i++)
		counters_rows(rsinfo, &copy[i]);
	pfree(copy);
	return (Datum) 0;
}

/*
 * lancelsm_table_counters_reset(dbid oid DEFAULT NULL,
 *   serverid oid DEFAULT NULL, table_name text DEFAULT NULL)
 * RETURNS bigint
 *
 * Removes the table counters' entries of database dbid, foreign server
 * serverid (an OID of that database, as lancelsm_table_counters shows
 * it) and table table_name; a NULL argument matches any, so that no
 * argument removes every entry, as pg_stat_statements_reset does.
 * Returns how many tables' entries it removed.  A table counted again
 * gets a new entry, with a new stats_since.  EXECUTE is revoked from
 * PUBLIC by the extension script (42501 for a role not granted it).
 * Needs shared_preload_libraries (55000 otherwise).
 */
PG_FUNCTION_INFO_V1(lancelsm_table_counters_reset);
Datum
lancelsm_table_counters_reset(PG_FUNCTION_ARGS)
{
	Oid			dbid = PG_ARGISNULL(0) ? InvalidOid : PG_GETARG_OID(0);
	Oid			serverid = PG_ARGISNULL(1) ? InvalidOid : PG_GETARG_OID(1);
	char	   *table_name = NULL;
	bool		lossless;

	monitoring_require_shmem(MONITORING_COUNTERS);
	if (!PG_ARGISNULL(2))
		table_name = lsm_text_to_wire_quiet(text_to_cstring(PG_GETARG_TEXT_PP(2)),
											&lossless);
	PG_RETURN_INT64(lsm_counters_reset(dbid, serverid, table_name));
}

/*
 * last_stats_row: the lancelsm_last_stats row of one entry (a copy) that
 * holds a stats read; the numbers are NULL when that read failed.
 */
static void
last_stats_row(ReturnSetInfo *rsinfo, const LsmCountersCopy *e)
{
	const LsmStatsRead *r = &e->last_stats;
	Datum		values[LSM_LAST_STATS_COLS];
	bool		nulls[LSM_LAST_STATS_COLS] = {0};
	int			i = 0;
	int			first_number;

	i = counters_names(e, values, nulls, i);
	values[i++] = TimestampTzGetDatum(r->read_at);
	values[i++] = BoolGetDatum(r->ok);
	nulls[i] = r->ok;
	values[i++] = CStringGetTextDatum(r->sqlstate);
	first_number = i;
	values[i++] = BoolGetDatum(r->lsm_enabled);
	values[i++] = Int32GetDatum(r->buckets);
	values[i++] = Int64GetDatum(r->l0_generations);
	values[i++] = Int64GetDatum(r->l0_bytes);
	values[i++] = Int64GetDatum(r->memtable_rows);
	values[i++] = Int64GetDatum(r->wal_lag_total);
	values[i++] = Int64GetDatum(r->wal_lag_max);
	values[i++] = Int32GetDatum(r->compacting_buckets);
	for (int c = first_number; c < i; c++)
		nulls[c] = !r->ok;
	lsm_put_row(rsinfo, values, nulls, i);
}

/*
 * lancelsm_last_stats()
 * RETURNS TABLE (dbid oid, database text, serverid oid, server text,
 *   table_name text, read_at timestamptz, ok boolean, sqlstate text,
 *   lsm_enabled boolean, buckets integer, l0_generations bigint,
 *   l0_bytes bigint, memtable_rows bigint, wal_lag_total bigint,
 *   wal_lag_max bigint, compacting_buckets integer)
 *
 * No arguments.  One row per table whose stats lancelsm read since its
 * table counters entry was created (src/record/counters.c), of every
 * database: the last read of the stats views over declared tables
 * (lancelsm_table_stats, lancelsm_bucket_stats) or of
 * lancelsm_checkpoint_due()'s stats reads, when it ended (read_at), and
 * its totals as lancelsm_table_stats shows them; when that read failed,
 * ok false, its SQLSTATE and NULL numbers.  Sends no request.  Needs
 * shared_preload_libraries (55000 otherwise); 0A000 when declared with
 * another number of columns.
 */
PG_FUNCTION_INFO_V1(lancelsm_last_stats);
Datum
lancelsm_last_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	LsmCountersCopy *copy;
	int			n;

	monitoring_require_shmem(MONITORING_LAST_STATS);
	rsinfo = lsm_materialize(fcinfo, LSM_LAST_STATS_COLS);
	copy = lsm_counters_copy(&n);
	for (int i = 0; i < n; i++)
		if (copy[i].last_stats.read_at != 0)
			last_stats_row(rsinfo, &copy[i]);
	pfree(copy);
	return (Datum) 0;
}

/* The entry counts of lancelsm_info, in its column order. */
#define INFO_COUNTS 6

/*
 * info_counts: the progress, history and herd entries in use and their
 * maximum, in lancelsm_info's column order, into counts; false (counts
 * all 0) when lancelsm was not preloaded.
 */
static bool
info_counts(int counts[INFO_COUNTS])
{
	int			i = 0;
	int			n;
	int			max_progress;
	int			max_history;
	int			herds;
	int			max_herds;
	bool		preloaded = lsm_entries_max(&max_progress, &max_history);

	memset(counts, 0, INFO_COUNTS * sizeof(int));
	if (!preloaded)
		return false;
	pfree(lsm_progress_copy(&n));
	counts[i++] = n;
	counts[i++] = max_progress;
	pfree(lsm_history_copy(&n));
	counts[i++] = n;
	counts[i++] = max_history;
	(void) lsm_herd_usage(&herds, &max_herds);
	counts[i++] = herds;
	counts[i++] = max_herds;
	Assert(i == INFO_COUNTS);
	return true;
}

/*
 * info_outcome_columns: the 1.5 columns of lancelsm_info into
 * values/nulls from column i on: whether outcomes outlive the caller's
 * rollback (lancelsm preloaded with a queue), the outcomes waiting for
 * their worker now, the queue's size, and the outcomes dropped since
 * server start; the counts NULL when not preloaded.  Returns the column
 * after them.
 */
static int
info_outcome_columns(Datum *values, bool *nulls, int i)
{
	int			pending;
	int			max;
	uint64		dropped;
	bool		preloaded = lsm_outcome_queue_usage(&pending, &max, &dropped);

	values[i++] = BoolGetDatum(lsm_outcome_queue_available());
	nulls[i] = !preloaded;
	values[i++] = Int32GetDatum(pending);
	nulls[i] = !preloaded;
	values[i++] = Int32GetDatum(max);
	nulls[i] = !preloaded;
	values[i++] = Int64GetDatum((int64) dropped);
	return i;
}

/*
 * lancelsm_info()
 * RETURNS TABLE (library_version text, catalog_version text,
 *   preloaded boolean, progress_entries integer,
 *   max_progress_entries integer, history_entries integer,
 *   max_history_entries integer, herd_entries integer,
 *   max_herd_entries integer, progress_skipped bigint,
 *   history_evicted bigint, pace_evicted bigint, run_entries integer,
 *   max_run_entries integer, run_evicted bigint, counter_entries integer,
 *   max_counter_entries integer, counter_evicted bigint,
 *   outcomes_survive_rollback boolean, pending_outcomes integer,
 *   max_pending_outcomes integer, outcomes_dropped bigint)
 *
 * No arguments.  One row, as pg_stat_statements_info: the release of the
 * loaded library (X.Y.Z) and the SQL version (X.Y) of the extension's
 * objects in this database (their X.Y differ between a package upgrade
 * and ALTER EXTENSION UPDATE, or until a restart when lancelsm is
 * preloaded); whether lancelsm was
 * loaded by shared_preload_libraries; the entries in use now and their
 * maximum for progress (running checkpoints), history (tables' last
 * outcomes) and herds (checkpoints other backends may join), of the whole
 * cluster; how many checkpoints since server start ran without a progress
 * entry (lancelsm_progress_skipped() before 1.4); how many history and
 * pace entries were evicted since server start (by the fair rule of
 * src/record/shared_key.c: a new table in a full array evicts an
 * entry of the database and role that hold the most); the runs kept by
 * lancelsm_run_history, their maximum and how many were evicted; the
 * tables counted by lancelsm_table_counters, their maximum and how many
 * entries were evicted; since 1.5, whether the outcomes of declared
 * tables outlive the caller's rollback (false: they roll back with it),
 * the outcomes waiting for their worker, the queue's size
 * (lancelsm.max_pending_outcomes) and the outcomes dropped since server
 * start (src/record/outcome_queue.c).  Without shared_preload_libraries,
 * every count is NULL.  Declared by 1.4 with the first 18 columns only.
 * Raises nothing of its own but 0A000 when declared with another number
 * of columns.
 */
PG_FUNCTION_INFO_V1(lancelsm_info);
Datum
lancelsm_info(PG_FUNCTION_ARGS)
{
	bool		is_new;
	ReturnSetInfo *rsinfo = lsm_materialize_versions(fcinfo,
													 LSM_INFO_COLS_V1_4,
													 LSM_INFO_COLS, &is_new);
	Datum		values[LSM_INFO_COLS];
	bool		nulls[LSM_INFO_COLS] = {0};
	char	   *catalog = lsm_catalog_version();
	int			counts[INFO_COUNTS];
	bool		preloaded = info_counts(counts);
	uint64		history_evicted;
	uint64		pace_evicted;
	int			runs;
	int			max_runs;
	uint64		run_evicted;
	int			counters;
	int			max_counters;
	uint64		counter_evicted;
	int			i = 0;

	values[i++] = CStringGetTextDatum(LANCELSM_RELEASE);
	nulls[i] = (catalog == NULL);
	values[i++] = catalog ? CStringGetTextDatum(catalog) : (Datum) 0;
	values[i++] = BoolGetDatum(preloaded);
	for (int c = 0; c < INFO_COUNTS; c++)
	{
		values[i] = Int32GetDatum(counts[c]);
		nulls[i++] = !preloaded;	/* kept only when preloaded */
	}
	nulls[i] = !preloaded;
	values[i++] = Int64GetDatum(preloaded ?
								(int64) lsm_progress_skipped_count() : 0);
	(void) lsm_evicted_counts(&history_evicted, &pace_evicted);
	nulls[i] = !preloaded;
	values[i++] = Int64GetDatum((int64) history_evicted);
	nulls[i] = !preloaded;
	values[i++] = Int64GetDatum((int64) pace_evicted);
	(void) lsm_run_usage(&runs, &max_runs, &run_evicted);
	nulls[i] = !preloaded;
	values[i++] = Int32GetDatum(runs);
	nulls[i] = !preloaded;
	values[i++] = Int32GetDatum(max_runs);
	nulls[i] = !preloaded;
	values[i++] = Int64GetDatum((int64) run_evicted);
	(void) lsm_counters_usage(&counters, &max_counters, &counter_evicted);
	nulls[i] = !preloaded;
	values[i++] = Int32GetDatum(counters);
	nulls[i] = !preloaded;
	values[i++] = Int32GetDatum(max_counters);
	nulls[i] = !preloaded;
	values[i++] = Int64GetDatum((int64) counter_evicted);
	if (is_new)
		i = info_outcome_columns(values, nulls, i);
	lsm_put_row(rsinfo, values, nulls, i);
	return (Datum) 0;
}

/*
 * monitoring_may_see: whether the current user may see a call of a
 * backend whose session user is roleid, as pg_stat_activity shows a
 * backend's query: to that role and the roles that have its privileges
 * (superusers included), and to the members of pg_read_all_stats.
 */
static bool
monitoring_may_see(Oid roleid)
{
	Oid			me = GetUserId();

	return has_privs_of_role(me, roleid) ||
		has_privs_of_role(me, ROLE_PG_READ_ALL_STATS);
}

/*
 * lancelsm_running()
 * RETURNS TABLE (server text, table_name text, pid integer, phase text,
 *   started_at timestamptz)
 *
 * No arguments.  One row per checkpoint running in a backend connected
 * to this database (one per table of a multi-table checkpoint) that the
 * current user may see (monitoring_may_see: its own calls, all of them
 * for pg_read_all_stats), with the phase lancelsm_progress shows; server
 * is its name when the checkpoint started.  No rows without lancelsm in
 * shared_preload_libraries.  Raises 0A000 when declared with another
 * number of columns.
 */
PG_FUNCTION_INFO_V1(lancelsm_running);
Datum
lancelsm_running(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lsm_materialize(fcinfo, LSM_RUNNING_COLS);
	LsmProgressCopy *copy;
	int			n;

	if (!lsm_progress_available())
		return (Datum) 0;
	copy = lsm_progress_copy(&n);
	for (int e = 0; e < n; e++)
	{
		Datum		values[LSM_RUNNING_COLS];
		bool		nulls[LSM_RUNNING_COLS] = {0};
		int			i = 0;

		if (copy[e].dbid != MyDatabaseId || !monitoring_may_see(copy[e].roleid))
			continue;
		values[i++] = monitoring_text(copy[e].server);
		values[i++] = monitoring_text(copy[e].table_name);
		values[i++] = Int32GetDatum(copy[e].pid);
		values[i++] = CStringGetTextDatum(copy[e].phase);
		values[i++] = TimestampTzGetDatum(copy[e].started_at);
		lsm_put_row(rsinfo, values, nulls, i);
	}
	pfree(copy);
	return (Datum) 0;
}
