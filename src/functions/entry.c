/*-------------------------------------------------------------------------
 *
 * entry.c
 *		What the SQL functions of this folder share: running one task on a
 *		named server and table, the table-name checks, duplicate names of
 *		an array, the columns of failure and checkpoint rows, and the
 *		server log lines of actions and of failed rows
 *		(functions/entry.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "task/task.h"
#include "functions/entry.h"
#include "functions/option.h"
#include "settings.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

/* Longest table identifier accepted, in bytes. */
#define LSM_MAX_TABLE_NAME 1024

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
							 bool include_generation_rows,
							 const LsmRunRole *role, const char *body);

/*
 * lsm_run_on_table: resolve the server, run one task of the given kind on
 * the table and raise its failure, wiping the API key on every path;
 * role: whether the table is declared and the calling role may record
 * (src/functions/recording.c: its run then counts for a declared table;
 * NULL: neither).  Returns the finished task (its stats for
 * LSM_TASK_STATS).
 */
LsmTask *
lsm_run_on_table(LsmTaskKind kind, text *server, text *table,
				 bool include_generation_rows, const LsmRunRole *role)
{
	return lsm_run_task(kind, server, table, include_generation_rows,
						role, NULL);
}

/*
 * lsm_run_with_body: as lsm_run_on_table, for a task whose request
 * carries body (the write spec routes; NULL: no body).
 */
LsmTask *
lsm_run_with_body(LsmTaskKind kind, text *server, text *table,
				  const char *body)
{
	return lsm_run_task(kind, server, table, false, NULL, body);
}

/*
 * lsm_run_task: the body of lsm_run_on_table and lsm_run_with_body.
 */
static LsmTask *
lsm_run_task(LsmTaskKind kind, text *server, text *table,
			 bool include_generation_rows, const LsmRunRole *role,
			 const char *body)
{
	char	   *table_name = lsm_table_name_arg(table);
	LsmConfig  *config = lsm_config_resolve(text_to_cstring(server));
	LsmTask    *task = palloc(sizeof(LsmTask));

	PG_TRY();
	{
		lsm_task_init(task, kind, config, table_name, include_generation_rows);
		lsm_task_set_body(task, body);
		if (role != NULL)
		{
			lsm_task_set_source(task, LSM_RUN_DIRECT, role->declared);
			lsm_task_set_records(task, role->records);
		}
		lsm_herd_run_all(&task, 1, LSM_HERD_JOIN);
		lsm_log_action(config->server_name, task);
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
 * lsm_failure_message: a failure's message as rows and outcomes show it,
 * "errmsg: errdetail" (errmsg alone without a detail).
 */
const char *
lsm_failure_message(const LsmFailure *f)
{
	return f->detail ? psprintf("%s: %s", f->message, f->detail) : f->message;
}

/*
 * lsm_failure_columns: a failure as two text columns, its SQLSTATE and
 * its message ("errmsg: errdetail"), into values/nulls from column i on;
 * both NULL when failure is NULL.  Returns the column after them.
 */
int
lsm_failure_columns(const LsmFailure *f, Datum *values, bool *nulls, int i)
{
	const char *message = f ? lsm_failure_message(f) : NULL;

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
 * a task that never started.  A task skipped because another backend's
 * run held its table (lsm_herd_skipped) is no success: ok false,
 * sqlstate 55006 (object in use) and its "skipped: ..." note as message,
 * so that no script or alert reads it as a converged table.  Returns the
 * column after the last one written.
 */
int
lsm_checkpoint_row_values(const LsmTask *task, Datum *values, bool *nulls,
						  int i)
{
	bool		skipped = lsm_herd_skipped(task);

	values[i] = CStringGetTextDatum(task->table_name);
	nulls[i++] = false;
	values[i] = BoolGetDatum(task->failure == NULL && !skipped);
	nulls[i++] = false;
	i = lsm_failure_columns(task->failure, values, nulls, i);
	if (skipped)
	{
		values[i - 2] = CStringGetTextDatum(unpack_sql_state(ERRCODE_OBJECT_IN_USE));
		nulls[i - 2] = false;
	}
	if (task->failure == NULL && task->note != NULL)
	{
		/* how another backend's run ended it: joined, or skipped */
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
 * entry_elapsed_ms: how long a finished task ran, in milliseconds; 0 for
 * one that never started.
 */
static double
entry_elapsed_ms(const LsmTask *task)
{
	if (task->started_at == 0)
		return 0;
	return (double) (task->finished_at - task->started_at) / 1000.0;
}

/*
 * entry_log_why: the first sentence of an action's log detail: a failure's
 * message and detail (its HTTP status, the server's message and the
 * request id, as the error would have shown them), or the note of a
 * success (a joined checkpoint); NULL when there is neither.  Allocates
 * in CurrentMemoryContext.
 */
static char *
entry_log_why(const LsmTask *task)
{
	const LsmFailure *f = task->failure;

	if (f && f->detail)
		return psprintf("%s: %s", f->message, f->detail);
	if (f || task->note)
		return psprintf("%s.", f ? f->message : task->note);
	return NULL;
}

/*
 * lsm_log_action: the server log line of one finished flush, compact or
 * checkpoint task of the given server (its name), when
 * lancelsm.log_min_duration is 0 or more and the task ran at least that
 * long (0: every action), as log_autovacuum_min_duration does for
 * autovacuum.  The line names the server, the table, the action and
 * whether it failed; its SQLSTATE is the failure's (00000 when it did
 * not fail); the detail says why it failed (the error's message and
 * detail: status, server message, request id) or how another backend's
 * run ended it, when it started and how long it ran, with its passes, polls
 * and retries.  Other kinds of task (stats reads, the write spec) are not
 * actions and are never logged.  Raises nothing but out of memory.
 */
void
lsm_log_action(const char *server, const LsmTask *task)
{
	static const char *const done[] = {
		[LSM_TASK_FLUSH] = gettext_noop("lancelsm flush of LanceDB table \"%s\" of server \"%s\": ok"),
		[LSM_TASK_COMPACT] = gettext_noop("lancelsm compaction of LanceDB table \"%s\" of server \"%s\": ok"),
		[LSM_TASK_CHECKPOINT] = gettext_noop("lancelsm checkpoint of LanceDB table \"%s\" of server \"%s\": ok"),
	};
	static const char *const failed[] = {
		[LSM_TASK_FLUSH] = gettext_noop("lancelsm flush of LanceDB table \"%s\" of server \"%s\" failed"),
		[LSM_TASK_COMPACT] = gettext_noop("lancelsm compaction of LanceDB table \"%s\" of server \"%s\" failed"),
		[LSM_TASK_CHECKPOINT] = gettext_noop("lancelsm checkpoint of LanceDB table \"%s\" of server \"%s\" failed"),
	};
	double		ms = entry_elapsed_ms(task);
	const char *why;

	if (lsm_log_min_duration_ms < 0 || ms < lsm_log_min_duration_ms ||
		task->started_at == 0 || task->kind >= lengthof(done) ||
		done[task->kind] == NULL)
		return;
	why = entry_log_why(task);
	ereport(LOG,
			(errcode(task->failure ? task->failure->sqlerrcode :
					 ERRCODE_SUCCESSFUL_COMPLETION),
			 errmsg(task->failure ? failed[task->kind] : done[task->kind],
					task->table_name, server),
			 why ?
			 errdetail("%s Started at %s, elapsed %.3f s, %d passes, %d polls, %d retries, %d re-issues.",
					   why, timestamptz_to_str(task->started_at),
					   ms / 1000.0, task->passes, task->polls,
					   task->total_retries, task->reissues) :
			 errdetail("Started at %s, elapsed %.3f s, %d passes, %d polls, %d retries, %d re-issues.",
					   timestamptz_to_str(task->started_at), ms / 1000.0,
					   task->passes, task->polls, task->total_retries,
					   task->reissues)));
}

/*
 * lsm_log_failed_row: one failed row of a call over the declared tables
 * (lancelsm_checkpoint_all, lancelsm_checkpoint_due): a LOG line naming
 * the server and the table, with the failure's SQLSTATE and message, as
 * long as the call has logged fewer than LSM_LOG_FAILED_ROWS; counted in
 * *log either way for lsm_log_failed_summary, and named there for
 * lsm_failed_rows_raise while fewer than LSM_STRICT_NAMED_ROWS are.
 * *log starts zeroed.
 */
void
lsm_log_failed_row(LsmFailedRows *log, const char *server,
				   const char *table_name, const LsmFailure *failure)
{
	if (log->failed < LSM_STRICT_NAMED_ROWS)
	{
		if (log->named.data == NULL)
			initStringInfo(&log->named);
		appendStringInfo(&log->named, "%s\"%s\" of server \"%s\" (%s)",
						 log->failed > 0 ? ", " : "", table_name, server,
						 unpack_sql_state(failure->sqlerrcode));
	}
	if (log->failed++ >= LSM_LOG_FAILED_ROWS)
		return;
	ereport(LOG,
			(errcode(failure->sqlerrcode),
			 errmsg("could not maintain LanceDB table \"%s\" of server \"%s\"",
					table_name, server),
			 failure->detail ?
			 errdetail_internal("%s: %s", failure->message, failure->detail) :
			 errdetail_internal("%s", failure->message)));
}

/*
 * lsm_log_failed_summary: after the failed rows of a call over ntables
 * declared tables were given to lsm_log_failed_row, one WARNING that sums
 * them up (nothing when none failed): an outage then writes one line per
 * call to the client, not one per table, and at most LSM_LOG_FAILED_ROWS
 * LOG lines per call to the server log.
 */
void
lsm_log_failed_summary(const LsmFailedRows *log, int ntables)
{
	if (log->failed == 0)
		return;
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg_plural("%d of %d declared LanceDB table failed",
						   "%d of %d declared LanceDB tables failed",
						   ntables, log->failed, ntables),
			 errdetail("The result has a row for each with its SQLSTATE and message; the server log has the first %d.",
					   Min(log->failed, LSM_LOG_FAILED_ROWS))));
}

/*
 * lsm_no_null_args: raise 22004 naming the first NULL argument (names:
 * the function's argument names, in order) of a function declared
 * without STRICT since 1.5 (lancelsm_checkpoint_due,
 * lancelsm_checkpoint_all), whose NULL arguments must fail a pg_cron job
 * rather than return no rows.  A catalog before 1.5 declares them STRICT:
 * then no argument is NULL.
 */
void
lsm_no_null_args(FunctionCallInfo fcinfo, const char *const *names)
{
	for (int i = 0; i < PG_NARGS(); i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument \"%s\" must not be null",
							names[i])));
}

/*
 * lsm_strict_arg: the strict argument (number argno, checked not NULL by
 * lsm_no_null_args), false when the function is declared without it (a
 * catalog before 1.5).
 */
bool
lsm_strict_arg(FunctionCallInfo fcinfo, int argno)
{
	return PG_NARGS() > argno && PG_GETARG_BOOL(argno);
}

/*
 * lsm_failed_rows_raise: the end of a strict call over ntables declared
 * tables of which some failed (log, from lsm_log_failed_row; nothing when
 * none did): an ERROR (HV000, as a foreign-data wrapper's failure) whose
 * message counts them and whose detail names the first
 * LSM_STRICT_NAMED_ROWS with their SQLSTATEs, so that pg_cron records the
 * run as failed with that message.  The caller has recorded every table's
 * outcome first; with lancelsm preloaded they outlive this error
 * (src/record/outcome_queue.c).
 */
void
lsm_failed_rows_raise(const LsmFailedRows *log, int ntables)
{
	if (log->failed == 0)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FDW_ERROR),
			 errmsg_plural("%d of %d declared LanceDB table failed",
						   "%d of %d declared LanceDB tables failed",
						   ntables, log->failed, ntables),
			 log->failed > LSM_STRICT_NAMED_ROWS ?
			 errdetail("The first %d failed: %s.", LSM_STRICT_NAMED_ROWS,
					   log->named.data) :
			 errdetail("Failed: %s.", log->named.data),
			 errhint("Each table's outcome is in lancelsm_status; the server log has the messages.")));
}
