/*-------------------------------------------------------------------------
 *
 * step_flush.c
 *		The steps of a flush: one request, done when it is answered.
 *
 * A checkpoint's flush is the first step of the checkpoint's own table
 * (step_checkpoint.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "task/steps.h"
#include "task/task_internal.h"

/*
 * flush_answered: the flush was answered 2xx: the task is done.
 */
static void
flush_answered(LsmTask *task)
{
	task_finish(task, NULL);
}

/* flush: one request; 429 and 503 retried, 421 fails (retry.c) */
const TaskSteps task_steps_flush = {
	.answered = flush_answered,
	.busy = NULL,
	.reissue = false
};
