/*-------------------------------------------------------------------------
 *
 * threshold.h
 *		Per-table maintenance thresholds: whether a declared table is due,
 *		why, and the action that cures it.  Pure functions; no I/O.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_THRESHOLD_H
#define LANCELSM_THRESHOLD_H

#include "postgres.h"

#include "functions/functions.h"

/* The table statistics a threshold is compared with, in this order. */
typedef enum LsmMeasure
{
	LSM_MEASURE_L0_GENERATIONS,	/* L0 generations over the buckets */
	LSM_MEASURE_L0_BYTES,		/* L0 bytes over the buckets */
	LSM_MEASURE_WAL_LAG,		/* the largest WAL lag of a bucket */
	LSM_MEASURE_MEMTABLE_ROWS,	/* memtable rows over the buckets */
	LSM_MEASURES
} LsmMeasure;

/*
 * The action that cures a table, as a set of two cures: compaction (L0 too
 * large) and a flush (too much not yet in L0).  Both together are a
 * checkpoint, which also cures an overdue checkpoint age.
 */
typedef enum LsmDueAction
{
	LSM_DUE_NONE = 0,
	LSM_DUE_COMPACT = 1,
	LSM_DUE_FLUSH = 2,
	LSM_DUE_CHECKPOINT = LSM_DUE_COMPACT | LSM_DUE_FLUSH
} LsmDueAction;

/* A declared table's thresholds, as read from lancelsm_table. */
typedef struct LsmLimits
{
	bool		has_max[LSM_MEASURES];	/* false: NULL, not used */
	int64		max[LSM_MEASURES];
	bool		age_over;		/* max_checkpoint_age is exceeded */
	char	   *age;			/* the checkpoint age, to the second */
	char	   *max_age;		/* max_checkpoint_age as text, or NULL */
} LsmLimits;

extern LsmDueAction lsm_due_evaluate(const LsmLimits *limits,
									 const LsmTableSummary *table,
									 char **reason);
extern const char *lsm_due_action_name(LsmDueAction action);
extern void lsm_due_measures(const LsmTableSummary *table, int64 *measures);

#endif							/* LANCELSM_THRESHOLD_H */
