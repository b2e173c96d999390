/*-------------------------------------------------------------------------
 *
 * step_compact.c
 *		The steps of a compact: one trigger, done when it is answered.
 *
 * A trigger-only compact (lancelsm_checkpoint_due) takes a 429 or 503
 * answer to its trigger as a success, not retried: a pass holds the latch
 * or the node is busy, and the next run observes.  A checkpoint's
 * triggers are steps of the checkpoint's own table (step_checkpoint.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "task/steps.h"
#include "task/task_internal.h"

/*
 * compact_answered: the trigger was answered 2xx: one pass more, and the
 * task is done.
 */
static void
compact_answered(LsmTask *task)
{
	task->passes++;
	task_finish(task, NULL);
}

/*
 * compact_busy: 429 or 503 to the trigger: a trigger-only compact is done
 * (the next run observes) and true is returned; false has it retried.
 */
static bool
compact_busy(LsmTask *task)
{
	if (!task->trigger_only || task->phase != LSM_PHASE_COMPACT)
		return false;
	task_finish(task, NULL);
	return true;
}

/* compact: one trigger; 421 fails (retry.c) */
const TaskSteps task_steps_compact = {
	.answered = compact_answered,
	.busy = compact_busy,
	.reissue = false
};
