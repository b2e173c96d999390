/*-------------------------------------------------------------------------
 *
 * declared.c
 *		The declared tables: the catalog of LanceDB tables a DBA manages
 *		(the extension's table lancelsm_table), the functions that add and
 *		remove entries, and the set-returning functions over all of them
 *		behind the views lancelsm_bucket_stats and lancelsm_table_stats and
 *		behind lancelsm_checkpoint_all().
 *
 * The set-returning functions read the declared tables with SPI, resolve
 * each distinct server once without raising (lsm_config_try_resolve), run
 * one task per table concurrently (lsm_task_run_all: one stats read, or one
 * checkpoint, per table) and turn every failure into a row carrying its
 * SQLSTATE and message.  A table that cannot be reached, or whose server is
 * unusable for the current role, never hides the other tables' rows; only
 * PostgreSQL's own errors (cancel, statement_timeout, out of memory) raise.
 * Rows come out in the order of (server, table_name) under the "C"
 * collation.
 *
 * The row builders are those of lancelsm_stats (src/stats.c) and of the
 * multi-table lancelsm_checkpoint (src/lancelsm.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "option.h"
#include "task.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

/* Columns of lancelsm_table_stats. */
#define TABLE_STATS_COLS 12

/* Positions of the lancelsm_stats columns the table totals are made of. */
#define STATS_COL_COMPACTING 7
#define STATS_COL_WAL_LAG 8
#define STATS_COL_L0_GENERATIONS 9
#define STATS_COL_L0_BYTES 10
#define STATS_COL_MEMTABLE_ROWS 15

/* The declared tables of one call, each with its task. */
typedef struct DeclaredSet
{
	int			ntables;
	char	  **servers;		/* server of each table */
	char	  **names;			/* its table_name */
	LsmTask   **tasks;			/* its task, finished after declared_run */
	int			nconfigs;
	LsmConfig **configs;		/* the resolved servers: wipe when done */
} DeclaredSet;

/* Totals of one table over its buckets (lancelsm_table_stats). */
typedef struct DeclaredTotals
{
	int64		l0_generations;
	int64		l0_bytes;
	int64		memtable_rows;
	int64		wal_lag_total;
	int64		wal_lag_max;
	int32		compacting_buckets;
} DeclaredTotals;

/*
 * declared_relation: the schema-qualified, quoted name of lancelsm_table,
 * which lives in the schema of the calling function (the extension's).
 */
static char *
declared_relation(FunctionCallInfo fcinfo)
{
	Oid			nspid = get_func_namespace(fcinfo->flinfo->fn_oid);

	return psprintf("%s.lancelsm_table",
					quote_identifier(get_namespace_name(nspid)));
}

/*
 * declared_modify: run one INSERT or DELETE on lancelsm_table with the
 * query template (%s: the table) and the (server, table_name) parameters,
 * as the current role.  Returns the number of rows it changed.  Errors:
 * 42501 without the privilege on lancelsm_table.
 */
static uint64
declared_modify(FunctionCallInfo fcinfo, const char *template,
				const char *server, const char *table_name)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		args[2];
	uint64		processed;
	int			rc;

	args[0] = CStringGetTextDatum(server);
	args[1] = CStringGetTextDatum(table_name);
	SPI_connect();
	rc = SPI_execute_with_args(psprintf(template, declared_relation(fcinfo)),
							   2, argtypes, args, NULL, false, 0);
	if (rc != SPI_OK_INSERT && rc != SPI_OK_DELETE)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg_internal("SPI_execute_with_args failed: %s",
								 SPI_result_code_string(rc))));
	processed = SPI_processed;
	SPI_finish();
	return processed;
}

/*
 * lancelsm_add_table(server text, table_name text) RETURNS void
 *
 * Declares a LanceDB table of a lancelsm server: inserts (server,
 * table_name) into lancelsm_table.  The server must exist and belong to
 * the lancelsm wrapper; it is not contacted, and neither USAGE nor a user
 * mapping is needed to declare.  Declaring a table again changes nothing
 * and reports a NOTICE (42710).  Errors: 42704 unknown server, 42809 a
 * server of another wrapper, 22023 an empty or over-long table name,
 * 42501 without INSERT on lancelsm_table (EXECUTE is revoked from PUBLIC).
 */
PG_FUNCTION_INFO_V1(lancelsm_add_table);
Datum
lancelsm_add_table(PG_FUNCTION_ARGS)
{
	char	   *server = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *table_name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	LsmFailure *problem = lsm_server_problem(server);

	if (problem == NULL)
		problem = lsm_table_name_problem(table_name);
	if (problem != NULL)
		lsm_fault_raise(problem);
	if (declared_modify(fcinfo,
						"INSERT INTO %s (server, table_name) VALUES ($1, $2) ON CONFLICT DO NOTHING",
						server, table_name) == 0)
		ereport(NOTICE,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("table \"%s\" of server \"%s\" is already declared, skipping",
						table_name, server)));
	PG_RETURN_VOID();
}

/*
 * lancelsm_remove_table(server text, table_name text) RETURNS boolean
 *
 * Removes a declared table; true if it was declared, false otherwise.
 * The server need not exist any more.  Errors: 42501 without DELETE on
 * lancelsm_table (EXECUTE is revoked from PUBLIC).
 */
PG_FUNCTION_INFO_V1(lancelsm_remove_table);
Datum
lancelsm_remove_table(PG_FUNCTION_ARGS)
{
	char	   *server = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *table_name = text_to_cstring(PG_GETARG_TEXT_PP(1));

	PG_RETURN_BOOL(declared_modify(fcinfo,
								   "DELETE FROM %s WHERE server = $1 AND table_name = $2",
								   server, table_name) > 0);
}

/*
 * declared_read: the declared tables, ordered by server and table_name
 * under the "C" collation, into set->servers and set->names, allocated in
 * the caller's memory context.
 * Errors: 42501 without SELECT on lancelsm_table.
 */
static void
declared_read(FunctionCallInfo fcinfo, DeclaredSet *set)
{
	MemoryContext outer = CurrentMemoryContext;
	char	   *query;
	int			rc;

	query = psprintf("SELECT server, table_name FROM %s ORDER BY server COLLATE \"C\", table_name COLLATE \"C\"",
					 declared_relation(fcinfo));
	SPI_connect();
	rc = SPI_execute(query, true, 0);
	if (rc != SPI_OK_SELECT)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg_internal("SPI_execute failed: %s",
								 SPI_result_code_string(rc))));
	set->ntables = (int) SPI_processed;
	set->servers = MemoryContextAlloc(outer,
									  Max(set->ntables, 1) * sizeof(char *));
	set->names = MemoryContextAlloc(outer,
									Max(set->ntables, 1) * sizeof(char *));
	for (int i = 0; i < set->ntables; i++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;

		set->servers[i] = MemoryContextStrdup(outer,
											  SPI_getvalue(tuple, desc, 1));
		set->names[i] = MemoryContextStrdup(outer,
											SPI_getvalue(tuple, desc, 2));
	}
	SPI_finish();
}

/*
 * declared_prepare: initialise one task of the given kind per declared
 * table.  Each distinct server is resolved once, without raising; a table
 * whose server is unusable (42704, 42809, 42501) or whose name is refused
 * (22023) gets a task already finished with that failure.  Not inlined:
 * its locals must stay out of the caller's PG_TRY frame (-Wclobbered).
 */
static pg_noinline void
declared_prepare(FunctionCallInfo fcinfo, LsmTaskKind kind, DeclaredSet *set)
{
	LsmConfig  *config = NULL;
	LsmFailure *server_failure = NULL;

	declared_read(fcinfo, set);
	set->nconfigs = 0;
	set->configs = palloc(Max(set->ntables, 1) * sizeof(LsmConfig *));
	set->tasks = palloc(Max(set->ntables, 1) * sizeof(LsmTask *));
	for (int i = 0; i < set->ntables; i++)
	{
		LsmTask    *task = palloc(sizeof(LsmTask));
		LsmFailure *failure;

		if (i == 0 || strcmp(set->servers[i], set->servers[i - 1]) != 0)
		{
			config = lsm_config_try_resolve(set->servers[i], &server_failure);
			if (config != NULL)
				set->configs[set->nconfigs++] = config;
		}
		lsm_task_init(task, kind, config, set->names[i], false);
		failure = server_failure ? server_failure :
			lsm_table_name_problem(set->names[i]);
		if (failure != NULL)
		{
			task->failure = failure;
			task->phase = LSM_PHASE_DONE;
		}
		set->tasks[i] = task;
	}
}

/*
 * declared_collect: prepare and run one task of the given kind per
 * declared table, concurrently; every task's outcome is in the set.
 * API keys are wiped on every path.  Raises only PostgreSQL's own errors
 * (cancel, statement_timeout: 57014).
 */
static void
declared_collect(FunctionCallInfo fcinfo, LsmTaskKind kind, DeclaredSet *set)
{
	declared_prepare(fcinfo, kind, set);
	PG_TRY();
	{
		lsm_task_run_all(set->tasks, set->ntables);
	}
	PG_FINALLY();
	{
		for (int i = 0; i < set->nconfigs; i++)
			lsm_config_wipe(set->configs[i]);
	}
	PG_END_TRY();
}

/*
 * lancelsm_declared_bucket_stats()
 * RETURNS TABLE (server text, table_name text, <the columns of
 *   lancelsm_stats>)
 *
 * Backs the view lancelsm_bucket_stats: one row per bucket of every
 * declared table, one stats request per table, all concurrently, without
 * generation rows (l0_rows is NULL).  A table that fails, or has no LSM
 * write path, has no rows here; lancelsm_table_stats shows why.  Raises
 * only on cancel or statement_timeout (57014).
 */
PG_FUNCTION_INFO_V1(lancelsm_declared_bucket_stats);
Datum
lancelsm_declared_bucket_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DeclaredSet set;

	InitMaterializedSRF(fcinfo, 0);
	declared_collect(fcinfo, LSM_TASK_STATS, &set);
	for (int i = 0; i < set.ntables; i++)
	{
		const LsmTask *task = set.tasks[i];

		if (task->failure != NULL)
			continue;
		for (int b = 0; b < task->stats->nbuckets; b++)
		{
			Datum		values[2 + LSM_STATS_ROW_COLS];
			bool		nulls[2 + LSM_STATS_ROW_COLS];

			values[0] = CStringGetTextDatum(set.servers[i]);
			values[1] = CStringGetTextDatum(task->table_name);
			nulls[0] = nulls[1] = false;
			lsm_stats_bucket_values(&task->stats->buckets[b], false,
									values + 2, nulls + 2);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
		}
	}
	return (Datum) 0;
}

/*
 * declared_totals: sum and maximum of a table's bucket columns, taken
 * from the lancelsm_stats row of each bucket.  Returns false when a total
 * leaves the bigint range.
 */
static bool
declared_totals(const LsmStats *stats, DeclaredTotals *t)
{
	bool		overflow = false;

	memset(t, 0, sizeof(DeclaredTotals));
	for (int i = 0; i < stats->nbuckets; i++)
	{
		Datum		v[LSM_STATS_ROW_COLS];
		bool		n[LSM_STATS_ROW_COLS];
		int64		lag;

		lsm_stats_bucket_values(&stats->buckets[i], false, v, n);
		lag = DatumGetInt64(v[STATS_COL_WAL_LAG]);
		overflow |= pg_add_s64_overflow(t->l0_generations,
										DatumGetInt64(v[STATS_COL_L0_GENERATIONS]),
										&t->l0_generations);
		overflow |= pg_add_s64_overflow(t->l0_bytes,
										DatumGetInt64(v[STATS_COL_L0_BYTES]),
										&t->l0_bytes);
		if (!n[STATS_COL_MEMTABLE_ROWS])
			overflow |= pg_add_s64_overflow(t->memtable_rows,
											DatumGetInt64(v[STATS_COL_MEMTABLE_ROWS]),
											&t->memtable_rows);
		overflow |= pg_add_s64_overflow(t->wal_lag_total, lag,
										&t->wal_lag_total);
		t->wal_lag_max = (i == 0) ? lag : Max(t->wal_lag_max, lag);
		if (DatumGetBool(v[STATS_COL_COMPACTING]))
			t->compacting_buckets++;
	}
	return !overflow;
}

/*
 * declared_table_row: the lancelsm_table_stats row of one finished stats
 * task: the totals, or NULL totals and the failure's SQLSTATE and message.
 */
static void
declared_table_row(ReturnSetInfo *rsinfo, const char *server,
				   const LsmTask *task)
{
	Datum		values[TABLE_STATS_COLS];
	bool		nulls[TABLE_STATS_COLS];
	const LsmFailure *failure = task->failure;
	DeclaredTotals t;

	if (failure == NULL && !declared_totals(task->stats, &t))
		failure = lsm_fault_new(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
								"read the LSM statistics of",
								task->table_name,
								pstrdup("The totals over the buckets are out of range for type bigint."),
								NULL);
	memset(nulls, failure != NULL, sizeof(nulls));
	values[0] = CStringGetTextDatum(server);
	values[1] = CStringGetTextDatum(task->table_name);
	nulls[0] = nulls[1] = false;
	if (failure == NULL)
	{
		values[2] = BoolGetDatum(task->stats->enabled);
		values[3] = Int32GetDatum(task->stats->nbuckets);
		values[4] = Int64GetDatum(t.l0_generations);
		values[5] = Int64GetDatum(t.l0_bytes);
		values[6] = Int64GetDatum(t.memtable_rows);
		values[7] = Int64GetDatum(t.wal_lag_total);
		values[8] = Int64GetDatum(t.wal_lag_max);
		nulls[8] = (task->stats->nbuckets == 0);
		values[9] = Int32GetDatum(t.compacting_buckets);
	}
	lsm_failure_columns(failure, values + 10, nulls + 10);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * lancelsm_declared_table_stats()
 * RETURNS TABLE (server text, table_name text, lsm_enabled boolean,
 *   buckets integer, l0_generations bigint, l0_bytes bigint,
 *   memtable_rows bigint, wal_lag_total bigint, wal_lag_max bigint,
 *   compacting_buckets integer, error_sqlstate text, error text)
 *
 * Backs the view lancelsm_table_stats: one row per declared table, one
 * stats request per table, all concurrently.  The totals are over the
 * table's buckets: wal_lag_total and wal_lag_max are the sum and the
 * maximum of wal_entry_position_last_seen - replay_after_wal_entry_position
 * (WAL entries not yet covered by a flush; wal_lag_max is NULL without
 * buckets), memtable_rows counts the buckets that report memtables.
 * lsm_enabled is false for a table without an LSM write path (no buckets,
 * zero totals).  A table that fails has NULL in every column but server,
 * table_name, error_sqlstate and error ("errmsg: errdetail").  Raises only
 * on cancel or statement_timeout (57014).
 */
PG_FUNCTION_INFO_V1(lancelsm_declared_table_stats);
Datum
lancelsm_declared_table_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DeclaredSet set;

	InitMaterializedSRF(fcinfo, 0);
	declared_collect(fcinfo, LSM_TASK_STATS, &set);
	for (int i = 0; i < set.ntables; i++)
		declared_table_row(rsinfo, set.servers[i], set.tasks[i]);
	return (Datum) 0;
}

/*
 * lancelsm_checkpoint_all()
 * RETURNS TABLE (server text, table_name text, ok boolean, sqlstate text,
 *   message text, elapsed interval, passes integer, polls integer)
 *
 * Checkpoints every declared table concurrently (one driver over the
 * tables of all servers, the statement's deadline shared), each exactly as
 * lancelsm_checkpoint(server, table_name).  One row per declared table,
 * with the columns of lancelsm_checkpoint(text, text[]) after server; a
 * table whose server is unusable (42704, 42809, 42501) or whose name is
 * refused (22023) gets its failure row with a NULL elapsed.  Raises only
 * on cancel or statement_timeout (57014), which end every checkpoint.
 */
PG_FUNCTION_INFO_V1(lancelsm_checkpoint_all);
Datum
lancelsm_checkpoint_all(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DeclaredSet set;

	InitMaterializedSRF(fcinfo, 0);
	declared_collect(fcinfo, LSM_TASK_CHECKPOINT, &set);
	for (int i = 0; i < set.ntables; i++)
	{
		Datum		values[1 + LSM_CHECKPOINT_ROW_COLS];
		bool		nulls[1 + LSM_CHECKPOINT_ROW_COLS];

		values[0] = CStringGetTextDatum(set.servers[i]);
		nulls[0] = false;
		lsm_checkpoint_row_values(set.tasks[i], values + 1, nulls + 1);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 values, nulls);
	}
	return (Datum) 0;
}
