/*-------------------------------------------------------------------------
 *
 * checkpoint.c
 *		The checkpoint loop's decisions, as pure functions of decoded stats.
 *
 * A checkpoint converges the table's fresh tier as of the moment it
 * starts: after one flush, the target watermark of each bucket is the
 * newest generation in its L0; the loop is done when no L0 generation at or
 * below its bucket's target remains.  Generations are counted, not buckets,
 * so that a pass draining a prefix counts as progress.  Compaction is
 * triggered unless every bucket that still has outstanding generations is
 * latched ("compacting").  The poll interval adapts: short right after a
 * trigger or progress, doubling while nothing changes, within
 * lancelsm.poll_interval_min and lancelsm.poll_interval_max, with +-10%
 * jitter so that sessions do not poll in lockstep.
 *
 * The I/O (issuing flush, stats and compact, retries, re-issues) lives in
 * src/task.c.  Protocol: docs/protocol.md, "The
 * checkpoint loop".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "checkpoint.h"
#include "common/pg_prng.h"
#include "lancelsm.h"

/*
 * watermark_sealed: whether a bucket is Sealed.  A Sealed bucket is being
 * dropped: no pass will ever merge its L0 (compact cannot latch it), so it
 * gets no target, and a bucket sealed during the loop stops counting.
 */
static bool
watermark_sealed(const LsmBucket *b)
{
	return strcmp(b->status, "Sealed") == 0;
}

/*
 * lsm_watermark_set: set the targets from the stats read after the flush.
 * Returns the number of buckets with a target (0: already converged).
 * Allocates in CurrentMemoryContext.
 */
int
lsm_watermark_set(LsmWatermark *wm, const LsmStats *stats)
{
	int			n = 0;

	wm->ntargets = 0;
	wm->initial_outstanding = 0;
	wm->last_outstanding = PG_UINT64_MAX;
	wm->idle_polls = 0;
	wm->interval_ms = lsm_poll_interval_min_ms;
	if (!stats->enabled || stats->nbuckets == 0)
		return 0;
	wm->shard_ids = palloc(stats->nbuckets * sizeof(char *));
	wm->targets = palloc(stats->nbuckets * sizeof(uint64));
	for (int i = 0; i < stats->nbuckets; i++)
	{
		const LsmBucket *b = &stats->buckets[i];
		uint64		newest = 0;

		if (b->ngenerations == 0 || watermark_sealed(b))
			continue;
		for (int g = 0; g < b->ngenerations; g++)
			newest = Max(newest, b->generations[g].generation);
		wm->shard_ids[n] = pstrdup(b->shard_id);
		wm->targets[n] = newest;
		/* every generation is at or below the newest one */
		wm->initial_outstanding += b->ngenerations;
		n++;
	}
	wm->ntargets = n;
	return n;
}

/*
 * watermark_find_bucket: the bucket of stats with the given shard_id, or
 * NULL.  hint is where to look first (buckets usually keep their order).
 */
static const LsmBucket *
watermark_find_bucket(const LsmStats *stats, const char *shard_id, int hint)
{
	if (hint < stats->nbuckets &&
		strcmp(stats->buckets[hint].shard_id, shard_id) == 0)
		return &stats->buckets[hint];
	for (int i = 0; i < stats->nbuckets; i++)
		if (strcmp(stats->buckets[i].shard_id, shard_id) == 0)
			return &stats->buckets[i];
	return NULL;
}

/*
 * watermark_outstanding: L0 generations of a bucket at or below target.
 */
static uint64
watermark_outstanding(const LsmBucket *b, uint64 target)
{
	uint64		n = 0;

	for (int g = 0; g < b->ngenerations; g++)
		if (b->generations[g].generation <= target)
			n++;
	return n;
}

/*
 * lsm_watermark_evaluate: read one poll's stats against the targets.
 *
 * Returns DONE when nothing at or below a target remains (a bucket that
 * disappeared has nothing outstanding) or when LSM is off; WAIT when every
 * bucket with outstanding generations is compacting; TRIGGER otherwise.
 * *progressed: outstanding dropped since the previous poll; *pass_running:
 * some bucket with outstanding generations is compacting.  Also counts
 * consecutive idle polls (neither) in wm->idle_polls.
 */
LsmNextStep
lsm_watermark_evaluate(LsmWatermark *wm, const LsmStats *stats,
					   bool *progressed, bool *pass_running)
{
	uint64		outstanding = 0;
	bool		any_idle_bucket = false;

	*progressed = false;
	*pass_running = false;
	if (!stats->enabled)
		return LSM_STEP_DONE;
	for (int i = 0; i < wm->ntargets; i++)
	{
		const LsmBucket *b = watermark_find_bucket(stats, wm->shard_ids[i], i);
		uint64		n = (b && !watermark_sealed(b)) ?
			watermark_outstanding(b, wm->targets[i]) : 0;

		if (n == 0)
			continue;
		outstanding += n;
		if (b->compacting)
			*pass_running = true;
		else
			any_idle_bucket = true;
	}
	*progressed = outstanding < wm->last_outstanding;
	wm->last_outstanding = outstanding;
	wm->idle_polls = (*progressed || *pass_running) ? 0 : wm->idle_polls + 1;
	if (outstanding == 0)
		return LSM_STEP_DONE;
	return any_idle_bucket ? LSM_STEP_TRIGGER : LSM_STEP_WAIT;
}

/*
 * poll_jitter: interval_ms scaled by a random factor in [0.9, 1.1].
 */
static int
poll_jitter(int interval_ms)
{
	double		factor = 0.9 + 0.2 * pg_prng_double(&pg_global_prng_state);

	return Max(1, (int) (interval_ms * factor));
}

/*
 * lsm_poll_interval_reset: the wait before the first poll after a trigger
 * or after progress: the minimum interval (jittered), in milliseconds.
 */
int
lsm_poll_interval_reset(LsmWatermark *wm)
{
	wm->interval_ms = lsm_poll_interval_min_ms;
	return poll_jitter(wm->interval_ms);
}

/*
 * lsm_poll_interval_next: the wait before the next poll, in milliseconds:
 * back to the minimum after progress, otherwise double the previous one,
 * up to lancelsm.poll_interval_max.
 */
int
lsm_poll_interval_next(LsmWatermark *wm, bool progressed)
{
	if (progressed)
		return lsm_poll_interval_reset(wm);
	wm->interval_ms = Min(Max(wm->interval_ms, 1) * 2,
						  Max(lsm_poll_interval_max_ms,
							  lsm_poll_interval_min_ms));
	return poll_jitter(wm->interval_ms);
}
