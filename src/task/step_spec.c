/*-------------------------------------------------------------------------
 *
 * step_spec.c
 *		The steps of the write spec requests: one request each; set and
 *		unset are done when answered, a read decodes its answer.
 *
 * Their retry policy is retry.c's: 429 and 503 only.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "net/net.h"
#include "protocol/protocol.h"
#include "task/steps.h"
#include "task/task_internal.h"

/*
 * spec_done: set or unset was answered 2xx; its body is ignored.
 */
static void
spec_done(LsmTask *task)
{
	task_finish(task, NULL);
}

/*
 * spec_read: a read of the write spec was answered 2xx: decode it
 * strictly into task->spec (a failure names the field and the request
 * id).
 */
static void
spec_read(LsmTask *task)
{
	LsmWriteSpec *spec = palloc0(sizeof(LsmWriteSpec));
	char		errbuf[LSM_JSON_ERRBUF_SIZE];

	if (lsm_json_decode_write_spec(lsm_http_outcome(task->req)->response,
								   lsm_http_outcome(task->req)->response_len,
								   spec, errbuf, sizeof(errbuf)))
	{
		task->spec = spec;
		task_finish(task, NULL);
		return;
	}
	task_fail_decode(task, "write spec", errbuf);
}

/*
 * task_spec_route: the route of a write spec task.
 */
LsmRoute
task_spec_route(LsmTaskKind kind)
{
	if (kind == LSM_TASK_SET_SPEC)
		return LSM_ROUTE_SET_SPEC;
	return kind == LSM_TASK_UNSET_SPEC ? LSM_ROUTE_UNSET_SPEC :
		LSM_ROUTE_GET_SPEC;
}

/* set, unset and read the write spec: one request each, never re-issued */
const TaskSteps task_steps_set_spec = {
	.answered = spec_done,
	.busy = NULL,
	.reissue = false
};

const TaskSteps task_steps_unset_spec = {
	.answered = spec_done,
	.busy = NULL,
	.reissue = false
};

const TaskSteps task_steps_get_spec = {
	.answered = spec_read,
	.busy = NULL,
	.reissue = false
};
