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
 * The writes are the caller's, in the caller's transaction, so that the
 * caller reads its own outcomes at once.  Each is also staged
 * (src/record/outcome_queue.c): when the caller's transaction, or the
 * subtransaction around the call, rolls back -- the call's own error
 * included: a direct call that fails, a 57014 or cancel that ends any
 * call, the ERROR of a strict call -- a background worker writes the
 * staged outcomes in a transaction of its own
 * (src/functions/outcome_writer.c), through the same UPDATE.  That needs
 * lancelsm in shared_preload_libraries; without it the outcomes roll back
 * with the caller's transaction.  An outcome is never written over a
 * later one (last_finished_at), so a worker that writes late changes
 * nothing a later call recorded.
 *
 * The writes are made as the owner of lancelsm_table for a role that may
 * record (src/functions/recording.c).  Where the caller's write fails (a
 * read-only transaction) lancelsm_checkpoint_due() and
 * lancelsm_checkpoint_all() say so in a WARNING (a role that may not
 * record gets their ERROR before anything runs).  A role that may not
 * record, or a read-only transaction, stages nothing, and a direct call
 * then records nothing and says nothing.  Before ALTER EXTENSION UPDATE
 * to 1.4 (no last_ok column) nothing is written; from 1.5 the message
 * goes to lancelsm_table_message, readable only by the roles that may
 * read the histories.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "functions/entry.h"
#include "functions/outcome.h"
#include "functions/recording.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* The columns of one outcome row, the parameters $1..$11 of the UPDATE. */
enum
{
	OC_SERVER,
	OC_TABLE,
	OC_ACTION,
	OC_SOURCE,
	OC_OK,
	OC_SQLSTATE,
	OC_MESSAGE,
	OC_STARTED,
	OC_FINISHED,
	OC_CHECKPOINT,
	OC_ONLY_IF_FAILING,
	OC_COLS
};

StaticAssertDecl(OC_COLS == LSM_OUTCOME_PARAMS,
				 "one UPDATE parameter per outcome column");

static const Oid outcome_types[OC_COLS] = {TEXTOID, TEXTOID, TEXTOID,
	TEXTOID, BOOLOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID,
TIMESTAMPTZOID, BOOLOID};

/* The most tables the context of a 57014 names. */
#define OUTCOME_WAITING_NAMED 10

/* The rows of one call, a column array at a time. */
typedef struct OutcomeRows
{
	ArrayBuildState *cols[OC_COLS];
	int			nrows;
	bool		stage;			/* also stage each row */
	Oid			relid;			/* lancelsm_table */
	TimestampTz now;			/* the end of what has no end time */
	const ErrorData *error;		/* the error that ends the call, or NULL */
	StringInfoData waiting;		/* with error: the tables it ended */
	int			nwaiting;
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
 * outcome_put: one row into rows, and staged when rows->stage.  A row
 * without an end time ends at rows->now.
 */
static void
outcome_put(OutcomeRows *rows, LsmOutcomeRecord *rec)
{
	Datum		values[OC_COLS];
	bool		nulls[OC_COLS] = {0};

	if (rec->finished_at == 0)
		rec->finished_at = rows->now;
	values[OC_SERVER] = CStringGetTextDatum(rec->server);
	values[OC_TABLE] = CStringGetTextDatum(rec->table_name);
	values[OC_ACTION] = CStringGetTextDatum(rec->action);
	values[OC_SOURCE] = CStringGetTextDatum(rec->source);
	values[OC_OK] = BoolGetDatum(rec->ok);
	values[OC_SQLSTATE] = rec->sqlstate ? CStringGetTextDatum(rec->sqlstate) : 0;
	nulls[OC_SQLSTATE] = (rec->sqlstate == NULL);
	values[OC_MESSAGE] = rec->message ? CStringGetTextDatum(rec->message) : 0;
	nulls[OC_MESSAGE] = (rec->message == NULL);
	values[OC_STARTED] = TimestampTzGetDatum(rec->started_at);
	nulls[OC_STARTED] = (rec->started_at == 0);
	values[OC_FINISHED] = TimestampTzGetDatum(rec->finished_at);
	values[OC_CHECKPOINT] = TimestampTzGetDatum(rec->started_at);
	nulls[OC_CHECKPOINT] = !rec->checkpointed || rec->started_at == 0;
	values[OC_ONLY_IF_FAILING] = BoolGetDatum(rec->only_if_failing);
	for (int c = 0; c < OC_COLS; c++)
		rows->cols[c] = accumArrayResult(rows->cols[c], values[c], nulls[c],
										 outcome_types[c],
										 CurrentMemoryContext);
	rows->nrows++;
	if (rows->stage)
	{
		rec->relid = rows->relid;
		lsm_outcome_stage(rec);
	}
}

/*
 * outcome_put_failure: the row of a table whose action (what) failed
 * (failure), or ended with the call's error (failure NULL).
 */
static void
outcome_put_failure(OutcomeRows *rows, LsmOutcomeRecord *rec,
					const LsmFailure *failure)
{
	const ErrorData *e = rows->error;

	rec->ok = false;
	if (failure != NULL)
	{
		rec->sqlstate = unpack_sql_state(failure->sqlerrcode);
		rec->message = lsm_failure_message(failure);
	}
	else
	{
		rec->sqlstate = unpack_sql_state(e->sqlerrcode);
		rec->message = e->detail ? psprintf("%s: %s", e->message, e->detail) :
			e->message;
		if (rows->nwaiting < OUTCOME_WAITING_NAMED)
			appendStringInfo(&rows->waiting, "%s\"%s\" of server \"%s\"",
							 rows->nwaiting > 0 ? ", " : "", rec->table_name,
							 rec->server);
		else if (rows->nwaiting == OUTCOME_WAITING_NAMED)
			appendStringInfoString(&rows->waiting, ", ...");
		rows->nwaiting++;
	}
	outcome_put(rows, rec);
}

/*
 * outcome_put_table: the row of table t of call, if any (see the head of
 * this file); with rows->error, a table the call had not finished with
 * gets that error as its failure.
 */
static void
outcome_put_table(OutcomeRows *rows, const LsmOutcomeCall *call, int t)
{
	const LsmTask *act = call->acts ? call->acts[t] : NULL;
	bool		read = call->stats_failures != NULL && t < call->ndecided;
	LsmOutcomeRecord rec = {0};

	if (call->to_read != NULL && !call->to_read[t])
		return;					/* left alone, not even read: nothing */
	rec.server = call->servers ? call->servers[t] : call->server;
	rec.table_name = call->names ? call->names[t] : act->table_name;
	rec.source = outcome_source_name(call->source);
	rec.action = outcome_action_name(act ? act->kind : call->kind);
	rec.started_at = call->stats_started;
	if (act != NULL && act->phase == LSM_PHASE_DONE)
	{
		if (lsm_herd_skipped(act))
			return;
		rec.started_at = act->started_at;
		rec.finished_at = act->finished_at;
		if (act->failure != NULL)
			return outcome_put_failure(rows, &rec, act->failure);
		rec.ok = true;
		rec.message = act->note;
		rec.checkpointed = (act->kind == LSM_TASK_CHECKPOINT);
		return outcome_put(rows, &rec);
	}
	if (act == NULL && read)
	{
		if (call->stats_failures[t] != NULL)
			return outcome_put_failure(rows, &rec, call->stats_failures[t]);
		rec.ok = true;
		rec.only_if_failing = true;
		return outcome_put(rows, &rec);
	}
	if (rows->error == NULL)
		return;					/* not acted on, not read: nothing */
	if (act != NULL && act->started_at != 0)
		rec.started_at = act->started_at;
	outcome_put_failure(rows, &rec, NULL);
}

/*
 * The 1.4 catalog's UPDATE: the message in lancelsm_table.last_message.
 * Each row sets the outcome of its table unless the table's recorded
 * outcome ended later (a writer recording an outcome staged before it),
 * or unless the row is a good stats read (only_if_failing) and the
 * recorded outcome is no failure.
 */
static const char outcome_update_v1_4[] =
"UPDATE %s t SET last_action = u.action, last_source = u.source, "
"last_ok = u.ok, last_sqlstate = u.sqlstate, last_message = u.message, "
"last_started_at = u.started_at, last_finished_at = u.finished_at, "
"last_checkpoint_at = greatest(t.last_checkpoint_at, u.checkpoint_at) "
"FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
"u(server, table_name, action, source, ok, sqlstate, message, started_at, finished_at, checkpoint_at, only_if_failing) "
"WHERE t.server = u.server AND t.table_name = u.table_name "
"AND (NOT u.only_if_failing OR NOT t.last_ok) "
"AND (t.last_finished_at IS NULL OR t.last_finished_at <= u.finished_at)";

/*
 * From 1.5 the message of each row written goes to its own relation,
 * lancelsm_table_message, readable as the histories are: the same UPDATE
 * without it, then the messages of the rows it updated, upserted.  %1$s is
 * lancelsm_table, schema-qualified, whose name the message relation's
 * extends.
 */
static const char outcome_update_v1_5[] =
"WITH w AS (UPDATE %1$s t SET last_action = u.action, last_source = u.source, "
"last_ok = u.ok, last_sqlstate = u.sqlstate, "
"last_started_at = u.started_at, last_finished_at = u.finished_at, "
"last_checkpoint_at = greatest(t.last_checkpoint_at, u.checkpoint_at) "
"FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
"u(server, table_name, action, source, ok, sqlstate, message, started_at, finished_at, checkpoint_at, only_if_failing) "
"WHERE t.server = u.server AND t.table_name = u.table_name "
"AND (NOT u.only_if_failing OR NOT t.last_ok) "
"AND (t.last_finished_at IS NULL OR t.last_finished_at <= u.finished_at) "
"RETURNING t.server, t.table_name, u.message) "
"INSERT INTO %1$s_message AS m (server, table_name, last_message) "
"SELECT server, table_name, message FROM w "
"ON CONFLICT (server, table_name) DO UPDATE SET last_message = excluded.last_message";

/*
 * outcome_finish: the UPDATE of the rows into *update, for their
 * lancelsm_table (rows->relid: its message column, or from 1.5 its message
 * relation); false when there is no row.
 */
static bool
outcome_finish(OutcomeRows *rows, LsmOutcomeUpdate *update)
{
	if (rows->nrows == 0)
		return false;
	for (int c = 0; c < OC_COLS; c++)
	{
		update->argtypes[c] = get_array_type(outcome_types[c]);
		update->args[c] = makeArrayResult(rows->cols[c],
										  CurrentMemoryContext);
	}
	update->template = get_attnum(rows->relid, "last_message") != InvalidAttrNumber ?
		outcome_update_v1_4 : outcome_update_v1_5;
	return true;
}

/*
 * outcome_may_record: whether the current role records outcomes: the
 * transaction can write and the role may record
 * (src/functions/recording.c).  One that cannot records nothing,
 * silently: its caller has its result, and a role that may not record
 * changes none of the record.
 */
static bool
outcome_may_record(FunctionCallInfo fcinfo)
{
	if (XactReadOnly || RecoveryInProgress())
		return false;
	return lsm_role_records(fcinfo);
}

/*
 * outcome_rows_init: rows for a call through fcinfo ending with error
 * (NULL: a call that ended normally); false when nothing is recorded: a
 * catalog before 1.4, or a direct call by a role that may not record.
 */
static bool
outcome_rows_init(FunctionCallInfo fcinfo, const LsmOutcomeCall *call,
				  const ErrorData *error, OutcomeRows *rows)
{
	AttrNumber	attnum = InvalidAttrNumber;
	bool		may;

	memset(rows, 0, sizeof(OutcomeRows));
	rows->relid = outcome_relid(fcinfo, &attnum);
	rows->now = GetCurrentTimestamp();
	rows->error = error;
	initStringInfo(&rows->waiting);
	if (!OidIsValid(rows->relid))
		return false;
	may = outcome_may_record(fcinfo);
	rows->stage = may;
	return may || call->source != LSM_OUTCOME_DIRECT;
}

/*
 * lsm_outcome_update: the UPDATE of lancelsm_table (for the schema of
 * the calling function) that records the outcomes of a call, after its
 * actions have ended, into *update, and each outcome staged; see the head
 * of this file for what is written.  Returns false when there is nothing
 * to run: no row, a catalog before 1.4, or a direct call that may not
 * write.  Raises only out of memory.
 */
bool
lsm_outcome_update(FunctionCallInfo fcinfo, const LsmOutcomeCall *call,
				   LsmOutcomeUpdate *update)
{
	OutcomeRows rows;

	if (!outcome_rows_init(fcinfo, call, NULL, &rows))
		return false;
	for (int t = 0; t < call->ntables; t++)
		outcome_put_table(&rows, call, t);
	return outcome_finish(&rows, update);
}

/*
 * lsm_outcome_error: in the PG_CATCH of a call whose tables (call, its
 * acts those it started, ndecided those lancelsm_checkpoint_due() has
 * read) an error ended, add the run history's entry of the call's stats
 * reads with that error when it has them (call->reads: src/record/run.c,
 * lsm_run_record_due), and stage the outcome of each table: its own where
 * it had finished, that error where not; then rethrow the error, for a
 * 57014 with a context line naming the tables it ended (the first
 * OUTCOME_WAITING_NAMED), whether declared or not.  The outcomes are only
 * staged: the error rolls the transaction (or subtransaction) back, and
 * a worker writes them (src/record/outcome_queue.c).  cxt is the caller's
 * memory context (not ErrorContext); call must not be in ErrorContext
 * either, which this flushes: a caller that builds it in its PG_CATCH
 * switches to cxt first.  Never returns.
 */
void
lsm_outcome_error(FunctionCallInfo fcinfo, const LsmOutcomeCall *call,
				  MemoryContext cxt)
{
	ErrorData  *edata;
	OutcomeRows rows;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	FlushErrorState();
	if (call->reads != NULL)
		lsm_run_record_due(call->reads, edata);
	if (!outcome_rows_init(fcinfo, call, edata, &rows))
		rows.stage = false;
	for (int t = 0; t < call->ntables; t++)
		outcome_put_table(&rows, call, t);
	if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED && rows.nwaiting > 0)
	{
		char	   *line = psprintf(_("while waiting for LanceDB tables %s"),
									rows.waiting.data);

		edata->context = edata->context ?
			psprintf("%s\n%s", edata->context, line) : line;
	}
	ReThrowError(edata);
}

/*
 * lsm_outcome_records_update: the UPDATE that writes recs[0 .. n) (staged
 * outcomes a worker took off the queue, all of one lancelsm_table), into
 * *update: of several outcomes of one table, the one that ended last.
 * Returns false when there is none.  Raises only out of memory.
 */
bool
lsm_outcome_records_update(LsmOutcomeRecord *recs, int n,
						   LsmOutcomeUpdate *update)
{
	OutcomeRows rows = {{0}};

	rows.now = GetCurrentTimestamp();
	rows.relid = n > 0 ? recs[0].relid : InvalidOid;
	for (int i = 0; i < n; i++)
	{
		bool		superseded = false;

		for (int j = 0; j < n && !superseded; j++)
			superseded = j != i &&
				strcmp(recs[j].server, recs[i].server) == 0 &&
				strcmp(recs[j].table_name, recs[i].table_name) == 0 &&
				(recs[j].finished_at > recs[i].finished_at ||
				 (recs[j].finished_at == recs[i].finished_at && j > i));
		if (!superseded)
			outcome_put(&rows, &recs[i]);
	}
	return outcome_finish(&rows, update);
}
