/*-------------------------------------------------------------------------
 *
 * outcome.h
 *		The durable outcome of each declared table (src/functions/outcome.c):
 *		what the functions that act on tables record in lancelsm_table's
 *		last_* columns once their actions have ended, as the UPDATE that
 *		src/functions/declared.c runs (lsm_declared_record_outcomes) and
 *		src/functions/outcome_writer.c runs for the outcomes a rollback
 *		took back; and what a call an error ends stages for that writer.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_OUTCOME_H
#define LANCELSM_OUTCOME_H

#include "fmgr.h"
#include "record/record.h"
#include "task/task.h"
#include "utils/timestamp.h"

/* Who acted, as lancelsm_table.last_source shows it. */
typedef enum LsmOutcomeSource
{
	LSM_OUTCOME_DIRECT,			/* lancelsm_flush, _compact, _checkpoint */
	LSM_OUTCOME_CHECKPOINT_ALL, /* lancelsm_checkpoint_all() */
	LSM_OUTCOME_CHECKPOINT_DUE	/* lancelsm_checkpoint_due() */
} LsmOutcomeSource;

/* The tables of one call and what it did to each, for the record. */
typedef struct LsmOutcomeCall
{
	LsmOutcomeSource source;
	int			ntables;
	char	  **servers;		/* per table; NULL: server for all */
	const char *server;
	char	  **names;			/* per table; NULL: those of the acts */
	LsmTask   **acts;			/* per table: its action, or NULL */
	LsmTaskKind kind;			/* the action of a table without a task: a
								 * direct call's that ended in an error, or
								 * LSM_TASK_STATS */
	LsmFailure **stats_failures;	/* per table, or NULL: why its stats read
									 * failed (lancelsm_checkpoint_due) */
	int			ndecided;		/* with stats_failures: the tables read */
	const bool *to_read;		/* per table, or NULL: all: whether it was to
								 * be read (its next read due); one not to
								 * be read is left alone, nothing recorded */
	TimestampTz stats_started;	/* when the call (its stats reads) started */
	const LsmDueReads *reads;	/* lancelsm_checkpoint_due(): its stats
								 * reads, for the run history; else NULL */
} LsmOutcomeCall;

/* Parameters of the UPDATE: eleven arrays, one row per table */
#define LSM_OUTCOME_PARAMS 11

/* The UPDATE of lancelsm_table that records a call's outcomes. */
typedef struct LsmOutcomeUpdate
{
	const char *template;		/* %s: lancelsm_table, schema-qualified */
	Oid			argtypes[LSM_OUTCOME_PARAMS];
	Datum		args[LSM_OUTCOME_PARAMS];	/* none NULL */
} LsmOutcomeUpdate;

extern bool lsm_outcome_update(FunctionCallInfo fcinfo,
							   const LsmOutcomeCall *call,
							   LsmOutcomeUpdate *update);
pg_noreturn extern void lsm_outcome_error(FunctionCallInfo fcinfo,
										  const LsmOutcomeCall *call,
										  MemoryContext cxt);
extern bool lsm_outcome_records_update(LsmOutcomeRecord *recs, int n,
									   LsmOutcomeUpdate *update);

#endif							/* LANCELSM_OUTCOME_H */
