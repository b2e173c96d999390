/*-------------------------------------------------------------------------
 *
 * watermark.c
 *		The checkpoint loop's decisions, as pure functions of decoded stats.
 *
 * A checkpoint converges the table's fresh tier as of the moment it
 * starts: after one flush, the target watermark of each bucket is the
 * newest generation in its L0; the loop is done when no L0 generation at or
 * below its bucket's target remains.  Generations are counted, not buckets,
 * so that a pass draining a prefix counts as progress.  Compaction is
 * triggered unless every bucket that still has outstanding generations is
 * latched ("compacting").  After a trigger, the polls follow the pass
 * duration the checkpoint has learnt (src/task/pace.c: right after the
 * predicted end, later by up to half the tolerance so that sessions do not
 * poll in lockstep); with nothing learnt, or past the prediction, the
 * interval doubles from lancelsm.poll_interval_min up to
 * lancelsm.poll_interval_max, with +-10% jitter.  A fixed interval
 * (poll_interval_min at or above poll_interval_max) turns the prediction
 * off: every poll then waits that interval, as the DBA set it.
 *
 * In a call of many tables, the checkpoints on one server share an
 * LsmPaceDrain (src/task/pace.c): once it predicts, a pass is polled when the
 * passes ahead of it in the server's permit queue should be over, and a
 * pass ranked below one seen over is polled at once
 * (lsm_watermark_rewake).
 *
 * The I/O (issuing flush, stats and compact, retries, re-issues) lives in
 * src/task/step_checkpoint.c and src/task/retry.c.  Protocol: docs/protocol.md, "The
 * checkpoint loop".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "task/watermark.h"
#include "common/pg_prng.h"
#include "utils/timestamp.h"
#include "settings.h"

/*
 * watermark_note_waiting: remember, for progress and a timeout's detail,
 * the first bucket of this poll that holds outstanding L0 and whose status
 * is not "Active" (a Sealed bucket: a drop in flight); and, for progress
 * once passes end without a drop, the first bucket of this poll that
 * holds outstanding L0 whatever its status.  The status decides
 * nothing: such a bucket is targeted and waited for like any other, as the
 * SDK's checkpoint does (rust/lancedb/src/table/checkpoint.rs).
 */
static void
watermark_note_waiting(LsmWatermark *wm, const LsmBucket *b)
{
	if (wm->holding_shard[0] == '\0')
	{
		strlcpy(wm->holding_shard, b->shard_id, sizeof(wm->holding_shard));
		strlcpy(wm->holding_status, b->status, sizeof(wm->holding_status));
	}
	if (wm->waiting_shard[0] != '\0' || pg_strcasecmp(b->status, "Active") == 0)
		return;
	strlcpy(wm->waiting_shard, b->shard_id, sizeof(wm->waiting_shard));
	strlcpy(wm->waiting_status, b->status, sizeof(wm->waiting_status));
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
	wm->latch_seen = false;
	wm->trigger_answered = false;
	wm->stalled_passes = 0;
	wm->waiting_shard[0] = '\0';
	wm->waiting_status[0] = '\0';
	wm->holding_shard[0] = '\0';
	wm->holding_status[0] = '\0';
	wm->interval_ms = lsm_poll_interval_min_ms;
	lsm_watermark_release(wm);
	wm->pass_at = 0;
	if (!stats->enabled || stats->nbuckets == 0)
		return 0;
	wm->shard_ids = palloc(stats->nbuckets * sizeof(char *));
	wm->targets = palloc(stats->nbuckets * sizeof(uint64));
	for (int i = 0; i < stats->nbuckets; i++)
	{
		const LsmBucket *b = &stats->buckets[i];
		uint64		newest = 0;

		if (b->ngenerations == 0)
			continue;			/* whatever its status */
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
 * watermark_count_stall: count the passes that end without the outstanding
 * count dropping.  A pass has ended when this poll sees no latch held on an
 * outstanding bucket while the previous poll saw one, or while a compact
 * was answered 2xx since (the latch is held from dispatch, so that pass is
 * over too).  A drop resets the count.
 */
static void
watermark_count_stall(LsmWatermark *wm, bool progressed, bool pass_running)
{
	if (progressed)
		wm->stalled_passes = 0;
	else if (!pass_running && (wm->latch_seen || wm->trigger_answered))
		wm->stalled_passes++;
	wm->latch_seen = pass_running;
	wm->trigger_answered = false;
}

/*
 * lsm_watermark_stall_suspected: whether LSM_STALL_SUSPECT_PASSES passes in
 * a row ended with no drop in the outstanding count: compacted generations
 * may be kept listed, or the passes merged nothing (a diagnosis, not a
 * failure).
 */
bool
lsm_watermark_stall_suspected(const LsmWatermark *wm)
{
	return wm->stalled_passes >= LSM_STALL_SUSPECT_PASSES;
}

/*
 * lsm_watermark_waiting: the bucket that lancelsm_progress names as the
 * one a checkpoint waits on, with its status into *status: a bucket that
 * is not Active holding outstanding L0; else, once a pass has ended
 * without a drop in the outstanding count, the first bucket still holding
 * outstanding L0 (its passes drain nothing: every outstanding bucket
 * waits alike, so the first in the server's order stands for them); ""
 * when neither.  Never raises an error.
 */
const char *
lsm_watermark_waiting(const LsmWatermark *wm, const char **status)
{
	if (wm->waiting_shard[0] != '\0' || wm->stalled_passes == 0)
	{
		*status = wm->waiting_status;
		return wm->waiting_shard;
	}
	*status = wm->holding_status;
	return wm->holding_shard;
}

/*
 * lsm_watermark_evaluate: read one poll's stats against the targets.
 *
 * Returns DONE when nothing at or below a target remains (a bucket that
 * disappeared has nothing outstanding) or when LSM is off; WAIT when every
 * bucket with outstanding generations is compacting; TRIGGER otherwise.
 * *progressed: outstanding dropped since the previous poll; *pass_running:
 * some bucket with outstanding generations is compacting.  Also counts
 * consecutive idle polls (neither) in wm->idle_polls, passes ended without
 * a drop in wm->stalled_passes, and notes a bucket that is not Active
 * holding outstanding generations (wm->waiting_shard).
 */
LsmNextStep
lsm_watermark_evaluate(LsmWatermark *wm, const LsmStats *stats,
					   bool *progressed, bool *pass_running)
{
	uint64		outstanding = 0;
	bool		any_idle_bucket = false;

	*progressed = false;
	*pass_running = false;
	wm->waiting_shard[0] = '\0';
	wm->waiting_status[0] = '\0';
	wm->holding_shard[0] = '\0';
	wm->holding_status[0] = '\0';
	if (!stats->enabled)
		return LSM_STEP_DONE;
	for (int i = 0; i < wm->ntargets; i++)
	{
		const LsmBucket *b = watermark_find_bucket(stats, wm->shard_ids[i], i);
		uint64		n = b ? watermark_outstanding(b, wm->targets[i]) : 0;

		if (n == 0)
			continue;
		outstanding += n;
		watermark_note_waiting(wm, b);
		if (b->compacting)
			*pass_running = true;
		else
			any_idle_bucket = true;
	}
	*progressed = outstanding < wm->last_outstanding;
	wm->last_outstanding = outstanding;
	if (*progressed && wm->pass_at != 0)
	{
		/* the pass triggered last is over: learn how long it took */
		lsm_pace_check_pass(&wm->pace_check, &wm->pass, wm->poll_ms);
		lsm_pace_learn(&wm->pace, &wm->pass, wm->poll_ms);
		wm->pace_recalled = false;
		wm->pace_learned = true;
		wm->pace_queued = wm->pass_queued;
		if (wm->pass_rank != 0)
			lsm_pace_drain_seen(wm->drain, wm->pass_rank,
								wm->pass_at / 1000 + wm->poll_ms,
								wm->drain_poll && !wm->drain_missed);
		wm->pass_rank = 0;
		if (!*pass_running)
			wm->pass_at = 0;
	}
	wm->idle_polls = (*progressed || *pass_running) ? 0 : wm->idle_polls + 1;
	watermark_count_stall(wm, *progressed, *pass_running);
	if (outstanding == 0)
		return LSM_STEP_DONE;
	return any_idle_bucket ? LSM_STEP_TRIGGER : LSM_STEP_WAIT;
}

/*
 * lsm_watermark_release: the pass triggered last, if ranked in the call's
 * drain, will not be seen over by this checkpoint (it ends, or starts
 * again from the flush).
 */
void
lsm_watermark_release(LsmWatermark *wm)
{
	if (wm->pass_rank != 0)
		lsm_pace_drain_drop(wm->drain);
	wm->pass_rank = 0;
	wm->drain_follow = false;
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
 * lsm_poll_interval_next: the wait before the next poll when no pass of
 * this checkpoint is being predicted (a trigger refused with 429, passes
 * of others), in milliseconds: the minimum after progress, otherwise
 * double the previous one, up to lancelsm.poll_interval_max.
 */
int
lsm_poll_interval_next(LsmWatermark *wm, bool progressed)
{
	lsm_watermark_release(wm);
	wm->pass_at = 0;			/* no pass of this checkpoint to predict */
	if (progressed)
	{
		wm->interval_ms = lsm_poll_interval_min_ms;
		return poll_jitter(wm->interval_ms);
	}
	wm->interval_ms = Min(Max(wm->interval_ms, 1) * 2,
						  Max(lsm_poll_interval_max_ms,
							  lsm_poll_interval_min_ms));
	return poll_jitter(wm->interval_ms);
}

/*
 * poll_interval_fixed: whether the DBA fixed the poll interval
 * (lancelsm.poll_interval_min at or above lancelsm.poll_interval_max),
 * which turns the pass-end prediction off.
 */
static bool
poll_interval_fixed(void)
{
	return lsm_poll_interval_min_ms >= lsm_poll_interval_max_ms;
}

/*
 * drain_step_next_ms: the next wait of a pass that the call's drain says
 * is over, or about to be, but that a poll saw running: from
 * lancelsm.poll_interval_min, doubling at each use (drain_step_ms) up to
 * lancelsm.poll_interval_max, so that a pass that breaks the queue's order
 * costs a few polls, not one per sighting.
 */
static int32
drain_step_next_ms(const LsmWatermark *wm)
{
	if (wm->drain_step_ms == 0)
		return Max(lsm_poll_interval_min_ms, 1);
	return Min(wm->drain_step_ms * 2,
			   Max(lsm_poll_interval_max_ms, lsm_poll_interval_min_ms));
}

/*
 * drain_step_ms: drain_step_next_ms, used: the step doubles.
 */
static int32
drain_step_ms(LsmWatermark *wm)
{
	wm->drain_step_ms = drain_step_next_ms(wm);
	return wm->drain_step_ms;
}

/*
 * drain_end_ms: whether the call's drain predicts the end of the pass;
 * the prediction, in ms after the trigger's answer, into *end_ms.
 */
static bool
drain_end_ms(const LsmWatermark *wm, int64 *end_ms)
{
	if (wm->pass_rank == 0 ||
		!lsm_pace_drain_predict(wm->drain, wm->pass_rank, end_ms))
		return false;
	*end_ms -= wm->pass_at / 1000;
	return true;
}

/*
 * poll_drain_wait: when the call's drain predicts the end of the pass,
 * the wait before its next poll, in ms from elapsed (ms after the
 * trigger's answer, now), given own_wait, the pass's own schedule: the
 * prediction when it is later than the minimum interval from now (*follow
 * set true: the poll follows the drain, lsm_watermark_drain_due), else the
 * shorter of own_wait and the drain's step, which doubles only when it is
 * the wait: a pass polled on its own schedule meanwhile must not find the
 * step grown to poll_interval_max the moment it needs it.  -1: no
 * prediction.
 */
static int32
poll_drain_wait(LsmWatermark *wm, int32 elapsed, int32 own_wait,
				bool *follow)
{
	int64		end_ms;

	*follow = false;
	if (!drain_end_ms(wm, &end_ms))
		return -1;
	if (end_ms > (int64) elapsed + lsm_poll_interval_min_ms)
	{
		*follow = true;
		return (int32) Min(end_ms - elapsed, (int64) PG_INT32_MAX);
	}
	if (own_wait < drain_step_next_ms(wm))
		return own_wait;		/* its own schedule: the step is not used */
	return drain_step_ms(wm);
}

/*
 * poll_wait_until: the wait, in milliseconds from now, before the poll at
 * poll_ms after the trigger's answer, or the drain's when it predicts
 * (poll_drain_wait); jittered: later by up to half the tolerance inside
 * the predicted bracket, +-10% outside it, not at all at the drain's (the
 * ranks already spread those polls, and the next predictions start from
 * them).  Records the poll's time in wm->poll_ms.
 */
static int
poll_wait_until(LsmWatermark *wm, int32 poll_ms, TimestampTz now)
{
	int32		elapsed = (int32) ((now - wm->pass_at) / 1000);
	int32		wait = Max(1, poll_ms - elapsed);
	int32		drain_wait = poll_drain_wait(wm, elapsed, wait,
											 &wm->drain_follow);
	const LsmPace *k = &wm->pass.known;

	wm->drain_poll = drain_wait >= 0;
	if (drain_wait >= 0)
		wait = Max(1, drain_wait);
	else if (k->hi_ms > 0 && poll_ms <= k->hi_ms)
		wait = lsm_pace_jitter_ms(wait,
								  lsm_pace_tolerance_ms(k->hi_ms) / 2,
								  pg_prng_double(&pg_global_prng_state));
	else
		wait = poll_jitter(wait);
	wm->poll_ms = elapsed + wait;
	return wait;
}

/*
 * A rewake does not move a poll by less than 1 / REWAKE_SLACK_DIV of the
 * wait still ahead of it.  Each pass seen over moves the drain's
 * prediction for every pass ranked after it by a few milliseconds; moving
 * each of thousands of waiting polls at each sighting put 14 % of a
 * 10,000-table call's user CPU into the timer heap (4 % with the slack),
 * for moves a later sighting makes anyway as the poll draws near and the
 * slack shrinks with it.  The polls that follow the drain are not rewoken
 * at all now (lsm_watermark_drain_due): only those that wait on a
 * schedule of their own are.
 */
#define REWAKE_SLACK_DIV 32

/*
 * lsm_watermark_rewake: the call's drain has seen a higher rank over than
 * before while this checkpoint waits for its next poll, due at wake_at;
 * when that poll should now be (0: when it was).  A pass ranked below the
 * one seen over is probably over too: poll it now, unless a poll saw it
 * running less than drain_step_ms ago (which then doubles).  Otherwise at
 * the drain's new prediction, when the wait followed the drain's or the
 * prediction is earlier, and it moves the poll by more than the slack
 * (REWAKE_SLACK_DIV).  Records the poll's time in wm->poll_ms; the poll
 * follows the drain afterwards (wm->drain_follow) only when its new wait
 * is the drain's prediction.
 */
TimestampTz
lsm_watermark_rewake(LsmWatermark *wm, TimestampTz now, TimestampTz wake_at)
{
	int32		elapsed = (int32) ((now - wm->pass_at) / 1000);
	int64		ahead_ms = Max((wake_at - now) / 1000, 0);
	int64		slack_ms = ahead_ms / REWAKE_SLACK_DIV;
	int64		wait;

	wm->drain_follow = false;	/* set again below when it does */
	if (wm->pass_rank == 0)
		return 0;
	if (wm->pass_rank < wm->drain->last_rank)
	{
		if (wm->pass.running_ms >= 0 &&
			elapsed - wm->pass.running_ms < wm->drain_step_ms)
			return 0;
		(void) drain_step_ms(wm);
		wm->drain_missed = true;
		wait = 0;
	}
	else if (drain_end_ms(wm, &wait))
		wait = Max(wait - elapsed, (int64) lsm_poll_interval_min_ms);
	else
		return 0;
	wait = Min(wait, (int64) PG_INT32_MAX - elapsed);
	if (!wm->drain_poll && elapsed + wait >= wm->poll_ms)
		return 0;			/* its own schedule polls sooner */
	if (wait > 0 && wait >= ahead_ms - slack_ms && wait <= ahead_ms + slack_ms)
		return 0;			/* within the slack */
	wm->drain_poll = true;
	wm->drain_follow = wait > 0;
	wm->poll_ms = elapsed + (int32) wait;
	return TimestampTzPlusMilliseconds(now, wait);
}

/*
 * lsm_watermark_follows_drain: whether the checkpoint's next poll waits
 * for the call's drain to predict its pass over (lsm_watermark_drain_due)
 * rather than for a time of its own: its pass is ranked above every pass
 * seen over, and its wait was the drain's prediction.
 */
bool
lsm_watermark_follows_drain(const LsmWatermark *wm)
{
	return wm->drain_follow && wm->drain &&
		wm->pass_rank > wm->drain->last_rank;
}

/*
 * lsm_watermark_drain_due: for a checkpoint whose next poll follows the
 * drain (lsm_watermark_follows_drain), when that poll is due, into
 * *due_at: the drain's prediction of its pass's end, but no sooner than
 * lancelsm.poll_interval_min after the last pass seen over, where
 * lsm_watermark_rewake would move it at that sighting.  The predictions
 * grow with the rank, so of the passes that follow one drain the lowest
 * ranked is due first.  Returns false when its pass is ranked at or
 * below one seen over or nothing is predicted: the poll then follows the
 * drain no more, and lsm_watermark_rewake decides where it goes.
 */
bool
lsm_watermark_drain_due(const LsmWatermark *wm, TimestampTz *due_at)
{
	int64		end_ms;

	if (!lsm_watermark_follows_drain(wm) ||
		!lsm_pace_drain_predict(wm->drain, wm->pass_rank, &end_ms))
		return false;
	end_ms = Max(end_ms, wm->drain->last_ms + lsm_poll_interval_min_ms);
	*due_at = (TimestampTz) end_ms * 1000;
	return true;
}

/*
 * lsm_watermark_drain_polled: the poll that followed the drain is sent at
 * now; it follows it no more, and its time is recorded in wm->poll_ms.
 */
void
lsm_watermark_drain_polled(LsmWatermark *wm, TimestampTz now)
{
	wm->drain_follow = false;
	wm->poll_ms = (int32) ((now - wm->pass_at) / 1000);
}

/*
 * lsm_poll_after_trigger: compaction was triggered at now (its answer);
 * the wait before the first poll, in milliseconds (src/task/pace.c),
 * never more than lancelsm.poll_interval_max whatever the pace predicts.
 */
int
lsm_poll_after_trigger(LsmWatermark *wm, TimestampTz now)
{
	int32		cap = Max(lsm_poll_interval_max_ms, lsm_poll_interval_min_ms);
	int32		wait;

	wm->trigger_answered = true;	/* its pass holds the latch until over */
	if (poll_interval_fixed())
	{
		wm->interval_ms = lsm_poll_interval_min_ms;
		return poll_jitter(wm->interval_ms);
	}
	lsm_pace_pass_start(&wm->pass, &wm->pace, wm->pace_recalled);
	wm->pass_at = now;
	lsm_watermark_release(wm);
	if (wm->drain)
	{
		wm->pass_queued = wm->drain->outstanding >= 2;
		wm->pass_rank = lsm_pace_drain_rank(wm->drain, now / 1000);
		wm->drain_step_ms = 0;
		wm->drain_poll = false;
		wm->drain_missed = false;
	}
	wait = poll_wait_until(wm,
						   lsm_pace_first_poll_ms(&wm->pass,
												  lsm_poll_interval_min_ms),
						   now);
	/* whatever was learnt or recalled, jitter included: never later */
	if (wait > cap)
	{
		wm->poll_ms -= wait - cap;
		wait = cap;
		wm->drain_follow = false;	/* until a sighting moves it */
	}
	return wait;
}

/*
 * lsm_poll_after_wait: a poll answered at now saw every outstanding
 * bucket compacting (progressed: fewer outstanding than before); the wait
 * before the next poll, in milliseconds: the triggered pass's schedule
 * (src/task/pace.c), or lsm_poll_interval_next when there is none.
 */
int
lsm_poll_after_wait(LsmWatermark *wm, bool progressed, TimestampTz now)
{
	wm->drain_follow = false;
	if (wm->pass_at == 0 || poll_interval_fixed())
		return lsm_poll_interval_next(wm, progressed);
	if (progressed)
		lsm_pace_pass_start(&wm->pass, &wm->pace, false);
	if (wm->drain_poll && wm->pass_rank != 0)
	{
		/* a poll the drain predicted saw the pass running */
		lsm_pace_drain_running(wm->drain);
		wm->drain_missed = true;
	}
	return poll_wait_until(wm,
						   lsm_pace_next_poll_ms(&wm->pass, wm->poll_ms,
												 lsm_poll_interval_min_ms,
												 lsm_poll_interval_max_ms),
						   now);
}
