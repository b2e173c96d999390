/*-------------------------------------------------------------------------
 *
 * threshold.c
 *		Whether a declared table is due for maintenance, and what cures it.
 *
 * A threshold is a maximum: the table is due when a statistic exceeds it
 * (value > threshold).  Each threshold maps to the action that cures it,
 * and a checkpoint is not always that action: its flush adds one more L0
 * generation per bucket.
 *
 *	 max_l0_generations, max_l0_bytes	compact (no flush)
 *	 max_wal_lag, max_memtable_rows		flush
 *	 max_checkpoint_age					checkpoint
 *
 * Several thresholds over at once take the union of their cures: compact
 * and flush together are a checkpoint (a flush, then compaction of what
 * it flushed), the strongest action, which cures every threshold.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "functions/threshold.h"

/* Name in reasons, and cure, of each measure (LsmMeasure order). */
static const struct
{
	const char *name;
	LsmDueAction cure;
}			threshold_measures[LSM_MEASURES] = {
	{"l0_generations", LSM_DUE_COMPACT},
	{"l0_bytes", LSM_DUE_COMPACT},
	{"wal_lag", LSM_DUE_FLUSH},
	{"memtable_rows", LSM_DUE_FLUSH},
};

/*
 * threshold_reason_add: append one "name value > limit" to the reason.
 */
static void
threshold_reason_add(StringInfo reason, const char *name, const char *value,
					 const char *limit)
{
	if (reason->len > 0)
		appendStringInfoString(reason, ", ");
	appendStringInfo(reason, "%s %s > %s", name, value, limit);
}

/*
 * lsm_due_measures: the statistics of a table summary that the
 * thresholds are compared with, into measures (LSM_MEASURES values,
 * LsmMeasure order): L0 generations and bytes and memtable rows summed
 * over the buckets, the largest WAL lag of a bucket (0 without buckets).
 */
void
lsm_due_measures(const LsmTableSummary *table, int64 *measures)
{
	measures[LSM_MEASURE_L0_GENERATIONS] = table->l0_generations;
	measures[LSM_MEASURE_L0_BYTES] = table->l0_bytes;
	measures[LSM_MEASURE_WAL_LAG] = table->wal_lag_max;
	measures[LSM_MEASURE_MEMTABLE_ROWS] = table->memtable_rows;
}

/*
 * lsm_due_evaluate: the action a table with these thresholds and this
 * summary of its buckets is due for.  *reason is set to every exceeded
 * threshold, e.g. "l0_generations 31 > 20, wal_lag 7 > 5", or to NULL
 * when none is (LSM_DUE_NONE).  Allocates in CurrentMemoryContext.
 */
LsmDueAction
lsm_due_evaluate(const LsmLimits *limits, const LsmTableSummary *table,
				 char **reason)
{
	StringInfoData buf;
	int			action = LSM_DUE_NONE;
	int64		measures[LSM_MEASURES];

	lsm_due_measures(table, measures);
	initStringInfo(&buf);
	for (int m = 0; m < LSM_MEASURES; m++)
	{
		if (!limits->has_max[m] || measures[m] <= limits->max[m])
			continue;
		threshold_reason_add(&buf, threshold_measures[m].name,
							 psprintf(INT64_FORMAT, measures[m]),
							 psprintf(INT64_FORMAT, limits->max[m]));
		action |= threshold_measures[m].cure;
	}
	if (limits->age_over)
	{
		threshold_reason_add(&buf, "checkpoint_age", limits->age,
							 limits->max_age);
		action = LSM_DUE_CHECKPOINT;
	}
	*reason = (action == LSM_DUE_NONE) ? NULL : buf.data;
	return (LsmDueAction) action;
}

/*
 * lsm_due_action_name: the action as the SQL functions show it.
 */
const char *
lsm_due_action_name(LsmDueAction action)
{
	switch (action)
	{
		case LSM_DUE_NONE:
			return "none";
		case LSM_DUE_COMPACT:
			return "compact";
		case LSM_DUE_FLUSH:
			return "flush";
		case LSM_DUE_CHECKPOINT:
			return "checkpoint";
	}
	return "none";
}
