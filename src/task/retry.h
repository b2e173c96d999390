/*-------------------------------------------------------------------------
 *
 * retry.h
 *		What the answer to a task's request makes of it: the fault table,
 *		the retry and back-off policy (src/task/retry.c).  Private to
 *		src/task/.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_RETRY_H
#define LANCELSM_RETRY_H

#include "task/task.h"

extern void task_on_answer(LsmTask *task);

#endif							/* LANCELSM_RETRY_H */
