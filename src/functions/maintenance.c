/*-------------------------------------------------------------------------
 *
 * maintenance.c
 *		The SQL functions lancelsm_flush, lancelsm_compact and
 *		lancelsm_checkpoint (of one table and of an array of tables).
 *
 * Each runs tasks (src/task/task.c) through the herd of its table
 * (src/task/herd.c); the helpers they share with the other SQL
 * functions are in src/functions/entry.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "task/task.h"
#include "fmgr.h"
#include "functions/entry.h"
#include "functions/option.h"
#include "functions/functions.h"
#include "functions/declared.h"
#include "functions/recording.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "pg_compat.h"

/*
 * maintenance_record: record the outcomes of the ended tasks of a direct
 * call on the server of its first argument, for those of its tables that
 * are declared (src/functions/outcome.c).
 */
static void
maintenance_record(FunctionCallInfo fcinfo, LsmTask **tasks, int ntasks)
{
	lsm_declared_record_outcomes(fcinfo, &(LsmOutcomeCall) {
		.source = LSM_OUTCOME_DIRECT, .ntables = ntasks,
			.server = text_to_cstring(PG_GETARG_TEXT_PP(0)), .acts = tasks
	});
}

/*
 * maintenance_run: run one task of the given kind on the table of the
 * call's arguments (server, table_name), raising its failure, then record
 * its outcome when the table is declared (src/functions/outcome.c).  An
 * error, the task's failure or the statement's (57014), stages the
 * table's failed outcome before it propagates.
 */
static void
maintenance_run(FunctionCallInfo fcinfo, LsmTaskKind kind)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	   *table_name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	LsmOutcomeCall call = {
		.source = LSM_OUTCOME_DIRECT, .ntables = 1,
		.server = text_to_cstring(PG_GETARG_TEXT_PP(0)),
		.names = &table_name, .kind = kind,
		.stats_started = GetCurrentTimestamp()
	};
	LsmTask    *volatile task = NULL;
	LsmTask    *ended;
	LsmRunRole	role;

	role.declared = lsm_declared_among(fcinfo, call.server, &table_name, 1)[0];
	role.records = lsm_role_records(fcinfo);
	PG_TRY();
	{
		task = lsm_run_on_table(kind, PG_GETARG_TEXT_PP(0),
								PG_GETARG_TEXT_PP(1), false, &role);
	}
	PG_CATCH();
	{
		lsm_outcome_error(fcinfo, &call, cxt);
	}
	PG_END_TRY();
	ended = task;
	maintenance_record(fcinfo, &ended, 1);
}

/*
 * lancelsm_flush(server text, table_name text) RETURNS void
 *
 * Seals every bucket's active memtable of the table into a new L0
 * generation (POST /v1/table/{id}/flush_lsm/; any 2xx succeeds, its body
 * unread).  Retries 429 and 503 (a draining node's too) within
 * lancelsm.retry_budget.  Errors: see docs/troubleshooting.md, "Errors"
 * (HV00R no such table, HV00N unreachable, 28000/42501 key refused,
 * 53000 contention past the budget, 57P03 draining, 57014 timeout/cancel).
 * Protocol: docs/protocol.md, "Maintenance routes".  On a declared table,
 * a success is recorded as the table's outcome (src/functions/outcome.c:
 * not in a read-only transaction, nor without UPDATE on lancelsm_table).
 */
PG_FUNCTION_INFO_V1(lancelsm_flush);
Datum
lancelsm_flush(PG_FUNCTION_ARGS)
{
	maintenance_run(fcinfo, LSM_TASK_FLUSH);
	PG_RETURN_VOID();
}

/*
 * lancelsm_compact(server text, table_name text) RETURNS void
 *
 * Dispatches one background compaction pass per bucket the server can
 * latch (POST /v1/table/{id}/compact_lsm/; any 2xx succeeds, its body
 * unread) and returns at once, without waiting for the merge.  429 (no bucket could be latched)
 * is retried within lancelsm.retry_budget, then raised as 53000; 421 (no
 * claim) raises 55P03.  Other errors, and the outcome of a declared
 * table, as lancelsm_flush.
 */
PG_FUNCTION_INFO_V1(lancelsm_compact);
Datum
lancelsm_compact(PG_FUNCTION_ARGS)
{
	maintenance_run(fcinfo, LSM_TASK_COMPACT);
	PG_RETURN_VOID();
}

/*
 * lancelsm_checkpoint(server text, table_name text) RETURNS void
 *
 * Converges the table's fresh tier into the base table as of the call:
 * flush, read the target watermark, then trigger compaction and poll
 * (right after the predicted end of each pass, src/task/pace.c; else doubling
 * within lancelsm.poll_interval_min..max) until no L0 generation at
 * or below the watermark remains.  Bounded by statement_timeout and query
 * cancel (57014).  421 re-issues from flush within lancelsm.reissue_budget,
 * then raises 55P03; lancelsm.max_idle_polls, when set, raises 53400.
 * A server whose passes end without draining anything is waited for, as
 * the SDK's checkpoint_lsm does; the 57014 of statement_timeout then says
 * so in its detail, as lancelsm_progress does while it waits.
 * Other errors as lancelsm_flush.  Protocol: docs/protocol.md,
 * "The checkpoint loop".  With lancelsm preloaded, a checkpoint of a
 * table another backend of this cluster is checkpointing joins that run
 * when it covers the call, and waits for its outcome without requests of
 * its own (src/task/herd.c): it returns as the run does, or raises the run's
 * failure with the same SQLSTATE and a detail naming the leading backend.
 * On a declared table, a success is recorded as the table's outcome and
 * last_checkpoint_at, as lancelsm_flush records.
 */
PG_FUNCTION_INFO_V1(lancelsm_checkpoint);
Datum
lancelsm_checkpoint(PG_FUNCTION_ARGS)
{
	maintenance_run(fcinfo, LSM_TASK_CHECKPOINT);
	PG_RETURN_VOID();
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
 * checkpoint_many_run: resolve server and run the tasks through their
 * herds, each stopping at the row deadline, wiping the API key on every
 * path.  Errors: those of lsm_config_resolve (42704, 42809, 42501), 57014.
 * Not inlined: its locals must stay out of the caller's PG_TRY frame
 * (-Wclobbered).
 */
static pg_noinline void
checkpoint_many_run(const char *server, LsmTask **tasks, int ntasks)
{
	LsmConfig  *config = lsm_config_resolve(server);

	for (int i = 0; i < ntasks; i++)
	{
		lsm_task_set_config(tasks[i], config);
		lsm_task_set_row_deadline(tasks[i]);
	}
	PG_TRY();
	{
		lsm_herd_run_all(tasks, ntasks, LSM_HERD_JOIN);
	}
	PG_FINALLY();
	{
		lsm_config_wipe(config);
	}
	PG_END_TRY();
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
 * A checkpoint still waiting shortly before statement_timeout (the
 * smaller of 1 s and a tenth of it: lsm_statement_row_deadline) is given
 * up: its row has ok false, 57014 and what it was waiting on (passes that
 * ended without draining anything, a bucket that is not Active); the
 * others keep their rows.  Raises only for the server (42704, 42809,
 * 42501: as lancelsm_flush) and for cancel, or statement_timeout before
 * the rows are out (57014).  Each row of a declared table, a failure too,
 * is recorded as its outcome, as lancelsm_flush records.
 */
PG_FUNCTION_INFO_V1(lancelsm_checkpoint_many);
Datum
lancelsm_checkpoint_many(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lsm_materialize(fcinfo, LSM_CHECKPOINT_ROW_COLS);
	MemoryContext cxt = CurrentMemoryContext;
	char	   *server = text_to_cstring(PG_GETARG_TEXT_PP(0));
	LsmTask   **tasks;
	int			ntasks;
	bool		records = lsm_role_records(fcinfo);
	bool	   *declared;
	char	  **names;

	ntasks = checkpoint_many_tasks(PG_GETARG_ARRAYTYPE_P(1), &tasks);
	names = palloc(Max(ntasks, 1) * sizeof(char *));
	for (int i = 0; i < ntasks; i++)
		names[i] = (char *) tasks[i]->table_name;
	declared = lsm_declared_among(fcinfo, server, names, ntasks);
	for (int i = 0; i < ntasks; i++)
	{
		lsm_task_set_source(tasks[i], LSM_RUN_DIRECT, declared[i]);
		lsm_task_set_records(tasks[i], records);
	}
	PG_TRY();
	{
		checkpoint_many_run(server, tasks, ntasks);
	}
	PG_CATCH();
	{
		lsm_outcome_error(fcinfo, &(LsmOutcomeCall) {
			.source = LSM_OUTCOME_DIRECT, .ntables = ntasks,
				.server = server, .acts = tasks,
				.stats_started = GetCurrentTimestamp()
		}, cxt);
	}
	PG_END_TRY();
	maintenance_record(fcinfo, tasks, ntasks);
	for (int i = 0; i < ntasks; i++)
	{
		Datum		values[LSM_CHECKPOINT_ROW_COLS];
		bool		nulls[LSM_CHECKPOINT_ROW_COLS];

		lsm_log_action(server, tasks[i]);
		lsm_put_row(rsinfo, values, nulls,
					lsm_checkpoint_row_values(tasks[i], values, nulls, 0));
	}
	return (Datum) 0;
}
