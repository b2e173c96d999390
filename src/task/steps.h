/*-------------------------------------------------------------------------
 *
 * steps.h
 *		One table of steps per operation: what a task does when the request
 *		of its phase is answered, in src/task/step_*.c, read by the policy
 *		(src/task/retry.c).  Private to src/task/.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_STEPS_H
#define LANCELSM_STEPS_H

#include "task/task.h"

typedef struct TaskSteps
{
	/* the request of the task's phase got its expected answer (2xx) */
	void		(*answered) (LsmTask *task);

	/*
	 * 429 or 503: take the step it calls for and return true, or return
	 * false to have the request retried after a backoff; NULL: always
	 * retried
	 */
	bool		(*busy) (LsmTask *task);

	/* 421: re-issue from flush within lancelsm.reissue_budget */
	bool		reissue;
} TaskSteps;

/* in step_flush.c */
extern const TaskSteps task_steps_flush;

/* in step_compact.c */
extern const TaskSteps task_steps_compact;

/* in step_stats.c */
extern const TaskSteps task_steps_stats;
extern const char *task_stats_body(LsmTask *task);
extern LsmStats *task_decode_stats(LsmTask *task, bool with_rows);

/* in step_checkpoint.c */
extern const TaskSteps task_steps_checkpoint;
extern char *task_diagnosis(const LsmTask *task);

/* in step_spec.c */
extern const TaskSteps task_steps_set_spec;
extern const TaskSteps task_steps_unset_spec;
extern const TaskSteps task_steps_get_spec;
extern LsmRoute task_spec_route(LsmTaskKind kind);

#endif							/* LANCELSM_STEPS_H */
