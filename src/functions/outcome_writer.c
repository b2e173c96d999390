/*-------------------------------------------------------------------------
 *
 * outcome_writer.c
 *		The background worker that writes, in a transaction of its own,
 *		the outcomes of declared tables whose caller's transaction rolled
 *		back (src/record/outcome_queue.c keeps them, the launcher of
 *		src/record/outcome_launcher.c starts this worker in their
 *		database): "lancelsm outcome writer".
 *
 * It takes its database's outcomes off the queue OUTCOMES_PER_XACT at a
 * time and writes each batch with the UPDATE of src/functions/outcome.c,
 * in one transaction, as the bootstrap superuser, under search_path
 * pg_catalog, pg_temp: the role that staged an outcome was checked when
 * it staged it.  An outcome never overwrites one that ended later.  It
 * exits when its database has none left; on SIGTERM (a server shutting
 * down) it still writes what is queued for its database, then exits.  It
 * writes nothing while the server is in recovery (a standby; the launcher
 * does not run there either).  A batch it cannot write (lancelsm_table
 * dropped, or an error) is logged and counted as dropped
 * (lancelsm_info.outcomes_dropped).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "executor/spi.h"
#include "functions/outcome.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

/* The outcomes one transaction of the worker writes at most. */
#define OUTCOMES_PER_XACT 64

PGDLLEXPORT void lsm_outcome_writer_main(Datum main_arg);

/*
 * writer_relation: the schema-qualified, quoted name of relid when it is
 * still a lancelsm_table; NULL when it was dropped.
 */
static char *
writer_relation(Oid relid)
{
	char	   *relname = get_rel_name(relid);

	if (relname == NULL || strcmp(relname, "lancelsm_table") != 0)
		return NULL;
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  relname);
}

/*
 * writer_write_table: write the outcomes among recs[0 .. n) of the
 * lancelsm_table of recs[from] (all those of its relid), in the current
 * transaction; marks them written in done.
 */
static void
writer_write_table(LsmOutcomeRecord *recs, int n, int from, bool *done)
{
	LsmOutcomeRecord *mine = palloc(n * sizeof(LsmOutcomeRecord));
	Oid			relid = recs[from].relid;
	char	   *relation = writer_relation(relid);
	LsmOutcomeUpdate update;
	int			m = 0;
	int			rc;

	for (int i = from; i < n; i++)
		if (!done[i] && recs[i].relid == relid)
		{
			mine[m++] = recs[i];
			done[i] = true;
		}
	if (relation == NULL)
	{
		ereport(LOG,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg_plural("dropped %d outcome of declared tables: lancelsm_table no longer exists",
							   "dropped %d outcomes of declared tables: lancelsm_table no longer exists",
							   m, m)));
		lsm_outcome_queue_drop(m);
		return;
	}
	if (!lsm_outcome_records_update(mine, m, &update))
		return;
	/* from 1.5 an INSERT into the message relation, after the UPDATE */
	rc = SPI_execute_with_args(psprintf(update.template, relation),
							   LSM_OUTCOME_PARAMS, update.argtypes,
							   update.args, NULL, false, 0);
	if (rc != SPI_OK_UPDATE && rc != SPI_OK_INSERT)
		elog(ERROR, "SPI_execute_with_args returned %s", SPI_result_code_string(rc));
}

/*
 * writer_write: write recs[0 .. n) in one transaction of their own.
 */
static void
writer_write(LsmOutcomeRecord *recs, int n)
{
	bool	   *done = palloc0(n * sizeof(bool));

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING,
						   "writing outcomes of declared tables");
	for (int i = 0; i < n; i++)
		if (!done[i])
			writer_write_table(recs, n, i, done);
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	pfree(done);
}

/*
 * writer_batch: take and write one batch of this database's outcomes;
 * false when none was waiting.  An error is logged, its batch counted as
 * dropped, and the worker goes on.
 */
static bool
writer_batch(MemoryContext batch_cxt)
{
	LsmOutcomeRecord *recs;
	int			n;

	MemoryContextSwitchTo(batch_cxt);
	recs = palloc(OUTCOMES_PER_XACT * sizeof(LsmOutcomeRecord));
	n = lsm_outcome_queue_take(MyDatabaseId, recs, OUTCOMES_PER_XACT);
	if (n == 0)
		return false;
	PG_TRY();
	{
		writer_write(recs, n);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(batch_cxt);
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
		lsm_outcome_queue_drop(n);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(TopMemoryContext);
	MemoryContextReset(batch_cxt);
	return true;
}

/*
 * lsm_outcome_writer_main: the worker's body (bgw_function_name); its
 * argument is the OID of its database.
 */
void
lsm_outcome_writer_main(Datum main_arg)
{
	MemoryContext batch_cxt;

	/* SIGTERM only asks it to finish: it drains what is queued first */
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(main_arg),
											  InvalidOid, 0);
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET,
					PGC_S_OVERRIDE);
	SetConfigOption("application_name", "lancelsm outcome writer",
					PGC_USERSET, PGC_S_SESSION);
	pgstat_report_appname("lancelsm outcome writer");
	batch_cxt = AllocSetContextCreate(TopMemoryContext,
									  "lancelsm outcome writer",
									  ALLOCSET_DEFAULT_SIZES);
	while (!RecoveryInProgress() && writer_batch(batch_cxt))
		CHECK_FOR_INTERRUPTS();
	proc_exit(0);
}
