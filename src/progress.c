/*-------------------------------------------------------------------------
 *
 * progress.c
 *		Checkpoint progress and history in shared memory.
 *
 * (Being written: shared memory needs shared_preload_libraries; until
 * then these calls only name the phase and do nothing else.)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "progress.h"

/*
 * lsm_progress_phase_name: the phase of a task as lancelsm_progress shows
 * it: flush, watermark, draining (a request of the loop in flight),
 * waiting (between polls), backoff (before a retry or re-issue), done.
 */
const char *
lsm_progress_phase_name(const LsmTask *task)
{
	if (task->phase == LSM_PHASE_DONE)
		return "done";
	if (task->backing_off)
		return "backoff";
	if (task->phase == LSM_PHASE_FLUSH)
		return "flush";
	if (task->phase == LSM_PHASE_WATERMARK)
		return "watermark";
	return task->wake_at != 0 ? "waiting" : "draining";
}

/* lsm_progress_shmem_init: nothing yet. */
void
lsm_progress_shmem_init(void)
{
}

/* lsm_progress_begin: nothing yet. */
void
lsm_progress_begin(LsmTask *task)
{
}

/* lsm_progress_update: nothing yet. */
void
lsm_progress_update(const LsmTask *task)
{
}

/* lsm_progress_end: nothing yet. */
void
lsm_progress_end(LsmTask *task, int interrupted_by)
{
}
