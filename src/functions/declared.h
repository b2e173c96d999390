/*-------------------------------------------------------------------------
 *
 * declared.h
 *		The declared tables of one call of a function over all of them
 *		(src/functions/declared.c), for the functions that act on them
 *		(src/functions/due.c), and the recording of outcomes in
 *		lancelsm_table (with src/functions/outcome.c) for them and for
 *		src/functions/maintenance.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_DECLARED_H
#define LANCELSM_DECLARED_H

#include "fmgr.h"
#include "functions/option.h"
#include "functions/outcome.h"
#include "task/task.h"
#include "functions/plan.h"
#include "functions/threshold.h"

/* The threshold columns of lancelsm_table, and last_checkpoint_at. */
#define LSM_LIMIT_COLS 6

/* The declared tables of one call, each with its task. */
typedef struct DeclaredSet
{
	int			ntables;
	char	  **servers;		/* server of each table */
	char	  **names;			/* its table_name */
	LsmTask   **tasks;			/* its task (NULL: lsm_declared_resolve only) */
	LsmConfig **table_configs;	/* its server; NULL: unusable */
	LsmFailure **refusals;		/* why its server or name is refused, or NULL */
	int			nconfigs;
	LsmConfig **configs;		/* the resolved servers: wipe when done */
	bool		records;		/* the calling role may record */
	/* only when read with thresholds (NULL otherwise), per table: */
	LsmLimits  *limits;			/* its thresholds */
	Datum	   *limit_values;	/* LSM_LIMIT_COLS columns of each table */
	bool	   *limit_nulls;
	/* only when read with the plan (1.5; NULL otherwise), per table: */
	bool	   *to_read;		/* its next read is due (or due_plan off) */
	LsmReadPlanInput *plan_in;	/* what its next plan is made from */
	char	  **plan_reasons;	/* its stored next_read_reason, or NULL */
	/* only for stats tasks, after lsm_declared_summarize, per table: */
	LsmTableSummary *summaries; /* valid where its task has no failure */
} DeclaredSet;

extern uint64 lsm_declared_query(FunctionCallInfo fcinfo, const char *template,
								 int nargs, Oid *argtypes, Datum *args,
								 char **rows[2]);
extern void lsm_declared_resolve(FunctionCallInfo fcinfo, bool with_limits,
								 bool with_plan, int32 slice, int32 slices,
								 DeclaredSet *set);
extern void lsm_declared_task_init(const DeclaredSet *set, int t,
								   LsmTaskKind kind, LsmTask *task);
extern void lsm_declared_prepare(FunctionCallInfo fcinfo, LsmTaskKind kind,
								 bool with_limits, DeclaredSet *set);
extern void lsm_declared_wipe(DeclaredSet *set);
extern bool *lsm_declared_among(FunctionCallInfo fcinfo, const char *server,
								char **names, int n);
extern void lsm_declared_summarize_task(LsmTask *task,
										LsmTableSummary *summary);
extern void lsm_declared_summarize(DeclaredSet *set);
extern void lsm_declared_record(FunctionCallInfo fcinfo,
								const DeclaredSet *set, LsmTask **tasks);
extern void lsm_declared_record_outcomes(FunctionCallInfo fcinfo,
										 const LsmOutcomeCall *call);

/* The plan of one table's next read, written by lsm_declared_record_plans. */
typedef struct DeclaredPlanRow
{
	bool		read;			/* its stats were read: write this row */
	bool		read_ok;		/* and the read succeeded: values are valid */
	TimestampTz read_at;
	int64		values[LSM_MEASURES];
	int64		written;		/* the write position (lsm_read_plan_written) */
	TimestampTz next_read_at;	/* 0: at the next run (NULL) */
	char	   *reason;
} DeclaredPlanRow;

extern void lsm_declared_record_plans(FunctionCallInfo fcinfo,
									  const DeclaredSet *set,
									  const DeclaredPlanRow *rows);

#endif							/* LANCELSM_DECLARED_H */
