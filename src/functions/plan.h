/*-------------------------------------------------------------------------
 *
 * plan.h
 *		When lancelsm_checkpoint_due() reads a declared table's stats
 *		next, planned from its last reads and its thresholds
 *		(src/functions/plan.c).  Pure functions; no I/O.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_PLAN_H
#define LANCELSM_PLAN_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "functions/threshold.h"

/* What the plan of one table's next read is made from. */
typedef struct LsmReadPlanInput
{
	TimestampTz read_at;		/* when this read was made (its run's start) */
	int64		values[LSM_MEASURES];	/* what it found (LsmMeasure order) */
	int64		written;		/* its write position (lsm_read_plan_written) */
	bool		has_prev;		/* an earlier read is known */
	TimestampTz prev_at;		/* when it was made */
	int64		prev_values[LSM_MEASURES];	/* what it found */
	bool		has_prev_written;	/* and its write position (1.5.0 on) */
	int64		prev_written;
	bool		prev_rate_known;	/* it was planned from growth or at the
									 * next run, not by the bound or age */
	bool		prev_bound;		/* it was planned by the bound */
	double		phase;			/* the table's fixed place in [0, 1), by its
								 * names: spreads the first bound */
	const LsmLimits *limits;	/* the table's thresholds */
	TimestampTz age_expiry;		/* when max_checkpoint_age expires; 0: none */
	int64		bound_us;		/* max_read_interval, microseconds */
} LsmReadPlanInput;

extern TimestampTz lsm_read_plan(const LsmReadPlanInput *in, char **reason);
extern bool lsm_read_plan_rate_known(const char *reason);
extern int64 lsm_read_plan_written(const LsmTableSummary *table);

#endif							/* LANCELSM_PLAN_H */
