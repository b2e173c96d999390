/*-------------------------------------------------------------------------
 *
 * step_checkpoint.c
 *		The steps of a checkpoint: flush, the stats read that sets the
 *		watermark, then compact triggers and polls until the targets are
 *		drained; what it waits on, and its opt-in progress bound.
 *
 * What a stats answer means for the checkpoint (targets, outstanding
 * generations, when to trigger, the poll interval) is watermark.c's; when
 * a pass will end is pace.c's.  A 429 or 503 to a compact trigger is not
 * retried in place: the latch it would contend for is the one doing the
 * work, so the checkpoint polls instead.  421 re-issues it from flush
 * (retry.c).
 *
 * Patience: a checkpoint waits for its drain until statement_timeout or
 * cancel, as the SDK's checkpoint_lsm does, however many polls or passes
 * go by without a drop (lancelsm.max_idle_polls, off by default, is the
 * one early bound).  Once LSM_STALL_SUSPECT_PASSES passes in a row have
 * ended without draining anything, it triggers the next one at the
 * doubling poll interval, and says what it waits on in lancelsm_progress
 * and in the detail of the 57014 that ends it.  A call of many tables
 * stops waiting shortly before its deadline and fails the tables still
 * waiting as rows (lsm_task_set_row_deadline).
 *
 * A trigger-only checkpoint (lancelsm_checkpoint_due) does not wait for
 * the drain: it ends with the trigger that follows its flush and
 * watermark read (or with that read, when there is nothing to compact or
 * passes already own every bucket), and a 429 or 503 answer to the
 * trigger ends it as a success, not retried: a pass holds the latch or the
 * node is busy, and the next run observes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "protocol/protocol.h"
#include "settings.h"
#include "task/steps.h"
#include "task/task_internal.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* The decoded polls of checkpoints (checkpoint_on_stats); emptied at each. */
static MemoryContext task_poll_cxt = NULL;

/*
 * task_stall_sentence: what a checkpoint saw of passes ending without
 * draining anything, as a sentence naming its table (palloc'd), or NULL
 * when its last pass drained something or none has ended.  From
 * LSM_STALL_SUSPECT_PASSES passes in a row on, it names the possible
 * causes: compacted generations kept listed while an index catches up
 * (lance's retention) or until garbage collection, or passes that merged
 * nothing.
 */
static char *
task_stall_sentence(const LsmTask *task)
{
	const LsmWatermark *wm = &task->watermark;

	if (task->kind != LSM_TASK_CHECKPOINT || wm->stalled_passes == 0)
		return NULL;
	return psprintf("The checkpoint of LanceDB table \"%s\" saw compaction passes end without draining anything, %d in a row, with %llu outstanding L0 generations left%s",
					task->table_name, wm->stalled_passes,
					(unsigned long long) wm->last_outstanding,
					lsm_watermark_stall_suspected(wm) ?
					": compacted generations may stay listed while an index catches up or until garbage collection, or the passes may not have merged them." :
					".");
}

/*
 * task_diagnosis: what a checkpoint that has not converged was waiting
 * on, as full sentences (palloc'd): a bucket that is not Active holding
 * outstanding L0 (a Sealed bucket: a drop in flight), and passes that
 * ended without draining anything (task_stall_sentence); NULL when
 * neither.
 */
char *
task_diagnosis(const LsmTask *task)
{
	char	   *stall = task_stall_sentence(task);
	char	   *bucket = NULL;

	if (task->kind == LSM_TASK_CHECKPOINT &&
		task->watermark.waiting_shard[0] != '\0')
		bucket = psprintf("The checkpoint of LanceDB table \"%s\" was waiting for bucket \"%s\", whose status is \"%s\".",
						  task->table_name,
						  task->watermark.waiting_shard,
						  task->watermark.waiting_status);
	if (bucket && stall)
		return psprintf("%s %s", bucket, stall);
	return bucket ? bucket : stall;
}

/*
 * task_check_bound: the opt-in progress bound, lancelsm.max_idle_polls = N
 * (0, the default: none, as the SDK's checkpoint_lsm has none, so that
 * statement_timeout and cancel are the bound).  Fails the checkpoint with
 * 53400 after N polls in a row without progress and without a pass
 * running, or after N passes in a row that ended without draining
 * anything (the detail then names the possible causes,
 * task_stall_sentence).  Returns false after failing the task.
 */
static bool
task_check_bound(LsmTask *task)
{
	const LsmWatermark *wm = &task->watermark;
	char	   *detail;

	if (lsm_max_idle_polls <= 0)
		return true;
	if (wm->idle_polls >= lsm_max_idle_polls)
		detail = psprintf("%d consecutive polls saw %llu outstanding L0 generations, no fewer, and no compaction pass running.",
						  wm->idle_polls,
						  (unsigned long long) wm->last_outstanding);
	else if (wm->stalled_passes >= lsm_max_idle_polls)
		detail = task_stall_sentence(task);
	else
		return true;
	task_fail(task, ERRCODE_CONFIGURATION_LIMIT_EXCEEDED, detail,
			  pstrdup("Raise lancelsm.max_idle_polls, or set it to 0 to rely on statement_timeout alone."));
	return false;
}

/*
 * task_pace_recall: a checkpoint that has learnt nothing of its table's
 * passes in this call starts from what its table's last checkpoint learnt
 * (shared memory; nothing without the preload), unless it shares a drain:
 * its passes may then queue behind the call's others, and a pass's own
 * duration would only make it poll early.  What it recalled is kept to
 * check this call's passes against (steady, src/task/pace.c).
 */
static void
task_pace_recall(LsmTask *task)
{
	LsmWatermark *wm = &task->watermark;

	if (wm->pace.hi_ms == 0 && wm->drain == NULL &&
		lsm_pace_recall(task->config->serverid, task->wire_table_name,
						&wm->pace))
	{
		wm->pace_recalled = true;
		wm->pace_check.recalled = wm->pace;
	}
}

/*
 * task_checkpoint_step: act on one stats read of a checkpoint: set the
 * targets (first read), then finish, trigger compaction or poll again.
 */
static void
task_checkpoint_step(LsmTask *task, const LsmStats *stats)
{
	LsmWatermark *wm = &task->watermark;
	bool		progressed;
	bool		pass_running;
	LsmNextStep step;

	if (task->phase == LSM_PHASE_WATERMARK)
	{
		if (lsm_watermark_set(wm, stats) == 0)
		{
			task_finish(task, NULL);
			return;
		}
		task_pace_recall(task);
	}
	step = lsm_watermark_evaluate(wm, stats, &progressed, &pass_running);
	if (step == LSM_STEP_DONE)
		task_finish(task, NULL);
	else if (!task_check_bound(task))
		return;
	else if (step == LSM_STEP_TRIGGER)
	{
		task->phase = LSM_PHASE_COMPACT;
		if (lsm_watermark_stall_suspected(wm))
		{
			/*
			 * Passes keep ending without draining anything: wait on, as
			 * the SDK does, but at the doubling poll interval rather than
			 * with a pass and two stats reads every few milliseconds.
			 */
			task_sleep(task, lsm_poll_interval_next(wm, false));
		}
		else
			task_issue(task);
	}
	else if (task->trigger_only)
		task_finish(task, NULL);	/* passes own every outstanding bucket */
	else
	{
		task->phase = LSM_PHASE_POLL;
		task_sleep(task, lsm_poll_after_wait(wm, progressed,
											 GetCurrentTimestamp()));
	}
}

/*
 * checkpoint_on_stats: a stats read of the checkpoint succeeded.
 */
static void
checkpoint_on_stats(LsmTask *task)
{
	LsmStats   *stats;
	MemoryContext old;

	/*
	 * One context for every checkpoint's polls, emptied at each: a
	 * poll's answer is read and forgotten at once (what the watermark
	 * keeps, lsm_watermark_set copies into the caller's memory), so a
	 * call of 10,000 tables holds one decoded answer, not 10,000.
	 */
	if (task_poll_cxt == NULL)
		task_poll_cxt = AllocSetContextCreate(TopMemoryContext,
											  "lancelsm checkpoint poll",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContextReset(task_poll_cxt);
	old = MemoryContextSwitchTo(task_poll_cxt);
	stats = task_decode_stats(task, false);
	MemoryContextSwitchTo(old);
	if (stats != NULL)
		task_checkpoint_step(task, stats);
	else if (task->phase != LSM_PHASE_DONE)
		task_issue(task);	/* ask again in the server's spelling */
}

/*
 * checkpoint_answered: the request of the checkpoint's phase was answered
 * 2xx: after the flush, read the watermark; after a trigger, one pass
 * more, then poll (or, trigger-only, done); after a stats read, act on it.
 */
static void
checkpoint_answered(LsmTask *task)
{
	switch (task->phase)
	{
		case LSM_PHASE_FLUSH:
			task->phase = LSM_PHASE_WATERMARK;
			task_issue(task);
			break;
		case LSM_PHASE_COMPACT:
			task->passes++;
			if (task->trigger_only)
				task_finish(task, NULL);
			else
			{
				task->phase = LSM_PHASE_POLL;
				task_sleep(task,
						   lsm_poll_after_trigger(&task->watermark,
												  GetCurrentTimestamp()));
			}
			break;
		case LSM_PHASE_WATERMARK:
		case LSM_PHASE_POLL:
			checkpoint_on_stats(task);
			break;
		case LSM_PHASE_SPEC:
		case LSM_PHASE_DONE:
			break;
	}
}

/*
 * checkpoint_busy: 429 or 503 to a compact trigger: the latch it would
 * contend for is the one doing the work, so poll instead (trigger-only:
 * done, the next run observes), and return true; false, for any other
 * request, has it retried.
 */
static bool
checkpoint_busy(LsmTask *task)
{
	if (task->phase != LSM_PHASE_COMPACT)
		return false;
	if (task->trigger_only)
		task_finish(task, NULL);
	else
	{
		task->phase = LSM_PHASE_POLL;
		task_sleep(task, lsm_poll_interval_next(&task->watermark, false));
	}
	return true;
}

/* checkpoint: flush, watermark, triggers and polls; 421 re-issues from flush */
const TaskSteps task_steps_checkpoint = {
	.answered = checkpoint_answered,
	.busy = checkpoint_busy,
	.reissue = true
};
