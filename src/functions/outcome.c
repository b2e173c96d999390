/*-------------------------------------------------------------------------
 *
 * outcome.c
 *		The durable outcome of each declared table: the last_* columns of
 *		lancelsm_table (1.4), written once a call's actions have ended, in
 *		one UPDATE per call, by lancelsm_checkpoint_due(),
 *		lancelsm_checkpoint_all() and the direct calls lancelsm_flush,
 *		lancelsm_compact and lancelsm_checkpoint on a declared table.  This
 *		file decides what is written and builds the UPDATE;
 *		src/functions/declared.c runs it (lsm_declared_record_outcomes).
 *
 * A table's row says what was last done to it (last_action: stats,
 * flush, compact or checkpoint), who did it (last_source: direct,
 * checkpoint_all or checkpoint_due), when it started and ended, and how it
 * ended: last_ok, and for a failure its SQLSTATE and message, redacted of
 * secrets as every failure of lancelsm is (src/task/task.c).  A
 * successful checkpoint also moves last_checkpoint_at, never back.
 *
 * What is written, per table:
 *	 - an action that ran: its outcome.  One skipped because another
 *	   backend was checkpointing the table writes nothing: that backend
 *	   records its own.
 *	 - lancelsm_checkpoint_due() on a table it did not act on: a failed
 *	   stats read (or an unusable server) as action stats; a good stats
 *	   read only when the recorded outcome is a failure, so that a table
 *	   that recovered stops reading as failing.  A quiet table whose last
 *	   outcome is ok writes nothing.
 *
 * The writes are in the caller's transaction, as the owner of
 * lancelsm_table for a role that may record (src/functions/recording.c):
 * a rollback takes them back, and a direct call that fails raises its
 * error, so that only its successes are recorded.  Where the write fails
 * (a read-only transaction) lancelsm_checkpoint_due() and
 * lancelsm_checkpoint_all() say so in a WARNING (a role that may not
 * record gets their ERROR before anything runs); a direct call records
 * nothing and says nothing in a read-only transaction or for a role that
 * may not record.  Before ALTER EXTENSION UPDATE to 1.4 (no last_ok
 * column) nothing is written; from 1.5 the message goes to
 * lancelsm_table_message, readable only by the roles that may read the
 * histories.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "functions/entry.h"
#include "functions/outcome.h"
#include "functions/recording.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* The columns of one outcome row, the parameters $1..$10 of the UPDATE. */
enum
{
	OC_SERVER,
	OC_TABLE,
	OC_ACTION,
	OC_OK,
	OC_SQLSTATE,
	OC_MESSAGE,
	OC_STARTED,
	OC_FINISHED,
	OC_CHECKPOINT,
	OC_ONLY_IF_FAILING,
	OC_COLS
};

static const Oid outcome_types[OC_COLS] = {TEXTOID, TEXTOID, TEXTOID,
	BOOLOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID,
TIMESTAMPTZOID, BOOLOID};

/* The rows of one call, a column array at a time. */
typedef struct OutcomeRows
{
	ArrayBuildState *cols[OC_COLS];
	int			nrows;
	TimestampTz now;			/* the end of what has no end time */
} OutcomeRows;

/*
 * outcome_relid: lancelsm_table of the calling function's schema when it
 * has the 1.4 outcome columns, InvalidOid otherwise; *last_ok_attnum its
 * column last_ok.
 */
static Oid
outcome_relid(FunctionCallInfo fcinfo, AttrNumber *last_ok_attnum)
{
	Oid			nspid = get_func_namespace(fcinfo->flinfo->fn_oid);
	Oid			relid = get_relname_relid("lancelsm_table", nspid);

	if (!OidIsValid(relid))
		return InvalidOid;
	*last_ok_attnum = get_attnum(relid, "last_ok");
	return *last_ok_attnum == InvalidAttrNumber ? InvalidOid : relid;
}

/*
 * outcome_action_name: an action as lancelsm_table.last_action shows it.
 */
static const char *
outcome_action_name(LsmTaskKind kind)
{
	switch (kind)
	{
		case LSM_TASK_FLUSH:
			return "flush";
		case LSM_TASK_COMPACT:
			return "compact";
		case LSM_TASK_CHECKPOINT:
			return "checkpoint";
		default:
			return "stats";
	}
}

/*
 * outcome_source_name: a source as lancelsm_table.last_source shows it.
 */
static const char *
outcome_source_name(LsmOutcomeSource source)
{
	switch (source)
	{
		case LSM_OUTCOME_CHECKPOINT_ALL:
			return "checkpoint_all";
		case LSM_OUTCOME_CHECKPOINT_DUE:
			return "checkpoint_due";
		default:
			return "direct";
	}
}

/*
 * outcome_put: one row into rows: table of server, the action's name,
 * its failure (NULL: ok; then note, if any, is the message), its times
 * (0: unknown; a start stays NULL, an end is rows->now), and whether the
 * row is written only over a failed outcome.
 */
static void
outcome_put(OutcomeRows *rows, const char *server, const char *table,
			const char *action, const LsmFailure *failure, const char *note,
			TimestampTz started, TimestampTz finished, bool checkpointed,
			bool only_if_failing)
{
	Datum		values[OC_COLS];
	bool		nulls[OC_COLS] = {0};

	values[OC_SERVER] = CStringGetTextDatum(server);
	values[OC_TABLE] = CStringGetTextDatum(table);
	values[OC_ACTION] = CStringGetTextDatum(action);
	values[OC_OK] = BoolGetDatum(failure == NULL);
	(void) lsm_failure_columns(failure, values, nulls, OC_SQLSTATE);
	if (failure == NULL && note != NULL)
	{
		values[OC_MESSAGE] = CStringGetTextDatum(note);
		nulls[OC_MESSAGE] = false;
	}
	values[OC_STARTED] = TimestampTzGetDatum(started);
	nulls[OC_STARTED] = (started == 0);
	values[OC_FINISHED] = TimestampTzGetDatum(finished ? finished : rows->now);
	values[OC_CHECKPOINT] = TimestampTzGetDatum(started);
	nulls[OC_CHECKPOINT] = !checkpointed || started == 0;
	values[OC_ONLY_IF_FAILING] = BoolGetDatum(only_if_failing);
	for (int c = 0; c < OC_COLS; c++)
		rows->cols[c] = accumArrayResult(rows->cols[c], values[c], nulls[c],
										 outcome_types[c],
										 CurrentMemoryContext);
	rows->nrows++;
}

/*
 * outcome_put_task: the row of a task that has ended, unless it was
 * skipped for another backend's run of its table.
 */
static void
outcome_put_task(OutcomeRows *rows, const char *server, const LsmTask *task)
{
	bool		ok = (task->failure == NULL);

	if (lsm_herd_skipped(task))
		return;
	outcome_put(rows, server, task->table_name,
				outcome_action_name(task->kind), task->failure, task->note,
				task->started_at, task->finished_at,
				ok && task->kind == LSM_TASK_CHECKPOINT, false);
}

/*
 * The 1.4 catalog's UPDATE: the message in lancelsm_table.last_message.
 */
static const char outcome_update_v1_4[] =
"UPDATE %s t SET last_action = u.action, last_source = $11, "
"last_ok = u.ok, last_sqlstate = u.sqlstate, last_message = u.message, "
"last_started_at = u.started_at, last_finished_at = u.finished_at, "
"last_checkpoint_at = greatest(t.last_checkpoint_at, u.checkpoint_at) "
"FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
"u(server, table_name, action, ok, sqlstate, message, started_at, finished_at, checkpoint_at, only_if_failing) "
"WHERE t.server = u.server AND t.table_name = u.table_name "
"AND (NOT u.only_if_failing OR NOT t.last_ok)";

/*
 * From 1.5 the message of each row written goes to its own relation,
 * lancelsm_table_message, readable as the histories are: the same UPDATE
 * without it, then the messages of the rows it updated, upserted.  %1$s is
 * lancelsm_table, schema-qualified, whose name the message relation's
 * extends.
 */
static const char outcome_update_v1_5[] =
"WITH w AS (UPDATE %1$s t SET last_action = u.action, last_source = $11, "
"last_ok = u.ok, last_sqlstate = u.sqlstate, "
"last_started_at = u.started_at, last_finished_at = u.finished_at, "
"last_checkpoint_at = greatest(t.last_checkpoint_at, u.checkpoint_at) "
"FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
"u(server, table_name, action, ok, sqlstate, message, started_at, finished_at, checkpoint_at, only_if_failing) "
"WHERE t.server = u.server AND t.table_name = u.table_name "
"AND (NOT u.only_if_failing OR NOT t.last_ok) "
"RETURNING t.server, t.table_name, u.message) "
"INSERT INTO %1$s_message AS m (server, table_name, last_message) "
"SELECT server, table_name, message FROM w "
"ON CONFLICT (server, table_name) DO UPDATE SET last_message = excluded.last_message";

/*
 * outcome_finish: the UPDATE of the rows, by source, into *update, for
 * lancelsm_table relid (its message column, or from 1.5 its message
 * relation); false when there is no row.
 */
static bool
outcome_finish(OutcomeRows *rows, LsmOutcomeSource source, Oid relid,
			   LsmOutcomeUpdate *update)
{
	if (rows->nrows == 0)
		return false;
	for (int c = 0; c < OC_COLS; c++)
	{
		update->argtypes[c] = get_array_type(outcome_types[c]);
		update->args[c] = makeArrayResult(rows->cols[c],
										  CurrentMemoryContext);
	}
	update->argtypes[OC_COLS] = TEXTOID;
	update->args[OC_COLS] = CStringGetTextDatum(outcome_source_name(source));
	update->template = get_attnum(relid, "last_message") != InvalidAttrNumber ?
		outcome_update_v1_4 : outcome_update_v1_5;
	return true;
}

/*
 * outcome_may_write_direct: whether a direct call records: the
 * transaction can write and the current role may record
 * (src/functions/recording.c).  A direct call that cannot records
 * nothing, silently: its caller has its result, and a role that may not
 * record changes none of the record.
 */
static bool
outcome_may_write_direct(FunctionCallInfo fcinfo)
{
	return !XactReadOnly && lsm_role_records(fcinfo);
}

/*
 * lsm_outcome_update: the UPDATE of lancelsm_table (for the schema of
 * the calling function) that records the outcomes of a call, after its
 * actions have ended, into *update; see the head of this file for what
 * is written.  Returns false when there is nothing to run: no row, a
 * catalog before 1.4, or a direct call that may not write.  Raises only
 * out of memory.
 */
bool
lsm_outcome_update(FunctionCallInfo fcinfo, const LsmOutcomeCall *call,
				   LsmOutcomeUpdate *update)
{
	OutcomeRows rows = {{0}};
	AttrNumber	attnum;
	Oid			relid = outcome_relid(fcinfo, &attnum);

	if (!OidIsValid(relid) ||
		(call->source == LSM_OUTCOME_DIRECT &&
		 !outcome_may_write_direct(fcinfo)))
		return false;
	rows.now = GetCurrentTimestamp();
	for (int t = 0; t < call->ntables; t++)
	{
		const char *server = call->servers ? call->servers[t] : call->server;
		const LsmFailure *failure;

		if (call->acts[t] != NULL)
		{
			outcome_put_task(&rows, server, call->acts[t]);
			continue;
		}
		if (call->stats_failures == NULL)
			continue;
		failure = call->stats_failures[t];
		outcome_put(&rows, server, call->names[t], "stats", failure, NULL,
					call->stats_started, 0, false, failure == NULL);
	}
	return outcome_finish(&rows, call->source, relid, update);
}
