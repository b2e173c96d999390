/*-------------------------------------------------------------------------
 *
 * due.c
 *		lancelsm_checkpoint_due(): keep every declared table within its
 *		thresholds, acting only where one is exceeded.
 *
 * One call reads the stats of every declared table, DUE_CHUNK tables at a
 * time and each chunk concurrently (the machinery of lancelsm_table_stats,
 * src/functions/declared.c), decides for each
 * table whether it is due and what cures it (src/functions/threshold.c), then runs
 * exactly those actions concurrently under the statement's deadline:
 *
 *	 compact	one compaction trigger (compact_lsm), no flush
 *	 flush		one flush (flush_lsm)
 *	 checkpoint	a flush, the watermark stats read, and one compaction
 *				trigger when the flush left L0 generations
 *
 * No action waits for compaction to drain (trigger-only tasks, see
 * src/task/step_checkpoint.c and src/task/step_compact.c): a per-minute job with a short statement_timeout must not
 * fail forever on a table whose drain takes longer.  The next run's stats
 * observe the drain: a table whose L0 is still over its threshold is due
 * again.  A checkpoint action that succeeded sets the table's
 * last_checkpoint_at to when it started (src/functions/declared.c,
 * lsm_declared_record).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "functions/declared.h"
#include "functions/recording.h"
#include "funcapi.h"
#include "functions/entry.h"
#include "record/record.h"
#include "task/task.h"
#include "settings.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

/*
 * Tables whose stats one call reads at a time (due_read_all): enough to
 * keep every connection of the pool (32 per server) busy for 16 rounds,
 * so that the wait for a chunk's slowest read costs little, and few
 * enough that a chunk's requests and answers stay a few MB.
 */
#define DUE_CHUNK 512

/* What one call decided for each declared table. */
typedef struct DuePlan
{
	LsmDueAction *actions;		/* per table */
	char	  **reasons;		/* per table; NULL: not due or no stats */
	LsmFailure **failures;		/* per table: its stats could not be read */
	LsmTask   **acts;			/* per table: its action's task, or NULL */
	LsmTask   **run;			/* the action tasks, nrun of them */
	int			nrun;
	int			ndecided;		/* the tables read and decided so far */
	DeclaredPlanRow *reads;		/* per table: its next read, if read */
	LsmTask   **chunk;			/* the stats reads running (due_read_all) */
	int			nchunk;			/* their number; 0: none running */
	int			nsent;			/* tables of the chunks ended whose stats
								 * read sent a request */
	int			nrequests;		/* those reads' requests, retries included */
} DuePlan;

/*
 * due_task_kind: the task that performs an action.
 */
static LsmTaskKind
due_task_kind(LsmDueAction action)
{
	switch (action)
	{
		case LSM_DUE_COMPACT:
			return LSM_TASK_COMPACT;
		case LSM_DUE_FLUSH:
			return LSM_TASK_FLUSH;
		default:
			return LSM_TASK_CHECKPOINT;
	}
}

/*
 * due_plan_alloc: room for the plan of a set.  Not inlined: the plan's
 * arrays are allocated before the caller's PG_TRY frame, which then only
 * fills them (-Wclobbered).
 */
static pg_noinline void
due_plan_alloc(const DeclaredSet *set, DuePlan *plan)
{
	int			n = Max(set->ntables, 1);

	plan->actions = palloc0(n * sizeof(LsmDueAction));
	plan->reasons = palloc0(n * sizeof(char *));
	plan->failures = palloc0(n * sizeof(LsmFailure *));
	plan->acts = palloc0(n * sizeof(LsmTask *));
	plan->run = palloc0(n * sizeof(LsmTask *));
	plan->nrun = 0;
	plan->ndecided = 0;
	plan->reads = palloc0(n * sizeof(DeclaredPlanRow));
	plan->chunk = NULL;
	plan->nchunk = 0;
	plan->nsent = 0;
	plan->nrequests = 0;
}

/*
 * due_plan_read: the plan of table t's next read, after its stats read
 * (the task stats, summarized into summary) and its decision, into
 * plan->reads[t], allocated in CurrentMemoryContext, timed from the start
 * of the run's transaction (now(), which the next runs compare the plan
 * with): at the next run
 * when the read failed ("read failed") or the table is acted on
 * ("acted"), else as src/functions/plan.c plans it.  Nothing without the
 * 1.5 catalog's plan.
 */
static void
due_plan_read(const DeclaredSet *set, DuePlan *plan, int t,
			  const LsmTask *stats, const LsmTableSummary *summary)
{
	DeclaredPlanRow *row = &plan->reads[t];
	LsmReadPlanInput in;

	if (set->plan_in == NULL)
		return;
	row->read = true;
	row->read_ok = (stats->failure == NULL);
	row->read_at = GetCurrentTransactionStartTimestamp();
	if (!row->read_ok)
	{
		row->reason = "read failed";
		return;
	}
	lsm_due_measures(summary, row->values);
	row->written = lsm_read_plan_written(summary);
	if (plan->actions[t] != LSM_DUE_NONE)
	{
		row->reason = "acted";
		return;
	}
	in = set->plan_in[t];
	in.read_at = row->read_at;
	memcpy(in.values, row->values, sizeof(in.values));
	in.written = row->written;
	row->next_read_at = lsm_read_plan(&in, &row->reason);
}

/*
 * due_decide: table t's stats task has finished: summarize it (a number
 * out of range for bigint is the table's failure) and decide its action
 * in CurrentMemoryContext (the stats read's, reset after), then keep in
 * outer what the call needs of it later: its failure, its reason and,
 * for a due table, one action task on the configuration its stats read
 * used.
 */
static void
due_decide(const DeclaredSet *set, DuePlan *plan, int t, LsmTask *stats,
		   MemoryContext outer)
{
	LsmTableSummary summary;
	char	   *reason = NULL;
	MemoryContext old;
	LsmTask    *act;

	lsm_declared_summarize_task(stats, &summary);
	if (stats->failure == NULL)
		plan->actions[t] = lsm_due_evaluate(&set->limits[t], &summary,
											&reason);
	old = MemoryContextSwitchTo(outer);
	due_plan_read(set, plan, t, stats, &summary);
	plan->failures[t] = lsm_fault_copy(stats->failure);
	plan->reasons[t] = reason ? pstrdup(reason) : NULL;
	if (plan->actions[t] != LSM_DUE_NONE)
	{
		act = palloc(sizeof(LsmTask));
		lsm_task_init(act, due_task_kind(plan->actions[t]), stats->config,
					  set->names[t], false);
		lsm_task_set_trigger_only(act);
		lsm_task_set_row_deadline(act);
		lsm_task_set_source(act, LSM_RUN_CHECKPOINT_DUE, true);
		lsm_task_set_records(act, set->records);
		plan->acts[t] = act;
		plan->run[plan->nrun++] = act;
	}
	plan->ndecided = t + 1;
	MemoryContextSwitchTo(old);
}

/*
 * due_unread: whether table t of the set is left unread by this run: its
 * next read is not due (src/functions/declared.c reads the plan).
 */
static inline bool
due_unread(const DeclaredSet *set, int t)
{
	return set->to_read != NULL && !set->to_read[t];
}

/*
 * due_chunk_sent: add to *sent the tables of the running chunk of stats
 * reads (plan->chunk) that sent a request, and to *requests their
 * requests, retries included.  Runs in the call's error handler too: no
 * allocation.
 */
static void
due_chunk_sent(const DuePlan *plan, int *sent, int *requests)
{
	for (int j = 0; j < plan->nchunk; j++)
	{
		*sent += (plan->chunk[j]->requests > 0);
		*requests += plan->chunk[j]->requests;
	}
}

/*
 * due_read_all: read the stats of every table of the set whose next read
 * is due (every table without the plan) and decide its
 * action, DUE_CHUNK tables at a time: the reads of one chunk run
 * concurrently through the connection pool, and all that they allocate
 * (tasks, requests, decoded answers, summaries) is freed before the next
 * chunk starts, so that the call's memory grows with the tables by the
 * few pointers of the plan only, and the driver's scans over its tasks
 * stay DUE_CHUNK long.  Each table is read exactly once.  The chunk
 * whose reads run is plan->chunk until they end, then its reads sent are
 * counted in plan->nsent and plan->nrequests, so that the reads sent are
 * known whenever an error ends the call (due_reads).  Raises only
 * PostgreSQL's own errors (cancel, statement_timeout: 57014, out of
 * memory).
 */
static void
due_read_all(const DeclaredSet *set, DuePlan *plan)
{
	MemoryContext outer = CurrentMemoryContext;
	MemoryContext chunk_cxt = AllocSetContextCreate(outer,
													"lancelsm due stats",
													ALLOCSET_DEFAULT_SIZES);
	LsmTask   **tasks = palloc(DUE_CHUNK * sizeof(LsmTask *));
	LsmTask    *slots = palloc(DUE_CHUNK * sizeof(LsmTask));
	int		   *which = palloc(DUE_CHUNK * sizeof(int));
	int			next = 0;

	while (next < set->ntables)
	{
		int			k = 0;

		MemoryContextSwitchTo(chunk_cxt);
		for (; next < set->ntables && k < DUE_CHUNK; next++)
		{
			if (due_unread(set, next))
				continue;
			which[k] = next;
			tasks[k] = &slots[k];
			lsm_declared_task_init(set, next, LSM_TASK_STATS, tasks[k++]);
		}
		plan->chunk = tasks;
		plan->nchunk = k;
		lsm_task_run_all(tasks, k);
		due_chunk_sent(plan, &plan->nsent, &plan->nrequests);
		plan->nchunk = 0;
		for (int j = 0; j < k; j++)
			due_decide(set, plan, which[j], tasks[j], outer);
		MemoryContextSwitchTo(outer);
		MemoryContextReset(chunk_cxt);
	}
	pfree(which);
	MemoryContextDelete(chunk_cxt);
	pfree(slots);
	pfree(tasks);
}

/*
 * due_reads: the stats reads of the call so far, for its entry in the run
 * history (src/record/run.c, lsm_run_record_due): the tables whose read
 * sent a request, with the chunk still running when an error ended the
 * call; their requests; the tables not read because their next read was
 * not due; when the call started.  A table whose read failed before any
 * request (an unusable server, a refused name) or that an error kept from
 * being read is neither sent nor skipped.
 */
static LsmDueReads *
due_reads(const DeclaredSet *set, const DuePlan *plan, TimestampTz started)
{
	LsmDueReads *reads = palloc0(sizeof(LsmDueReads));

	reads->sent = plan->nsent;
	reads->requests = plan->nrequests;
	due_chunk_sent(plan, &reads->sent, &reads->requests);
	for (int t = 0; t < set->ntables; t++)
		reads->skipped += due_unread(set, t);
	reads->started_at = started;
	return reads;
}

/*
 * due_outcomes: the tables of the call and what it did to each so far,
 * and its stats reads, for the record (src/functions/outcome.c).
 */
static LsmOutcomeCall *
due_outcomes(const DeclaredSet *set, const DuePlan *plan,
			 TimestampTz started)
{
	LsmOutcomeCall *call = palloc0(sizeof(LsmOutcomeCall));

	call->source = LSM_OUTCOME_CHECKPOINT_DUE;
	call->ntables = set->ntables;
	call->servers = set->servers;
	call->names = set->names;
	call->acts = plan->acts;
	call->kind = LSM_TASK_STATS;
	call->stats_failures = plan->failures;
	call->ndecided = plan->ndecided;
	call->to_read = set->to_read;
	call->stats_started = started;
	call->reads = due_reads(set, plan, started);
	return call;
}

/*
 * due_row: the result row of table i.  A table that was acted on has its
 * action's columns (those of lancelsm_checkpoint_all); one that was not
 * has ok true, or its stats failure, with a NULL elapsed and no passes or
 * polls.
 */
static void
due_row(ReturnSetInfo *rsinfo, const DeclaredSet *set, const DuePlan *plan,
		int i)
{
	Datum		values[LSM_DUE_COLS];
	bool		nulls[LSM_DUE_COLS];
	LsmTask		none;
	const LsmTask *row_task = plan->acts[i];
	bool		skipped = row_task != NULL && lsm_herd_skipped(row_task);
	int			c = 0;
	char	   *reason = plan->reasons[i];

	if (row_task == NULL)
	{
		lsm_task_init(&none, LSM_TASK_STATS, NULL, set->names[i], false);
		lsm_task_set_failure(&none, plan->failures[i]);
		row_task = &none;
	}
	if (due_unread(set, i))
		reason = psprintf("not read: %s", set->plan_reasons[i] ?
						  set->plan_reasons[i] : "planned");
	values[c] = CStringGetTextDatum(set->servers[i]);
	nulls[c++] = false;
	c = lsm_checkpoint_row_values(row_task, values, nulls, c);
	values[c] = BoolGetDatum(plan->actions[i] != LSM_DUE_NONE);
	nulls[c++] = (plan->failures[i] != NULL || due_unread(set, i));
	values[c] = reason ? CStringGetTextDatum(reason) : 0;
	nulls[c++] = (reason == NULL);
	values[c] = CStringGetTextDatum(lsm_due_action_name(skipped ? LSM_DUE_NONE :
														plan->actions[i]));
	nulls[c++] = false;
	lsm_put_row(rsinfo, values, nulls, c);
}

/*
 * due_log: the server log lines of one call: each failed row (a stats
 * read or an action that failed) at LOG, at most LSM_LOG_FAILED_ROWS of
 * them, counted and the first named in *log; each action that succeeded
 * or was skipped as lancelsm.log_min_duration says.
 */
static void
due_log(const DeclaredSet *set, const DuePlan *plan, LsmFailedRows *log)
{
	for (int i = 0; i < set->ntables; i++)
	{
		const LsmTask *act = plan->acts[i];

		if (plan->failures[i] != NULL)
			lsm_log_failed_row(log, set->servers[i], set->names[i],
							   plan->failures[i]);
		else if (act != NULL && act->failure != NULL)
			lsm_log_failed_row(log, set->servers[i], set->names[i],
							   act->failure);
		else if (act != NULL)
			lsm_log_action(set->servers[i], act);
	}
}

/*
 * due_slice_args: the slice and slices arguments of the call, 0 and 1 (the
 * whole declared set) when the function is declared without them (a 1.3
 * catalog).  Errors: 22004 when an argument is NULL (since 1.5 the
 * function is not STRICT), 22023 when slices is below 1 or slice is
 * outside 0 .. slices - 1.
 */
static void
due_slice_args(FunctionCallInfo fcinfo, int32 *slice, int32 *slices)
{
	static const char *const names[] = {"slice", "slices", "strict"};

	lsm_no_null_args(fcinfo, names);
	*slice = 0;
	*slices = 1;
	if (PG_NARGS() < 2)
		return;
	*slice = PG_GETARG_INT32(0);
	*slices = PG_GETARG_INT32(1);
	if (*slices < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("slices must be at least 1"),
				 errdetail("slices is %d.", *slices)));
	if (*slice < 0 || *slice >= *slices)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("slice must be between 0 and slices - 1"),
				 errdetail("slice is %d and slices is %d.", *slice, *slices)));
}

/*
 * lancelsm_checkpoint_due(slice integer DEFAULT 0, slices integer DEFAULT 1,
 *   strict boolean DEFAULT false)
 * RETURNS TABLE (server text, table_name text, ok boolean, sqlstate text,
 *   message text, elapsed interval, passes integer, polls integer,
 *   due boolean, reason text, action text)
 *
 * With slices n > 1, runs only slice number slice (0 .. n - 1) of the
 * declared tables: every table belongs to exactly one slice, chosen by a
 * stable hash of its server and table name (src/functions/declared.c,
 * declared_slice_of), so that n calls, one per pg_cron job and on any
 * PostgreSQL server holding the same declarations, share the work with no
 * other coordination; a slice's call reads, acts on, claims and records
 * only its own tables and returns only their rows.  Declared by 1.2 and
 * 1.3 without arguments, it runs the whole set.
 *
 * Reads the stats of every declared table (one get_lsm_stats request
 * each, 512 tables at a time, concurrently within each batch, so that
 * the call's memory stays about 0.7 kB per table over one batch), then
 * acts concurrently on exactly the tables past a
 * threshold, each with the action its thresholds map to (compact, flush
 * or checkpoint, see src/functions/threshold.c), without waiting for compaction to
 * drain.  One row per declared table, in (server, table_name) order under
 * the "C" collation.  ok, sqlstate, message, elapsed (NULL when no action
 * ran), passes (compact calls answered 2xx) and polls (stats reads) are
 * those of the action; due and reason say which thresholds are exceeded
 * ("l0_generations 31 > 20, wal_lag 7 > 5"; NULL when not due); action is
 * the one taken (none, flush, compact or checkpoint).  An action still
 * waiting shortly before statement_timeout (lsm_statement_row_deadline)
 * ends as a row with ok false and 57014, the others keep theirs.  A table whose stats
 * cannot be read, or whose server is unusable (42704, 42809, 42501), is a
 * row with ok false, its SQLSTATE and message, due NULL and action none.
 * A due table whose checkpoint another backend of this cluster is running
 * (with lancelsm preloaded, and paced alike: src/task/herd.c) is not
 * acted on and not reported as a success: ok false, sqlstate 55006,
 * elapsed NULL, action none, message "skipped: a checkpoint of this table
 * is running in backend N"; due and reason as ever.
 * A successful checkpoint action sets last_checkpoint_at, and each action
 * and failed stats read its table's outcome (src/functions/outcome.c; a
 * WARNING where the transaction cannot write them).  Each failed row is
 * logged at LOG, naming its server and table (at most LSM_LOG_FAILED_ROWS
 * per call), and one WARNING counts them; the other actions are logged as
 * lancelsm.log_min_duration says.
 *
 * With lancelsm preloaded, each call (1.5) adds one entry of action reads
 * to lancelsm_run_history (src/record/run.c, lsm_run_record_due):
 * reads_sent the tables whose stats read it sent, requests their requests
 * (retries included), reads_skipped the tables it did not read because
 * their next read was not due.  It is written once the reads and actions
 * end, with ok true: the tables' failures are their own rows, and the
 * strict ERROR (HV000) or a failure to write the record come after it.
 * When an error ends the call while it reads or acts (57014 for a cancel
 * or statement_timeout), the entry is written before the error goes on,
 * with ok false, that error's SQLSTATE and message, and the reads sent
 * until then, the chunk still waiting for its answers included.
 *
 * With strict true (1.5), a call in which any table failed (its stats
 * read or its action; not a table skipped for another backend's run)
 * ends, once every outcome is recorded, in an ERROR (HV000) counting the
 * failed tables of the call's and naming the first with their SQLSTATEs
 * (lsm_failed_rows_raise), instead of the WARNING: pg_cron then records
 * the run as failed.  With lancelsm preloaded the outcomes outlive that
 * error (src/record/outcome_queue.c); without, they roll back with it.
 *
 * Raises on cancel or statement_timeout (57014), which end every action,
 * 22004 for a NULL argument, 22023 for slices below 1 or a slice outside
 * 0 .. slices - 1, 42501, before any request, for a role that may not
 * record (src/functions/recording.c), and with strict as above.
 */
PG_FUNCTION_INFO_V1(lancelsm_checkpoint_due);
Datum
lancelsm_checkpoint_due(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	DeclaredSet set;
	DuePlan		plan;
	int32		slice;
	int32		slices;
	TimestampTz started = GetCurrentTimestamp();
	MemoryContext cxt = CurrentMemoryContext;
	LsmFailedRows log = {0};
	bool		strict;
	LsmOutcomeCall *call;

	due_slice_args(fcinfo, &slice, &slices);
	strict = lsm_strict_arg(fcinfo, 2);
	lsm_role_require_record(fcinfo);
	rsinfo = lsm_materialize(fcinfo, LSM_DUE_COLS);
	lsm_declared_resolve(fcinfo, true, true, slice, slices, &set);
	due_plan_alloc(&set, &plan);
	PG_TRY();
	{
		due_read_all(&set, &plan);
		lsm_herd_run_all(plan.run, plan.nrun, LSM_HERD_SKIP);
	}
	PG_CATCH();
	{
		/* out of ErrorContext, which lsm_outcome_error flushes */
		MemoryContextSwitchTo(cxt);
		lsm_declared_wipe(&set);
		lsm_outcome_error(fcinfo, due_outcomes(&set, &plan, started), cxt);
	}
	PG_END_TRY();
	lsm_declared_wipe(&set);
	call = due_outcomes(&set, &plan, started);
	lsm_run_record_due(call->reads, NULL);
	lsm_declared_record(fcinfo, &set, plan.acts);
	lsm_declared_record_outcomes(fcinfo, call);
	lsm_declared_record_plans(fcinfo, &set, plan.reads);
	due_log(&set, &plan, &log);
	if (strict)
		lsm_failed_rows_raise(&log, set.ntables);
	lsm_log_failed_summary(&log, set.ntables);
	for (int i = 0; i < set.ntables; i++)
		due_row(rsinfo, &set, &plan, i);
	return (Datum) 0;
}
