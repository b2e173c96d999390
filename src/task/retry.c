/*-------------------------------------------------------------------------
 *
 * retry.c
 *		What the answer to a task's request makes of it: the fault table
 *		applied, the retry and back-off policy, and the next step of the
 *		task's operation on success.
 *
 * The retry policy ("issuing" a request, docs/protocol.md, "Errors"):
 * 429 and 503 (a draining node's too) are retried after lancelsm.backoff_base *
 * 2^n ms, capped at lancelsm.backoff_max, at most lancelsm.retry_budget
 * times per request, the counter reset by every success; then the last
 * fault is reported as itself.  A checkpoint's compact trigger is never
 * retried in place: the next poll handles it (an operation's table of
 * steps says so, TaskSteps.busy).  421 makes a checkpoint re-issue from
 * flush after a backoff of the same shape, at most
 * lancelsm.reissue_budget times (TaskSteps.reissue).  A request the server
 * refused before acting on it each time libcurl sent it
 * (LSM_VERDICT_RESEND: HTTP/2 streams refused by one GOAWAY after another)
 * is sent again after the same backoff, within the same budget, in every
 * phase.  Everything else fails the task.
 *
 * The write spec routes follow the same per-request policy, with the
 * statuses the SDK's transport retries (src/protocol/fault.c): 409, 429
 * and 503 on all three, and 500, 502 and 504 on get.  Unlike the SDK,
 * lancelsm does not retry 500, 502 or 504 on set and unset: the server may
 * have acted before failing, and a second unset would then report
 * "nothing set" for the one that worked.  Every attempt of one write spec
 * request carries the same x-request-id, as the SDK's do
 * (src/task/driver.c).  src/net/http.c sends set and unset on a fresh
 * connection so that libcurl never re-sends them either.
 *
 * Fresh reads (docs/protocol.md, "Fresh reads"): the version a 2xx answer
 * carries is kept for the table (src/protocol/fresh.c); a checkpoint's
 * flush answer fixes the floor of its reads (src/task/driver.c sends it).
 * A read refused (412) for the version it demanded forgets the kept
 * version and is sent once more.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "net/net.h"
#include "settings.h"
#include "protocol/protocol.h"
#include "task/retry.h"
#include "task/steps.h"
#include "task/task_internal.h"

/*
 * task_steps_of: the table of steps of an operation.  An unrecognized kind
 * cannot happen (elog, XX000).
 */
static const TaskSteps *
task_steps_of(LsmTaskKind kind)
{
	switch (kind)
	{
		case LSM_TASK_FLUSH:
			return &task_steps_flush;
		case LSM_TASK_COMPACT:
			return &task_steps_compact;
		case LSM_TASK_STATS:
			return &task_steps_stats;
		case LSM_TASK_CHECKPOINT:
			return &task_steps_checkpoint;
		case LSM_TASK_SET_SPEC:
			return &task_steps_set_spec;
		case LSM_TASK_UNSET_SPEC:
			return &task_steps_unset_spec;
		case LSM_TASK_GET_SPEC:
			return &task_steps_get_spec;
	}
	elog(ERROR, "unrecognized lancelsm task kind %d", (int) kind);
	pg_unreachable();
}

/*
 * task_backoff_ms: the backoff before retry or re-issue number n (from 0):
 * lancelsm.backoff_base * 2^n, capped at lancelsm.backoff_max.
 */
static long
task_backoff_ms(int n)
{
	long		ms = lsm_backoff_base_ms;

	for (int i = 0; i < n && ms < lsm_backoff_max_ms; i++)
		ms *= 2;
	return Min(ms, (long) lsm_backoff_max_ms);
}

/*
 * task_on_success: the current request got its expected answer: the
 * retries of the next request start from 0, and the task's operation takes
 * its next step.
 */
static void
task_on_success(LsmTask *task)
{
	task->retries = 0;
	task->answered = true;
	if (task->phase != LSM_PHASE_DONE)
		task_steps_of(task->kind)->answered(task);
}

/*
 * task_retry_or_fail: send the task's request again after a backoff,
 * within lancelsm.retry_budget; past it, fail with the last fault.
 */
static void
task_retry_or_fail(LsmTask *task)
{
	if (task->retries < lsm_retry_budget)
	{
		task->backing_off = true;
		task->total_retries++;
		task_sleep(task, task_backoff_ms(task->retries++));
	}
	else
		task_fail_request(task);
}

/*
 * task_on_retryable: 429 or 503 (a draining node's included): the step
 * the operation takes for it (a compact trigger's), else a retry.
 */
static void
task_on_retryable(LsmTask *task)
{
	const TaskSteps *steps = task_steps_of(task->kind);

	if (steps->busy == NULL || !steps->busy(task))
		task_retry_or_fail(task);
}

/*
 * task_on_lost_claim: 421.  An operation whose steps re-issue (a
 * checkpoint) re-issues from flush within its budget; anything else, or a
 * checkpoint past it, fails with the 421 as itself (55P03).
 */
static void
task_on_lost_claim(LsmTask *task)
{
	LsmFailure *failure;

	if (!task_steps_of(task->kind)->reissue)
	{
		task_fail_request(task);
		return;
	}
	if (task->reissues < lsm_reissue_budget)
	{
		task->retries = 0;
		task->phase = LSM_PHASE_FLUSH;
		task->backing_off = true;
		task_sleep(task, task_backoff_ms(task->reissues++));
		return;
	}
	failure = lsm_fault_from_request(lsm_http_outcome(task->req),
									 task_fault(task),
									 task->table_name, 0);
	failure->detail = psprintf("The server node kept losing its claim on the table (%d re-issues from flush). %s",
							   task->reissues, failure->detail);
	task_finish(task, failure);
}

/*
 * task_fresh_note: keep the version a 2xx answer of the task's request
 * carried; a checkpoint's flush answer fixes the floor of its reads, and
 * the first read after an unversioned flush that answers a version
 * replaces its time floor.
 */
static void
task_fresh_note(LsmTask *task)
{
	const LsmOutcome *out = lsm_http_outcome(task->req);

	if (lsm_fault_verdict(out) != LSM_VERDICT_OK)
		return;
	lsm_fresh_observe(task->config, task->wire_table_name, out->version);
	if (task->kind != LSM_TASK_CHECKPOINT)
		return;
	if (task->phase == LSM_PHASE_FLUSH)
	{
		task->floor_version = out->version;
		task->time_floor = (out->version == 0);
	}
	else if (task->time_floor && out->version != 0 &&
			 (task->phase == LSM_PHASE_WATERMARK ||
			  task->phase == LSM_PHASE_POLL))
	{
		task->floor_version = out->version;
		task->time_floor = false;
	}
}

/*
 * task_on_stale_version: a read was refused for the version it demanded:
 * forget the kept version and send it once more; refused again, fail.
 */
static void
task_on_stale_version(LsmTask *task)
{
	if (task->version_forgotten)
	{
		task_fail_request(task);
		return;
	}
	lsm_fresh_forget(task->config, task->wire_table_name);
	task->version_forgotten = true;
	task_issue(task);
}

/*
 * task_on_answer: the task's request finished; apply the fault table.
 */
void
task_on_answer(LsmTask *task)
{
	task->in_flight = false;
	task_fresh_note(task);
	switch (lsm_fault_verdict(lsm_http_outcome(task->req)))
	{
		case LSM_VERDICT_OK:
			task_on_success(task);
			break;
		case LSM_VERDICT_RETRY:
			task_on_retryable(task);
			break;
		case LSM_VERDICT_REISSUE:
			task_on_lost_claim(task);
			break;
		case LSM_VERDICT_RESEND:
			task_retry_or_fail(task);
			break;
		case LSM_VERDICT_FORGET_VERSION:
			task_on_stale_version(task);
			break;
		case LSM_VERDICT_FAIL:
			task_fail_request(task);
			break;
	}
}
