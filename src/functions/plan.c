/*-------------------------------------------------------------------------
 *
 * plan.c
 *		The plan of a declared table's next stats read: when
 *		lancelsm_checkpoint_due() needs to read it again, and why.
 *
 * A due run reads a table only when its next read is due
 * (src/functions/due.c); this file plans that read once the table has
 * been read, from what can be known without another request:
 *
 *	 age		max_checkpoint_age expires at a known time
 *				(coalesce(last_checkpoint_at, added_at) + max_checkpoint_age)
 *	 projected	a measure with a threshold (l0_generations, l0_bytes,
 *				wal_lag, memtable_rows) that grew between the last two
 *				reads could cross its threshold, at the same rate, after
 *				time T at the earliest: the next read is at T / 2
 *				(PLAN_MARGIN), so that the reads close in on the crossing
 *				and a rate that rises is seen before the crossing.  The
 *				measures are counted in steps (L0 grows by a whole
 *				generation at a seal), so a read sees the writes only up
 *				to the last step: up to one step more may have been
 *				written by each read.  T is taken at the fastest rate
 *				the two reads allow (growth + one step over the time
 *				between them) from one step above what was read, so a
 *				steady writer is read no later than the run at which its
 *				threshold is first exceeded
 *	 bound		the last read + max_read_interval, whatever the projection;
 *				the first bound after reads planned otherwise is spread
 *				over its second half by the table's names (phase), so that
 *				tables declared or altered together do not all come due at
 *				the same run again
 *
 * and the next read is the earliest of them.  Times run from the start of
 * the run that read, so that a bound of 15 minutes is read by the run 15
 * minutes later, not the one after it.  The rest is conservative: the
 * table is read at the next run (no time: NULL) when its rate cannot be
 * known from the two reads:
 *
 *	 first read			no earlier read to compare with, and the table
 *						holds writes: unflushed ones (memtable rows, a WAL
 *						lag), or L0 generations where it has a threshold
 *						on L0 (a table written at a whole number of
 *						memtables between reads may be read just after a
 *						seal, with its memtable empty): it may be written
 *						now (a table with none is planned as a quiet one)
 *	 fell <measure>		a measure with a threshold fell (a flush, the
 *						server's compaction): what was written meanwhile
 *						is unknown, and may be much
 *	 started growing	a measure grew, or the table was written, after a
 *						read planned by the bound or the age: it may have
 *						started just before, so the two reads give too
 *						low a rate
 *	 written			the table was written (its write position moved)
 *						and its L0 measure with a threshold did not change:
 *						L0 grows in steps, one generation per memtable
 *						flush, so no rate of it is known, and the next
 *						step may cross the threshold
 *
 * The write position (lsm_read_plan_written) never falls: it moves with
 * every write the server's hints show, whatever a flush or the server's
 * compaction did.  A measure that did not change, in a table not
 * written, projects nothing: a quiet table is read at its bound, or when
 * its age expires.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "functions/plan.h"

/* The next read is at this fraction of the time to a projected crossing. */
#define PLAN_MARGIN 0.5

/* Names of the measures in reasons (LsmMeasure order). */
static const char *const plan_measure_names[LSM_MEASURES] = {
	"l0_generations", "l0_bytes", "wal_lag", "memtable_rows"
};

/*
 * plan_any_limit: whether the table has a threshold on a measure (not
 * only an age).
 */
static bool
plan_any_limit(const LsmLimits *limits)
{
	for (int m = 0; m < LSM_MEASURES; m++)
		if (limits->has_max[m])
			return true;
	return false;
}

/*
 * plan_written: whether the table was written between the two reads (its
 * write position moved; unknown before a read that kept it: no).
 */
static bool
plan_written(const LsmReadPlanInput *in)
{
	return in->has_prev && in->has_prev_written &&
		in->written != in->prev_written;
}

/*
 * plan_holds_writes: whether a table read for the first time holds writes
 * that may still be coming: memtable rows, a WAL lag, or L0 generations
 * when a threshold is on L0.
 */
static bool
plan_holds_writes(const LsmReadPlanInput *in)
{
	const LsmLimits *limits = in->limits;

	return in->values[LSM_MEASURE_MEMTABLE_ROWS] > 0 ||
		in->values[LSM_MEASURE_WAL_LAG] > 0 ||
		(in->values[LSM_MEASURE_L0_GENERATIONS] > 0 &&
		 (limits->has_max[LSM_MEASURE_L0_GENERATIONS] ||
		  limits->has_max[LSM_MEASURE_L0_BYTES]));
}

/*
 * plan_next_run: the reason of a read at the next run, when the growth
 * between the two reads cannot be projected (see the head of the file),
 * or NULL when it can.
 */
static char *
plan_next_run(const LsmReadPlanInput *in)
{
	const LsmLimits *limits = in->limits;

	if (!in->has_prev || in->read_at <= in->prev_at)
		return plan_holds_writes(in) ? pstrdup("first read") : NULL;
	for (int m = 0; m < LSM_MEASURES; m++)
		if (limits->has_max[m] && in->values[m] < in->prev_values[m])
			return psprintf("fell %s", plan_measure_names[m]);
	for (int m = 0; m < LSM_MEASURES; m++)
		if (((limits->has_max[m] && in->values[m] > in->prev_values[m]) ||
			 plan_written(in)) && !in->prev_rate_known)
			return pstrdup("started growing");
	for (int m = LSM_MEASURE_L0_GENERATIONS; m <= LSM_MEASURE_L0_BYTES; m++)
		if (limits->has_max[m] && in->values[m] == in->prev_values[m] &&
			plan_written(in))
			return pstrdup("written");
	return NULL;
}

/*
 * plan_step: the step in which measure m grows, as a read sees it: one
 * generation's bytes for l0_bytes (their mean in this read), else 1.
 */
static double
plan_step(const LsmReadPlanInput *in, int m)
{
	int64		generations = in->values[LSM_MEASURE_L0_GENERATIONS];

	if (m == LSM_MEASURE_L0_BYTES && generations > 0)
		return Max((double) in->values[m] / (double) generations, 1.0);
	return 1.0;
}

/*
 * plan_crossing: microseconds from the read until measure m, which grew
 * between the two reads, may exceed its threshold at the earliest at the
 * rate it grew (see "projected" at the head of the file; 0: at once).
 */
static double
plan_crossing(const LsmReadPlanInput *in, int m, double dt)
{
	double		step = plan_step(in, m);
	double		fastest = ((double) (in->values[m] - in->prev_values[m]) + step) / dt;
	double		left = (double) in->limits->max[m] + 1 - step - (double) in->values[m];

	return Max(left, 0) / fastest;
}

/*
 * lsm_read_plan
 *		The time of a table's next stats read, planned at a read (see the
 *		head of the file), and in *reason why: "age", "bound",
 *		"projected <measure> at <rate>/s", or, with 0 returned (read at
 *		the next run), "first read", "fell <measure>", "started growing"
 *		or "written".  A measure already over its threshold is not planned
 *		here: the table is acted on and read at the next run.  Allocates
 *		*reason in CurrentMemoryContext.
 */
TimestampTz
lsm_read_plan(const LsmReadPlanInput *in, char **reason)
{
	TimestampTz next = in->read_at + in->bound_us;
	double		dt = (double) (in->read_at - in->prev_at);

	if (!in->prev_bound)
		next -= (TimestampTz) (in->bound_us * 0.5 * in->phase);

	if (plan_any_limit(in->limits) && (*reason = plan_next_run(in)) != NULL)
		return 0;
	*reason = pstrdup("bound");
	if (in->age_expiry != 0 && in->age_expiry <= next)
	{
		next = in->age_expiry;
		*reason = pstrdup("age");
	}
	for (int m = 0; m < LSM_MEASURES && in->has_prev; m++)
	{
		double		wait;		/* microseconds */

		if (!in->limits->has_max[m] || in->values[m] <= in->prev_values[m])
			continue;
		wait = plan_crossing(in, m, dt) * PLAN_MARGIN;
		if (wait >= (double) (next - in->read_at))
			continue;
		next = in->read_at + (TimestampTz) wait;
		*reason = psprintf("projected %s at %.3g/s", plan_measure_names[m],
						   (double) (in->values[m] - in->prev_values[m]) /
						   dt * USECS_PER_SEC);
	}
	return next;
}

/*
 * lsm_read_plan_rate_known: whether a read planned for this reason (the
 * stored next_read_reason; NULL: none) measures a rate with the read
 * before it: a read at the next run or at a projection does; one at the
 * bound or the age, one after a change of the thresholds or a failed
 * read may come long after the writes started.
 */
bool
lsm_read_plan_rate_known(const char *reason)
{
	return reason != NULL &&
		(strcmp(reason, "first read") == 0 ||
		 strcmp(reason, "started growing") == 0 ||
		 strcmp(reason, "acted") == 0 ||
		 strcmp(reason, "written") == 0 ||
		 strncmp(reason, "fell ", 5) == 0 ||
		 strncmp(reason, "projected ", 10) == 0);
}

/*
 * lsm_read_plan_written: the write position of a table: the sum over its
 * buckets of the last WAL entry position seen and the current generation,
 * each of which only moves forward while the table is written (a flush
 * advances the generation, a write the position), whatever a flush or
 * compaction does to the measures.  Wraps on overflow: it is only
 * compared for a change.
 */
int64
lsm_read_plan_written(const LsmTableSummary *table)
{
	uint64		sum = 0;

	for (int b = 0; b < table->nbuckets; b++)
		sum += (uint64) table->buckets[b].wal_entry_position_last_seen +
			(uint64) table->buckets[b].current_generation;
	return (int64) sum;
}
