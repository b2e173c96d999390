/*-------------------------------------------------------------------------
 *
 * herd.h
 *		Checkpoints of one LanceDB table by many sessions of this cluster
 *		at once: a checkpoint joins the one already running when that one
 *		covers it, and waits on shared memory instead of polling.
 *
 * Needs lancelsm in shared_preload_libraries; without it every task runs
 * alone, as lsm_task_run_all runs it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_HERD_H
#define LANCELSM_HERD_H

#include "checkpoint/task.h"

/* What a task does about a checkpoint of its table already running. */
typedef enum LsmHerdMode
{
	LSM_HERD_JOIN,				/* join it, or wait for it and lead the next */
	LSM_HERD_SKIP				/* skip the table, with a note */
} LsmHerdMode;

extern void lsm_herd_shmem_init(void);
extern void lsm_herd_run_all(LsmTask **tasks, int ntasks, LsmHerdMode mode);
extern bool lsm_herd_skipped(const LsmTask *task);

#endif							/* LANCELSM_HERD_H */
