/*-------------------------------------------------------------------------
 *
 * pace.h
 *		When to poll for the end of a compaction pass: a prediction of the
 *		pass duration learnt from the passes seen, as pure functions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_PACE_H
#define LANCELSM_PACE_H

#include "c.h"

#include "record/record.h"	/* LsmPace, what the record keeps */

/* The poll schedule of one pass, from its trigger. */
typedef struct LsmPacePass
{
	LsmPace		known;			/* the prediction this pass follows */
	bool		hedge;			/* known comes from an earlier call and
								 * is not steady: checked early */
	int32		running_ms;		/* last poll that saw it running; -1: none */
	int32		step_ms;		/* fallback: the next doubling step */
} LsmPacePass;

/*
 * The passes of one call on one server, as a queue.  The server runs
 * passes on a pool of compaction permits that grants them in the order
 * they were triggered, so with more passes than permits they end in that
 * order, at the pool's drain rate.  Each pass gets a rank when its trigger
 * is answered; each pass seen over is a sighting (rank, time).  Times are
 * in milliseconds on the caller's clock.
 */
typedef struct LsmPaceDrain
{
	int64		next_rank;		/* ranks given so far (the first is 1) */
	int64		first_trigger_ms;	/* when rank 1 was given */
	int			outstanding;	/* ranked passes not yet seen over */
	int64		first_rank;		/* the first pass seen over; 0: none */
	int64		first_ms;
	int64		last_rank;		/* the highest rank seen over; 0: none */
	int64		last_ms;
	int			streak;			/* passes in a row seen over at the first
								 * poll the drain predicted for them */
} LsmPaceDrain;

/*
 * What the passes of one checkpoint say of the bracket it recalled from
 * the table's checkpoint before (recalled.hi_ms 0: nothing recalled).
 */
typedef struct LsmPaceCheck
{
	LsmPace		recalled;
	bool		contradicted;	/* a pass ended outside it */
	bool		pinned;			/* a pass was seen to end inside it */
} LsmPaceCheck;

extern int32 lsm_pace_tolerance_ms(int32 hi_ms);
extern void lsm_pace_pass_start(LsmPacePass *pass, const LsmPace *known,
								bool recalled);
extern int32 lsm_pace_first_poll_ms(const LsmPacePass *pass, int32 min_ms);
extern int32 lsm_pace_next_poll_ms(LsmPacePass *pass, int32 running_ms,
								   int32 min_ms, int32 max_ms);
extern void lsm_pace_learn(LsmPace *pace, const LsmPacePass *pass,
						   int32 done_ms);
extern void lsm_pace_check_pass(LsmPaceCheck *check,
								const LsmPacePass *pass, int32 done_ms);
extern int16 lsm_pace_check_agreed(const LsmPaceCheck *check);
extern int64 lsm_pace_drain_rank(LsmPaceDrain *drain, int64 at_ms);
extern void lsm_pace_drain_seen(LsmPaceDrain *drain, int64 rank,
								int64 at_ms, bool at_once);
extern void lsm_pace_drain_running(LsmPaceDrain *drain);
extern void lsm_pace_drain_drop(LsmPaceDrain *drain);
extern bool lsm_pace_drain_predict(const LsmPaceDrain *drain, int64 rank,
								   int64 *end_ms);
extern int32 lsm_pace_jitter_ms(int32 wait_ms, int32 spread_ms, double r);

#endif							/* LANCELSM_PACE_H */
