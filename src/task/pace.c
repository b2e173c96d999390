/*-------------------------------------------------------------------------
 *
 * pace.c
 *		When to poll for the end of a compaction pass.
 *
 * The server says whether a pass is running, not when it will end, so a
 * checkpoint learns how long passes take on a table: each pass that ends
 * brackets its duration between the last poll that saw it running (lo)
 * and the poll that saw it over (hi), in milliseconds from the answer to
 * the compact trigger.  The next pass is then polled inside that bracket:
 * first at its middle while the bracket is wider than twice the tolerance
 * (so it narrows pass after pass, by halves), at its end once it is
 * narrow; a pass still running at that first poll is polled at the middle
 * of what is left only while that is wider than four times the tolerance,
 * else at the end (see PACE_AGAIN_SPLIT).  A
 * pass seen over at the first poll widens the bracket downwards by its
 * width, so that passes that get shorter are found out in a few passes.  A pass still
 * running at hi is longer than predicted: the schedule falls back to a
 * doubling step from the tolerance, bounded by lancelsm.poll_interval_max;
 * with nothing known it is the doubling from lancelsm.poll_interval_min.
 * A prediction from an earlier checkpoint (a hedge) is first checked by a
 * poll at half its lower bound, so that a table whose passes got much
 * shorter costs at most half the old duration; a pass that outlasts it is
 * polled at steps of a quarter of the time elapsed, so that passes that
 * got several times longer since cost a few polls (the tolerance's
 * doubling suits a pass that is a little longer than the last of the
 * same call, not one whose table changed between checkpoints).
 *
 * A table checkpointed again and again at the same pace need not pay for
 * that check every time (LsmPaceCheck): a checkpoint none of whose passes
 * ended outside the bracket it recalled, and one of which was seen to end
 * inside it (running within PACE_STEADY_SPAN tolerances before its end,
 * over within as many after), agrees with the checkpoint before; once
 * PACE_STEADY_AGREED checkpoints agreed, with none since whose passes
 * ended outside its bracket, the bracket is steady (a checkpoint whose
 * passes ended inside it, none seen to, neither adds to the count nor
 * resets it).  One agreement is not enough: passes whose durations change
 * from one checkpoint to the next agree by chance now and then (one
 * checkpoint in 20 with durations drawn anew from 100 ms to 1 s), and the
 * next, drawn anew again, would go without the check.  The next checkpoint
 * then follows a steady bracket as its own call's, with no early poll,
 * and widens it downwards only after PACE_STEADY_AT_ONCE passes in a row
 * were seen over at their first poll, not after each: a third of its
 * passes cost a probe before the end instead of half (about 1.33 polls a
 * pass, not 1.67).  A pass seen over before the recalled bracket, or
 * running past its end, makes the next checkpoint hedge again.
 *
 * A call of many tables on one server adds what its passes say of each
 * other (LsmPaceDrain): the server grants compaction permits in trigger
 * order, so a pass's duration there is mostly its wait in the queue, which
 * no bracket of earlier passes predicts.  Once enough passes have been
 * seen over, a pass is predicted to end when the ranks seen over reach its
 * own, at the rate they have advanced since the first sighting; a pass
 * ranked below one seen over is due now.
 *
 * Everything here is a pure function of its arguments (times in
 * milliseconds), unit-tested by test/unit/pace_test.c; the clock,
 * the requests and the shared memory that keeps the bracket between
 * checkpoints are the callers' (src/task/task.c, src/task/step_checkpoint.c,
 * src/record/progress.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "task/pace.h"

/*
 * Past a hedge (a prediction from an earlier checkpoint that this pass
 * outlasts), each poll steps by this fraction of the time elapsed.
 */
#define PACE_HEDGE_STEP_DIV 4

/* The tolerance: a bracket this narrow is not split further. */
#define PACE_TOLERANCE_MIN_MS 5
#define PACE_TOLERANCE_SHIFT 5	/* 1/32 of the duration, ~3 % */

/*
 * lsm_pace_tolerance_ms: how far past the end of a pass of about hi_ms a
 * poll may land: 5 ms or 1/32 of hi_ms, whichever is larger.
 */
int32
lsm_pace_tolerance_ms(int32 hi_ms)
{
	return Max(PACE_TOLERANCE_MIN_MS, hi_ms >> PACE_TOLERANCE_SHIFT);
}

/*
 * A checkpoint agrees with the one before when its passes ended inside the
 * bracket that one left; the bracket is steady after this many in a row.
 */
#define PACE_STEADY_AGREED 2

/* pace_steady: whether pace is followed without a hedge's early poll. */
static bool
pace_steady(const LsmPace *pace)
{
	return pace->agreed >= PACE_STEADY_AGREED;
}

/*
 * lsm_pace_pass_start: a pass was triggered; known is what is known of
 * the table's passes (hi_ms 0: nothing), recalled whether it comes from an
 * earlier checkpoint rather than from this call (a hedge unless steady).
 */
void
lsm_pace_pass_start(LsmPacePass *pass, const LsmPace *known, bool recalled)
{
	pass->known = *known;
	pass->hedge = recalled && known->hi_ms > 0 && !pace_steady(known);
	pass->running_ms = -1;
	pass->step_ms = 0;
}

/*
 * A pass that outlasts the first poll inside its bracket is polled again
 * at the middle of what is left only while that is wider than
 * PACE_AGAIN_SPLIT tolerances, else at the end.  Halving down to two
 * tolerances, as the first poll does, narrows into the run-to-run spread
 * of the pass durations, where a poll sees the pass still running about
 * half the time and costs the pass a third poll for a few milliseconds.
 */
#define PACE_FIRST_SPLIT 2
#define PACE_AGAIN_SPLIT 4

/*
 * A pass seen running at most this many tolerances before the end of the
 * recalled bracket and over at most as many after it ended inside it; a
 * steady bracket widens after this many passes in a row seen over at
 * their first poll.
 */
#define PACE_STEADY_SPAN 3
#define PACE_STEADY_AT_ONCE 2

/*
 * pace_inside: the next poll inside the bracket after a poll at from_ms
 * (before hi; below lo: none inside yet): the middle of what is
 * left of the bracket while that is wider than split tolerances, else its
 * end.
 */
static int32
pace_inside(const LsmPace *k, int32 from_ms, int split)
{
	int32		lo = Max(k->lo_ms, from_ms);
	int32		left = k->hi_ms - lo;

	if (left > split * lsm_pace_tolerance_ms(k->hi_ms))
		return lo + left / 2;
	return k->hi_ms;
}

/*
 * lsm_pace_first_poll_ms: when to poll first after the trigger, in ms
 * from its answer (at least 1): min_ms with nothing known; half the lower
 * bound for a hedge; else inside the bracket.
 */
int32
lsm_pace_first_poll_ms(const LsmPacePass *pass, int32 min_ms)
{
	const LsmPace *k = &pass->known;

	if (k->hi_ms <= 0)
		return Max(1, min_ms);
	if (pass->hedge && k->lo_ms / 2 > min_ms)
		return k->lo_ms / 2;
	return Max(1, pace_inside(k, 0, PACE_FIRST_SPLIT));
}

/*
 * lsm_pace_next_poll_ms: a poll at running_ms (from the trigger's answer)
 * saw the pass still running; when to poll next, in ms from the answer
 * (always later than running_ms): inside the bracket while it lasts,
 * then past a hedge a quarter of running_ms (at least min_ms, at most
 * max_ms), else a step from min_ms (nothing known) or the tolerance (a
 * longer pass than predicted) that doubles up to max_ms.
 */
int32
lsm_pace_next_poll_ms(LsmPacePass *pass, int32 running_ms, int32 min_ms,
					  int32 max_ms)
{
	const LsmPace *k = &pass->known;

	pass->running_ms = running_ms;
	if (k->hi_ms > 0 && running_ms < k->hi_ms)
		return pace_inside(k, running_ms,
						   running_ms < k->lo_ms ? PACE_FIRST_SPLIT :
						   PACE_AGAIN_SPLIT);
	if (pass->hedge)
	{
		/* a stale prediction: step by a quarter of the time elapsed */
		int32		step = Max(running_ms / PACE_HEDGE_STEP_DIV, min_ms);

		return running_ms + Max(Min(step, Max(max_ms, min_ms)), 1);
	}
	if (pass->step_ms == 0)
		pass->step_ms = (k->hi_ms > 0) ? lsm_pace_tolerance_ms(k->hi_ms) :
			Max(1, min_ms) * 2;
	else
		pass->step_ms = Min((int64) pass->step_ms * 2, (int64) PG_INT32_MAX);
	pass->step_ms = Min(pass->step_ms, Max(max_ms, min_ms));
	pass->step_ms = Max(pass->step_ms, 1);
	return running_ms + pass->step_ms;
}

/*
 * lsm_pace_learn: the pass of schedule pass was seen over at done_ms;
 * update pace (the bracket the next pass follows).
 */
void
lsm_pace_learn(LsmPace *pace, const LsmPacePass *pass, int32 done_ms)
{
	const LsmPace *k = &pass->known;

	done_ms = Max(done_ms, 1);
	if (pass->running_ms >= 0)
	{
		/*
		 * Seen running, then over: a bracket of this very pass, narrowed
		 * by the lower bound known before when this pass agrees with it (a
		 * hedge's early poll says little).
		 */
		pace->lo_ms = pass->running_ms;
		if (k->hi_ms > 0 && k->lo_ms < done_ms)
			pace->lo_ms = Max(pace->lo_ms, k->lo_ms);
		pace->lo_ms = Min(pace->lo_ms, done_ms - 1);
		pace->hi_ms = done_ms;
		pace->at_once = 0;
		return;
	}
	/*
	 * Over at the first poll: it may have ended well before.  The bracket
	 * widens downwards by its own width (at least the tolerance), so that
	 * passes seen over at the first poll again and again double it until a
	 * poll inside it sees one running; a steady one only every
	 * PACE_STEADY_AT_ONCE such passes.
	 */
	pace->hi_ms = done_ms;
	pace->at_once = 0;
	if (k->hi_ms <= 0 || k->lo_ms >= done_ms)
	{
		pace->lo_ms = 0;
		return;
	}
	if (pace_steady(k) && k->at_once + 1 < PACE_STEADY_AT_ONCE)
	{
		pace->lo_ms = k->lo_ms;
		pace->at_once = k->at_once + 1;
		return;
	}
	pace->lo_ms = Max(0, k->lo_ms - Max(lsm_pace_tolerance_ms(done_ms),
										k->hi_ms - k->lo_ms));
}

/*
 * lsm_pace_check_pass: a pass of the checkpoint of check, polled by the
 * schedule pass, was seen over at done_ms; note whether it ended outside
 * the recalled bracket (seen over before its lower bound, or running past
 * its end) or was seen to end inside it (see the top of the file).
 */
void
lsm_pace_check_pass(LsmPaceCheck *check, const LsmPacePass *pass,
					int32 done_ms)
{
	const LsmPace *r = &check->recalled;
	int32		span = PACE_STEADY_SPAN * lsm_pace_tolerance_ms(r->hi_ms);

	if (r->hi_ms <= 0)
		return;
	if (done_ms <= r->lo_ms || pass->running_ms > r->hi_ms)
		check->contradicted = true;
	else if (pass->running_ms >= 0 &&
			 pass->running_ms >= r->hi_ms - span &&
			 done_ms <= r->hi_ms + span)
		check->pinned = true;
}

/*
 * lsm_pace_check_agreed: the agreed count of the bracket the checkpoint of
 * check learnt (see the top of the file): 0 when nothing was recalled or
 * a pass ended outside the recalled bracket; one more than the recalled
 * bracket's (at most PACE_STEADY_AGREED) when a pass was seen to end
 * inside it; else the recalled bracket's.
 */
int16
lsm_pace_check_agreed(const LsmPaceCheck *check)
{
	const LsmPace *r = &check->recalled;

	if (r->hi_ms <= 0 || check->contradicted)
		return 0;
	if (check->pinned)
		return Min(r->agreed + 1, PACE_STEADY_AGREED);
	return r->agreed;
}

/* Sightings, spanning this many ranks, before the drain predicts. */
#define PACE_DRAIN_MIN_RANKS 8

/*
 * The drain predicts PACE_DRAIN_AIM_NUM / PACE_DRAIN_AIM_DEN (three
 * quarters) of the time to the end of a pass, and half as much again
 * after each PACE_DRAIN_STREAK passes in a row seen over at the first poll
 * it predicted (at most PACE_DRAIN_HALVINGS_MAX times).  Sightings come at
 * the polls the drain predicted, so a rate read too slow would confirm
 * itself at every poll, which sees the pass over whatever its lag; aiming
 * early makes polls see passes running, and the sightings right after
 * them bring the rate back.
 */
#define PACE_DRAIN_AIM_NUM 3
#define PACE_DRAIN_AIM_DEN 4
#define PACE_DRAIN_STREAK 8
#define PACE_DRAIN_HALVINGS_MAX 3

/*
 * lsm_pace_drain_rank: a pass was triggered (answered at at_ms); returns
 * its rank (from 1).
 */
int64
lsm_pace_drain_rank(LsmPaceDrain *drain, int64 at_ms)
{
	if (drain->next_rank == 0)
		drain->first_trigger_ms = at_ms;
	drain->outstanding++;
	return ++drain->next_rank;
}

/*
 * lsm_pace_drain_seen: the pass of the given rank was seen over at at_ms
 * (by a poll answered then); at_once: at the first poll the drain
 * predicted for it.
 */
void
lsm_pace_drain_seen(LsmPaceDrain *drain, int64 rank, int64 at_ms,
					bool at_once)
{
	lsm_pace_drain_drop(drain);
	if (drain->last_rank == 0)
	{
		/* the first sighting (ranks start at 1) */
		drain->first_rank = rank;
		drain->first_ms = at_ms;
	}
	if (rank > drain->last_rank)
	{
		drain->last_rank = rank;
		drain->last_ms = at_ms;
	}
	drain->streak = at_once ? drain->streak + 1 : 0;
}

/*
 * lsm_pace_drain_running: a poll the drain predicted saw its pass still
 * running (the drain aims early enough).
 */
void
lsm_pace_drain_running(LsmPaceDrain *drain)
{
	drain->streak = 0;
}

/*
 * lsm_pace_drain_drop: a ranked pass will not be seen over by its
 * checkpoint (it failed, or started again from the flush).
 */
void
lsm_pace_drain_drop(LsmPaceDrain *drain)
{
	drain->outstanding = Max(drain->outstanding - 1, 0);
}

/*
 * lsm_pace_drain_predict: when the pass of the given rank should end, in
 * *end_ms: right away (the last sighting's time) when a higher rank was
 * seen over; else the last sighting's time plus the aimed fraction (see
 * PACE_DRAIN_STREAK) of the time the ranks still ahead take at the rate,
 * in ms per rank, from the first sighting to the last.  Returns false
 * (nothing predicted) until the sightings span PACE_DRAIN_MIN_RANKS ranks
 * and at least the time from the first trigger to the first sighting:
 * passes that share permits end in batches, and a rate read inside one
 * batch would be far too fast.
 */
bool
lsm_pace_drain_predict(const LsmPaceDrain *drain, int64 rank, int64 *end_ms)
{
	int64		ranks = drain->last_rank - drain->first_rank;
	int64		span_ms = drain->last_ms - drain->first_ms;
	int			halvings = Min(drain->streak / PACE_DRAIN_STREAK,
							   PACE_DRAIN_HALVINGS_MAX);

	if (ranks < PACE_DRAIN_MIN_RANKS || span_ms <= 0 ||
		span_ms < drain->first_ms - drain->first_trigger_ms)
		return false;
	*end_ms = drain->last_ms;
	if (rank > drain->last_rank)
		*end_ms += ((rank - drain->last_rank) * span_ms * PACE_DRAIN_AIM_NUM /
					(ranks * PACE_DRAIN_AIM_DEN)) >> halvings;
	return true;
}

/*
 * lsm_pace_jitter_ms: wait_ms lengthened by r (in [0, 1)) times spread_ms,
 * so that sessions polling the same table do not poll in lockstep; never
 * shorter, so that a poll predicted right after the end of a pass does
 * not land before it.
 */
int32
lsm_pace_jitter_ms(int32 wait_ms, int32 spread_ms, double r)
{
	return Max(1, wait_ms + (int32) (Max(spread_ms, 0) * r));
}
