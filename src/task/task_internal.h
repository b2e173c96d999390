/*-------------------------------------------------------------------------
 *
 * task_internal.h
 *		What src/task/task.c offers the rest of the engine: a task's
 *		primitives (sleep, issue, finish, fail) and its reports to the
 *		record.  Private to src/task/.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_TASK_INTERNAL_H
#define LANCELSM_TASK_INTERNAL_H

#include "task/task.h"

extern LsmFaultMessage task_fault(const LsmTask *task);
extern void task_sleep(LsmTask *task, long ms);
extern void task_issue(LsmTask *task);
extern void task_finish(LsmTask *task, LsmFailure *failure);
extern void task_fail(LsmTask *task, int sqlerrcode, char *detail,
					  char *hint);
extern void task_fail_request(LsmTask *task);
extern void task_fail_decode(LsmTask *task, const char *what,
							 const char *errbuf);
extern bool task_progress_begin(LsmTask *task, bool listed);
extern void task_progress_update(const LsmTask *task);
extern void task_progress_end(LsmTask *task, int interrupted_by);

#endif							/* LANCELSM_TASK_INTERNAL_H */
