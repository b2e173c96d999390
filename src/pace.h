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

/*
 * What is known of a table's pass duration, in milliseconds from the
 * answer to the compact trigger to the poll that saw the pass over: the
 * last pass was still running at lo_ms and was over at hi_ms.
 * hi_ms == 0: nothing is known.
 */
typedef struct LsmPace
{
	int32		lo_ms;
	int32		hi_ms;
} LsmPace;

/* The poll schedule of one pass, from its trigger. */
typedef struct LsmPacePass
{
	LsmPace		known;			/* the prediction this pass follows */
	bool		hedge;			/* known comes from an earlier call */
	int32		running_ms;		/* last poll that saw it running; -1: none */
	int32		step_ms;		/* fallback: the next doubling step */
} LsmPacePass;

extern int32 lsm_pace_tolerance_ms(int32 hi_ms);
extern void lsm_pace_pass_start(LsmPacePass *pass, const LsmPace *known,
								bool hedge);
extern int32 lsm_pace_first_poll_ms(const LsmPacePass *pass, int32 min_ms);
extern int32 lsm_pace_next_poll_ms(LsmPacePass *pass, int32 running_ms,
								   int32 min_ms, int32 max_ms);
extern void lsm_pace_learn(LsmPace *pace, const LsmPacePass *pass,
						   int32 done_ms);
extern int32 lsm_pace_jitter_ms(int32 wait_ms, int32 spread_ms, double r);

#endif							/* LANCELSM_PACE_H */
