/*-------------------------------------------------------------------------
 *
 * lancelsm.c
 *		Module entry: _PG_init with the lancelsm.* settings, and the SQL
 *		functions lancelsm_flush, lancelsm_compact and lancelsm_checkpoint.
 *
 * The set-returning stats functions are in src/functions/stats.c, the declared
 * tables and the functions over all of them in src/functions/declared.c, option
 * handling in src/functions/option.c, the checkpoint loop in src/checkpoint/watermark.c and
 * src/checkpoint/task.c, the HTTP client in src/net/http.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <curl/curl.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "functions/entry.h"
#include "checkpoint/herd.h"
#include "settings.h"
#include "miscadmin.h"
#include "functions/option.h"
#include "checkpoint/progress.h"
#include "checkpoint/task.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

#include "pg_compat.h"

PG_MODULE_MAGIC_EXT(.name = "lancelsm", .version = LANCELSM_VERSION);

/* Longest table identifier accepted, in bytes. */
#define LSM_MAX_TABLE_NAME 1024

/*
 * define_int_setting: one integer GUC of lancelsm, settable by any user.
 */
static void
define_int_setting(const char *name, const char *description, int *var,
				   int boot, int min, int max, int flags)
{
	DefineCustomIntVariable(name, description, NULL, var, boot, min, max,
							PGC_USERSET, flags, NULL, NULL, NULL);
}

/*
 * _PG_init: initialise libcurl once per process and define the settings.
 * Installs no signal handler.  Loaded by shared_preload_libraries, it also
 * defines lancelsm.max_progress_entries and lancelsm.max_history_entries
 * (variables of src/checkpoint/progress.c) and has progress.c install the shared
 * memory hooks of progress and history.
 */
void
_PG_init(void)
{
	if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not initialize libcurl")));

	define_int_setting("lancelsm.retry_budget",
					   "Sets how many times one request is retried after 429 or 503 (a draining node's included).",
					   &lsm_retry_budget, 8, 0, 1000, 0);
	define_int_setting("lancelsm.reissue_budget",
					   "Sets how many times a checkpoint starts again from flush after the server node lost its claim (421).",
					   &lsm_reissue_budget, 3, 0, 1000, 0);
	define_int_setting("lancelsm.backoff_base",
					   "Sets the backoff before the first retry or re-issue; it doubles with each further one.",
					   &lsm_backoff_base_ms, 100, 1, 3600 * 1000, GUC_UNIT_MS);
	define_int_setting("lancelsm.backoff_max",
					   "Sets the longest backoff between retries or re-issues.",
					   &lsm_backoff_max_ms, 5000, 1, 3600 * 1000, GUC_UNIT_MS);
	define_int_setting("lancelsm.poll_interval_min",
					   "Sets the shortest wait between checkpoint polls, used right after a compaction trigger or progress.",
					   &lsm_poll_interval_min_ms, 50, 1, 3600 * 1000, GUC_UNIT_MS);
	define_int_setting("lancelsm.poll_interval_max",
					   "Sets the longest wait between checkpoint polls, reached while nothing changes.",
					   &lsm_poll_interval_max_ms, 5000, 1, 3600 * 1000, GUC_UNIT_MS);
	define_int_setting("lancelsm.max_idle_polls",
					   "Sets how many consecutive checkpoint polls without progress and without a running compaction pass fail the checkpoint; 0 disables the bound.",
					   &lsm_max_idle_polls, 0, 0, INT_MAX, 0);
	define_int_setting("lancelsm.max_response_size",
					   "Sets the largest response body accepted from a LanceDB server.",
					   &lsm_max_response_size_kb, 64 * 1024, 1, 1024 * 1024,
					   GUC_UNIT_KB);
	DefineCustomBoolVariable("lancelsm.share_checkpoints",
							 "Sets whether a checkpoint joins a checkpoint of the same table already running on this server, and whether lancelsm_checkpoint_all and lancelsm_checkpoint_due skip such a table; off, every checkpoint runs alone.",
							 NULL, &lsm_share_checkpoints, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	/* PGC_POSTMASTER settings can only exist when loaded at server start */
	if (process_shared_preload_libraries_in_progress)
	{
		DefineCustomIntVariable("lancelsm.max_progress_entries",
								"Sets how many running checkpoints lancelsm_progress can show at once; a checkpoint started when all are in use runs without an entry.",
								NULL, &lsm_max_progress_entries, 256, 0, 100000,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);
		DefineCustomIntVariable("lancelsm.max_history_entries",
								"Sets how many tables' last checkpoint outcome lancelsm_checkpoint_history keeps; when all are in use the oldest outcome is evicted.",
								NULL, &lsm_max_history_entries, 1000, 0, 100000,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);
	}
	lsm_progress_shmem_init();
	lsm_herd_shmem_init();
	MarkGUCPrefixReserved("lancelsm");
}

/*
 * lsm_table_name_problem: why a table identifier is refused (empty, or
 * over LSM_MAX_TABLE_NAME bytes) as a 22023 failure, or NULL when it is
 * acceptable.  Raises nothing.
 */
LsmFailure *
lsm_table_name_problem(const char *name)
{
	size_t		len = strlen(name);

	if (len > 0 && len <= LSM_MAX_TABLE_NAME)
		return NULL;
	if (len == 0)
		return lsm_fault_new(ERRCODE_INVALID_PARAMETER_VALUE, NULL, NULL,
							 LSM_FAULT_EMPTY_TABLE_NAME);
	return lsm_fault_new(ERRCODE_INVALID_PARAMETER_VALUE,
						 psprintf("The name is %zu bytes long; the limit is %d bytes.",
								  len, LSM_MAX_TABLE_NAME),
						 NULL, LSM_FAULT_LONG_TABLE_NAME);
}

/*
 * lsm_table_name_arg: the table identifier argument, checked by
 * lsm_table_name_problem; raises 22023 when it is refused.
 */
static char *
lsm_table_name_arg(text *arg)
{
	char	   *name = text_to_cstring(arg);
	LsmFailure *problem = lsm_table_name_problem(name);

	if (problem)
		lsm_fault_raise(problem);
	return name;
}

static LsmTask *lsm_run_task(LsmTaskKind kind, text *server, text *table,
							 bool include_generation_rows, const char *body);

/*
 * lsm_run_on_table: resolve the server, run one task of the given kind on
 * the table and raise its failure, wiping the API key on every path.
 * Returns the finished task (its stats for LSM_TASK_STATS).
 */
LsmTask *
lsm_run_on_table(LsmTaskKind kind, text *server, text *table,
				 bool include_generation_rows)
{
	return lsm_run_task(kind, server, table, include_generation_rows, NULL);
}

/*
 * lsm_run_with_body: as lsm_run_on_table, for a task whose request
 * carries body (the write spec routes; NULL: no body).
 */
LsmTask *
lsm_run_with_body(LsmTaskKind kind, text *server, text *table,
				  const char *body)
{
	return lsm_run_task(kind, server, table, false, body);
}

/*
 * lsm_run_task: the body of lsm_run_on_table and lsm_run_with_body.
 */
static LsmTask *
lsm_run_task(LsmTaskKind kind, text *server, text *table,
			 bool include_generation_rows, const char *body)
{
	char	   *table_name = lsm_table_name_arg(table);
	LsmConfig  *config = lsm_config_resolve(text_to_cstring(server));
	LsmTask    *task = palloc(sizeof(LsmTask));

	PG_TRY();
	{
		lsm_task_init(task, kind, config, table_name, include_generation_rows);
		lsm_task_set_body(task, body);
		lsm_herd_run_all(&task, 1, LSM_HERD_JOIN);
		if (task->failure)
			lsm_fault_raise(task->failure);
	}
	PG_FINALLY();
	{
		lsm_config_wipe(config);
	}
	PG_END_TRY();
	return task;
}

/*
 * lancelsm_flush(server text, table_name text) RETURNS void
 *
 * Seals every bucket's active memtable of the table into a new L0
 * generation (POST /v1/table/{id}/flush_lsm/, expects 202).  Retries 429
 * and 503 within lancelsm.retry_budget.  Errors: see README.md "Errors"
 * (HV00R no such table, HV00N unreachable, 28000/42501 key refused,
 * 53000 contention past the budget, 57P03 draining, 57014 timeout/cancel).
 * Protocol: docs/protocol.md, "Maintenance routes".
 */
PG_FUNCTION_INFO_V1(lancelsm_flush);
Datum
lancelsm_flush(PG_FUNCTION_ARGS)
{
	lsm_run_on_table(LSM_TASK_FLUSH, PG_GETARG_TEXT_PP(0),
					 PG_GETARG_TEXT_PP(1), false);
	PG_RETURN_VOID();
}

/*
 * lancelsm_compact(server text, table_name text) RETURNS void
 *
 * Dispatches one background compaction pass per bucket the server can
 * latch (POST /v1/table/{id}/compact_lsm/, expects 202) and returns at
 * once, without waiting for the merge.  429 (no bucket could be latched)
 * is retried within lancelsm.retry_budget, then raised as 53000; 421 (no
 * claim) raises 55P03.  Other errors as lancelsm_flush.
 */
PG_FUNCTION_INFO_V1(lancelsm_compact);
Datum
lancelsm_compact(PG_FUNCTION_ARGS)
{
	lsm_run_on_table(LSM_TASK_COMPACT, PG_GETARG_TEXT_PP(0),
					 PG_GETARG_TEXT_PP(1), false);
	PG_RETURN_VOID();
}

/*
 * lancelsm_checkpoint(server text, table_name text) RETURNS void
 *
 * Converges the table's fresh tier into the base table as of the call:
 * flush, read the target watermark, then trigger compaction and poll
 * (right after the predicted end of each pass, src/checkpoint/pace.c; else doubling
 * within lancelsm.poll_interval_min..max) until no L0 generation at
 * or below the watermark remains.  Bounded by statement_timeout and query
 * cancel (57014).  421 re-issues from flush within lancelsm.reissue_budget,
 * then raises 55P03; lancelsm.max_idle_polls, when set, raises 53400.
 * Other errors as lancelsm_flush.  Protocol: docs/protocol.md,
 * "The checkpoint loop".  With lancelsm preloaded, a checkpoint of a
 * table another backend of this cluster is checkpointing joins that run
 * when it covers the call, and waits for its outcome without requests of
 * its own (src/checkpoint/herd.c): it returns as the run does, or raises the run's
 * failure with the same SQLSTATE and a detail naming the leading backend.
 */
PG_FUNCTION_INFO_V1(lancelsm_checkpoint);
Datum
lancelsm_checkpoint(PG_FUNCTION_ARGS)
{
	lsm_run_on_table(LSM_TASK_CHECKPOINT, PG_GETARG_TEXT_PP(0),
					 PG_GETARG_TEXT_PP(1), false);
	PG_RETURN_VOID();
}

/* A table name of the array and where it stood, for finding duplicates. */
typedef struct NamePos
{
	const char *name;
	int			pos;
} NamePos;

/*
 * namepos_cmp: qsort order of NamePos: by name, then by position.
 */
static int
namepos_cmp(const void *a, const void *b)
{
	const NamePos *x = (const NamePos *) a;
	const NamePos *y = (const NamePos *) b;
	int			c = strcmp(x->name, y->name);

	return c != 0 ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/*
 * lsm_duplicate_flags: for each element of names[0..n) (NULL elements are
 * skipped), whether an earlier element has the same name.  Sorting keeps
 * this O(n log n): an array of 100,000 names must not take a quadratic,
 * uninterruptible loop.  Used for table names and index names.
 */
bool *
lsm_duplicate_flags(char **names, int n)
{
	NamePos    *sorted = palloc(Max(n, 1) * sizeof(NamePos));
	bool	   *dup = palloc0(Max(n, 1) * sizeof(bool));
	int			m = 0;

	for (int i = 0; i < n; i++)
		if (names[i])
			sorted[m++] = (NamePos) {names[i], i};
	qsort(sorted, m, sizeof(NamePos), namepos_cmp);
	for (int i = 1; i < m; i++)
		if (strcmp(sorted[i].name, sorted[i - 1].name) == 0)
			dup[sorted[i].pos] = true;
	pfree(sorted);
	return dup;
}

/*
 * checkpoint_many_tasks: one checkpoint task per distinct, non-NULL table
 * name of the array, in order of first appearance, without a config yet.
 * A name that is refused becomes a task already finished with its
 * failure.  Returns the count.  Not inlined: its locals must stay out of
 * the caller's PG_TRY frame (-Wclobbered).
 */
static pg_noinline int
checkpoint_many_tasks(ArrayType *names, LsmTask ***tasks_out)
{
	Datum	   *elems;
	bool	   *elem_nulls;
	int			nelems;
	int			ntasks = 0;
	char	  **cnames;
	bool	   *dup;
	LsmTask   **tasks;
	LsmFailure *problem;

	deconstruct_array(names, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &elem_nulls, &nelems);
	cnames = palloc(Max(nelems, 1) * sizeof(char *));
	for (int i = 0; i < nelems; i++)
	{
		CHECK_FOR_INTERRUPTS();
		cnames[i] = elem_nulls[i] ? NULL : TextDatumGetCString(elems[i]);
	}
	dup = lsm_duplicate_flags(cnames, nelems);
	tasks = palloc0(Max(nelems, 1) * sizeof(LsmTask *));
	for (int i = 0; i < nelems; i++)
	{
		if (cnames[i] == NULL || dup[i])
			continue;
		tasks[ntasks] = palloc(sizeof(LsmTask));
		lsm_task_init(tasks[ntasks], LSM_TASK_CHECKPOINT, NULL, cnames[i],
					  false);
		problem = lsm_table_name_problem(cnames[i]);
		if (problem != NULL)
			lsm_task_set_failure(tasks[ntasks], problem);
		ntasks++;
	}
	*tasks_out = tasks;
	return ntasks;
}

/*
 * lsm_failure_columns: a failure as two text columns, its SQLSTATE and
 * its message ("errmsg: errdetail"), into values/nulls from column i on;
 * both NULL when failure is NULL.  Returns the column after them.
 */
int
lsm_failure_columns(const LsmFailure *f, Datum *values, bool *nulls, int i)
{
	const char *message = NULL;

	if (f != NULL)
		message = f->detail ? psprintf("%s: %s", f->message, f->detail) :
			f->message;
	values[i] = f ? CStringGetTextDatum(unpack_sql_state(f->sqlerrcode)) :
		(Datum) 0;
	nulls[i++] = (f == NULL);
	values[i] = f ? CStringGetTextDatum(message) : (Datum) 0;
	nulls[i++] = (f == NULL);
	return i;
}

/*
 * lsm_checkpoint_row_values: the LSM_CHECKPOINT_ROW_COLS columns of a
 * finished checkpoint task (table_name, ok, sqlstate, message, elapsed,
 * passes, polls) into values/nulls from column i on; elapsed is NULL for
 * a task that never started.  Returns the column after the last one
 * written.
 */
int
lsm_checkpoint_row_values(const LsmTask *task, Datum *values, bool *nulls,
						  int i)
{
	values[i] = CStringGetTextDatum(task->table_name);
	nulls[i++] = false;
	values[i] = BoolGetDatum(task->failure == NULL);
	nulls[i++] = false;
	i = lsm_failure_columns(task->failure, values, nulls, i);
	if (task->failure == NULL && task->note != NULL)
	{
		/* the message of a success is how another backend's run ended it */
		values[i - 1] = CStringGetTextDatum(task->note);
		nulls[i - 1] = false;
	}
	values[i] = DirectFunctionCall2(timestamp_mi,
									TimestampTzGetDatum(task->finished_at),
									TimestampTzGetDatum(task->started_at));
	nulls[i++] = (task->started_at == 0);
	values[i] = Int32GetDatum(task->passes);
	nulls[i++] = false;
	values[i] = Int32GetDatum(task->polls);
	nulls[i++] = false;
	return i;
}

/*
 * lancelsm_checkpoint(server text, table_names text[])
 * RETURNS TABLE (table_name text, ok boolean, sqlstate text, message text,
 *   elapsed interval, passes integer, polls integer)
 *
 * Checkpoints every table of the array concurrently from this backend (one
 * libcurl multi handle, connections reused), each exactly as the
 * single-table lancelsm_checkpoint, with the statement's deadline shared.
 * One row per distinct non-NULL name, in order: ok, or the failure's
 * SQLSTATE and message (errmsg: errdetail); elapsed is NULL for a name
 * refused before any request.  A failing table never stops the others.
 * A table whose checkpoint another backend of this cluster is running is
 * joined as in lancelsm_checkpoint(server, table_name): its row has that
 * run's ok, sqlstate and message (a failure's detail names the leading
 * backend), its own elapsed wait, passes and polls 0, and on success the
 * message "joined the checkpoint of backend N: P passes, Q polls".
 * Raises only for the server (42704, 42809, 42501: as lancelsm_flush) and
 * for cancel or statement_timeout (57014), which end every checkpoint.
 */
PG_FUNCTION_INFO_V1(lancelsm_checkpoint_many);
Datum
lancelsm_checkpoint_many(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lsm_materialize(fcinfo, LSM_CHECKPOINT_ROW_COLS);
	LsmConfig  *config;
	LsmTask   **tasks;
	int			ntasks;

	ntasks = checkpoint_many_tasks(PG_GETARG_ARRAYTYPE_P(1), &tasks);
	config = lsm_config_resolve(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	for (int i = 0; i < ntasks; i++)
		lsm_task_set_config(tasks[i], config);
	PG_TRY();
	{
		lsm_herd_run_all(tasks, ntasks, LSM_HERD_JOIN);
	}
	PG_FINALLY();
	{
		lsm_config_wipe(config);
	}
	PG_END_TRY();
	for (int i = 0; i < ntasks; i++)
	{
		Datum		values[LSM_CHECKPOINT_ROW_COLS];
		bool		nulls[LSM_CHECKPOINT_ROW_COLS];

		lsm_put_row(rsinfo, values, nulls,
					lsm_checkpoint_row_values(tasks[i], values, nulls, 0));
	}
	return (Datum) 0;
}
