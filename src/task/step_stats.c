/*-------------------------------------------------------------------------
 *
 * step_stats.c
 *		The steps of a stats read, and the stats answer decoded in the
 *		spelling each server answers in (a checkpoint's reads use both).
 *
 * The answer is decoded strictly (src/protocol/lsm_stats_json.c); a
 * checkpoint's watermark read and polls decode it without the generation
 * rows, in a memory context of their own (step_checkpoint.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "protocol/protocol.h"
#include "task/steps.h"
#include "task/task_internal.h"
#include "utils/memutils.h"

/*
 * The spelling of the renamed stats keys (lsm_types.h) each server last
 * answered with, in this backend.  A stats request asks in that spelling,
 * the released one until the server has answered, so that the request key
 * follows the server through the pending upstream rename with no setting
 * to change on the day a server adopts it.  Kept per server rather than
 * per connection pool: the spelling belongs to the server, whichever role
 * asks.  Only include_*_rows depends on it; an answer in the other
 * spelling decodes all the same.
 */
typedef struct TaskServerKeys
{
	Oid			serverid;
	LsmKeySpelling keys;
	struct TaskServerKeys *next;
} TaskServerKeys;

static TaskServerKeys *task_server_keys = NULL;

/*
 * task_keys_of: the spelling to ask server serverid in.
 */
static LsmKeySpelling
task_keys_of(Oid serverid)
{
	for (TaskServerKeys *k = task_server_keys; k; k = k->next)
		if (k->serverid == serverid)
			return k->keys;
	return LSM_KEYS_GENERATION;
}

/*
 * task_keys_learn: server serverid answered in spelling keys.
 */
static void
task_keys_learn(Oid serverid, LsmKeySpelling keys)
{
	TaskServerKeys *k;

	if (keys == LSM_KEYS_UNSEEN)
		return;
	for (k = task_server_keys; k; k = k->next)
		if (k->serverid == serverid)
			break;
	if (k == NULL)
	{
		k = MemoryContextAlloc(TopMemoryContext, sizeof(TaskServerKeys));
		k->serverid = serverid;
		k->next = task_server_keys;
		task_server_keys = k;
	}
	k->keys = keys;
}

/*
 * task_stats_body: the get_lsm_stats request body, in the spelling the
 * server last answered with (task_keys_of).
 */
const char *
task_stats_body(LsmTask *task)
{
	LsmKeySpelling keys = task_keys_of(task->config->serverid);

	if (task->stats_body == NULL || keys != task->sent_keys)
	{
		task->stats_body =
			lsm_json_stats_request_body(task->kind == LSM_TASK_STATS &&
										task->include_generation_rows, keys);
		task->sent_keys = keys;
	}
	return task->stats_body;
}

/*
 * task_decode_stats: decode the current request's stats answer strictly,
 * and note the spelling it used.  Returns NULL when the answer cannot be
 * used: either the task is finished with a protocol-violation failure
 * that names the field and the request id, or (phase not DONE) the
 * answer came in the other spelling than the generation rows were asked
 * in, and the caller must ask again, once, in the server's spelling.
 */
LsmStats *
task_decode_stats(LsmTask *task, bool with_rows)
{
	const LsmOutcome *out = lsm_http_outcome(task->req);
	LsmStats   *stats = palloc0(sizeof(LsmStats));
	char		errbuf[LSM_JSON_ERRBUF_SIZE];
	bool		ok;

	ok = lsm_json_decode_stats(out->response, out->response_len,
							   with_rows, stats, errbuf, sizeof(errbuf));
	task_keys_learn(task->config->serverid, stats->keys);
	/* an answer in the other spelling did not understand the rows flag */
	if (with_rows && !task->keys_resent && stats->keys != LSM_KEYS_UNSEEN &&
		stats->keys != task->sent_keys)
	{
		task->keys_resent = true;
		return NULL;
	}
	if (ok)
		return stats;
	task_fail_decode(task, "statistics", errbuf);
	return NULL;
}

/*
 * stats_answered: the stats read was answered 2xx: decode it strictly
 * (with the generation rows when asked) and the task is done; or ask
 * again, once, in the server's spelling (task_decode_stats).
 */
static void
stats_answered(LsmTask *task)
{
	LsmStats   *stats = task_decode_stats(task, task->include_generation_rows);

	if (stats != NULL)
	{
		task->stats = stats;
		task_finish(task, NULL);
	}
	else if (task->phase != LSM_PHASE_DONE)
		task_issue(task);
}

/* stats: one read; 429 and 503 retried, 421 fails (retry.c) */
const TaskSteps task_steps_stats = {
	.answered = stats_answered,
	.busy = NULL,
	.reissue = false
};
