/*-------------------------------------------------------------------------
 *
 * watermark.h
 *		The checkpoint loop's decisions: the target watermark, outstanding
 *		generations, whether to trigger compaction, and the adaptive poll
 *		interval.  Pure functions of the stats; no I/O.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_WATERMARK_H
#define LANCELSM_WATERMARK_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "protocol/protocol.h"
#include "task/pace.h"

/* The targets set after the checkpoint's flush, and the poll state. */
typedef struct LsmWatermark
{
	int			ntargets;
	char	  **shard_ids;		/* buckets whose L0 was not empty */
	uint64		*targets;		/* newest L0 generation of each */
	uint64		initial_outstanding;	/* generations at or below the
										 * targets when they were set */
	uint64		last_outstanding;	/* at the previous poll */
	int			idle_polls;		/* consecutive polls without progress */
	int			interval_ms;	/* current poll interval (no prediction) */
	LsmPace		pace;			/* what the call knows of pass durations;
								 * kept across a re-issue from flush */
	bool		pace_recalled;	/* pace comes from an earlier checkpoint */
	LsmPaceCheck pace_check;	/* what this call's passes say of the
								 * bracket recalled */
	bool		pace_learned;	/* a pass of this call updated pace */
	LsmPacePass pass;			/* the poll schedule of the pass triggered */
	TimestampTz pass_at;		/* when its trigger was answered; 0: none */
	int32		poll_ms;		/* the poll in flight or next, ms after
								 * pass_at */
	LsmPaceDrain *drain;		/* the call's passes on this server (set
								 * by the caller; NULL: none) */
	int64		pass_rank;		/* the pass's rank in drain; 0: none */
	bool		pass_queued;	/* it was triggered while two or more
								 * passes of the call were pending there */
	bool		pace_queued;	/* pace was learnt from such a pass */
	bool		drain_poll;		/* the drain predicts the pass's end */
	bool		drain_follow;	/* the next poll waits for the drain's
								 * prediction of the pass's end
								 * (lsm_watermark_drain_due) */
	bool		drain_missed;	/* a poll it predicted saw the pass
								 * running, or it was pulled early: its
								 * sighting says nothing of the aim */
	int32		drain_step_ms;	/* the wait after a poll saw running a
								 * pass the drain said was over */
	bool		latch_seen;		/* the previous poll saw a pass running */
	bool		trigger_answered;	/* a compact was answered 2xx since */
	int			stalled_passes; /* passes ended in a row with no drop in
								 * the outstanding count */
	char		waiting_shard[LSM_WATERMARK_NAME_LEN];	/* a bucket that is not
														 * Active holding
														 * outstanding L0; "":
														 * none */
	char		waiting_status[LSM_WATERMARK_NAME_LEN]; /* its status */
	char		holding_shard[LSM_WATERMARK_NAME_LEN];	/* the first bucket
														 * of the last poll
														 * holding
														 * outstanding L0,
														 * whatever its
														 * status; "": none */
	char		holding_status[LSM_WATERMARK_NAME_LEN]; /* its status */
} LsmWatermark;

/* What the loop does after reading stats. */
typedef enum LsmNextStep
{
	LSM_STEP_DONE,				/* converged, or LSM is off */
	LSM_STEP_TRIGGER,			/* call compact, then poll */
	LSM_STEP_WAIT				/* every outstanding bucket is compacting */
} LsmNextStep;

extern int	lsm_watermark_set(LsmWatermark *wm, const LsmStats *stats);
extern LsmNextStep lsm_watermark_evaluate(LsmWatermark *wm,
										  const LsmStats *stats,
										  bool *progressed, bool *pass_running);
extern void lsm_watermark_release(LsmWatermark *wm);
extern bool lsm_watermark_stall_suspected(const LsmWatermark *wm);
extern const char *lsm_watermark_waiting(const LsmWatermark *wm,
										 const char **status);
extern TimestampTz lsm_watermark_rewake(LsmWatermark *wm, TimestampTz now,
										TimestampTz wake_at);
extern bool lsm_watermark_follows_drain(const LsmWatermark *wm);
extern bool lsm_watermark_drain_due(const LsmWatermark *wm,
									TimestampTz *due_at);
extern void lsm_watermark_drain_polled(LsmWatermark *wm, TimestampTz now);
extern int	lsm_poll_interval_next(LsmWatermark *wm, bool progressed);
extern int	lsm_poll_after_trigger(LsmWatermark *wm, TimestampTz now);
extern int	lsm_poll_after_wait(LsmWatermark *wm, bool progressed,
								TimestampTz now);

#endif							/* LANCELSM_WATERMARK_H */
