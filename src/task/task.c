/*-------------------------------------------------------------------------
 *
 * task.c
 *		Issuing requests for SQL-level operations, with the retry policy,
 *		and the driver that runs any number of operations at once.
 *
 * A task is one operation on one table: flush, compact, a stats read, or a
 * checkpoint (flush, then stats, then compact and poll until the targets
 * are drained).  Tasks are state machines: each owns at most one request in
 * flight or one timer, so the driver, lsm_task_run_all(), can run many of
 * them on the shared HTTP client and one table's faults never stop another.
 *
 * The retry policy ("issuing" a request, docs/protocol.md, "Errors"):
 * 429 and 503 (a draining node's too) are retried after lancelsm.backoff_base *
 * 2^n ms, capped at lancelsm.backoff_max, at most lancelsm.retry_budget
 * times per request, the counter reset by every success; then the last
 * fault is reported as itself.  A checkpoint's compact trigger is never
 * retried in place: the next poll handles it.  421 makes a checkpoint
 * re-issue from flush after a backoff of the same shape, at most
 * lancelsm.reissue_budget times.  A request the server refused before
 * acting on it each time libcurl sent it (LSM_VERDICT_RESEND: HTTP/2
 * streams refused by one GOAWAY after another) is sent again after the
 * same backoff, within the same budget, in every phase.  Everything else
 * fails the task.
 *
 * The write spec routes follow the same per-request policy: 429 and
 * 503 were answered before the server acted, so retrying
 * them is safe even for unset, which is not idempotent.  Unlike the SDKs,
 * lancelsm does not retry 409, 500, 502 or 504 on them: the server may
 * have acted before failing, and a second unset would then report
 * "nothing set" for the one that worked.  src/net/http.c sends set and unset
 * on a fresh connection so that libcurl never re-sends them either.
 * Patience: a checkpoint waits for its drain until statement_timeout or
 * cancel, as the SDK's checkpoint_lsm does, however many polls or passes
 * go by without a drop (lancelsm.max_idle_polls, off by default, is the
 * one early bound).  Once LSM_STALL_SUSPECT_PASSES passes in a row have
 * ended without draining anything, it triggers the next one at the
 * doubling poll interval, and says what it waits on in lancelsm_progress
 * and in the detail of the 57014 that ends it.  A call of many tables
 * stops waiting shortly before its deadline and fails the tables still
 * waiting as rows (lsm_task_set_row_deadline).
 *
 * A trigger-only task (lancelsm_checkpoint_due) does not wait for the
 * drain: a compact ends with its trigger, a checkpoint with the trigger
 * that follows its flush and watermark read (or with that read, when
 * there is nothing to compact or passes already own every bucket), and a
 * 429 or 503 answer to the trigger ends it as a success, not retried: a
 * pass holds the latch or the node is busy, and the next run observes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "net/net.h"
#include "settings.h"
#include "protocol/protocol.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "task/window.h"
#include "task/task.h"
#include "deadline.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "wire_text.h"

static void task_issue(LsmTask *task);
static void task_progress_update(const LsmTask *task);

/*
 * A checkpoint sends at most LSM_RATE_BURST requests at once and
 * LSM_RATE_PER_SECOND on average (a token bucket), so that no window of one
 * second ever holds more than 20 requests to one table, however often its
 * polls see progress.
 */
#define LSM_RATE_BURST 4
#define LSM_RATE_PER_SECOND 16

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

/* The decoded polls of checkpoints (task_on_stats); emptied at each. */
static MemoryContext task_poll_cxt = NULL;

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
static const char *
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
 * lsm_task_init: prepare a task of the given kind on a table.  config and
 * table_name must outlive the task; the task allocates in the current
 * memory context.  table_name (database encoding) is converted to the
 * UTF-8 its requests carry now, before any request: a name UTF-8 cannot
 * hold raises PostgreSQL's conversion error (22P05; 22021 for a
 * SQL_ASCII database's bytes that are not UTF-8).
 */
void
lsm_task_init(LsmTask *task, LsmTaskKind kind, const LsmConfig *config,
			  const char *table_name, bool include_generation_rows)
{
	memset(task, 0, sizeof(LsmTask));
	task->progress_slot = -1;
	task->rate_tokens = LSM_RATE_BURST;
	task->kind = kind;
	task->config = config;
	task->table_name = table_name;
	task->wire_table_name = lsm_text_to_wire(table_name);
	task->include_generation_rows = include_generation_rows;
	switch (kind)
	{
		case LSM_TASK_FLUSH:
		case LSM_TASK_CHECKPOINT:
			task->phase = LSM_PHASE_FLUSH;
			break;
		case LSM_TASK_COMPACT:
			task->phase = LSM_PHASE_COMPACT;
			break;
		case LSM_TASK_STATS:
			task->phase = LSM_PHASE_POLL;
			break;
		case LSM_TASK_SET_SPEC:
		case LSM_TASK_UNSET_SPEC:
		case LSM_TASK_GET_SPEC:
			task->phase = LSM_PHASE_SPEC;
			break;
	}
}

/*
 * lsm_task_set_config: the server a task not yet run acts on, when it is
 * resolved after the task was prepared.  config must outlive the task.
 * Never raises an error.
 */
void
lsm_task_set_config(LsmTask *task, const LsmConfig *config)
{
	task->config = config;
}

/*
 * lsm_task_set_body: the request body of a write spec task not yet run
 * (NULL: none).  body must outlive the task.  Never raises an error.
 */
void
lsm_task_set_body(LsmTask *task, const char *body)
{
	task->spec_body = body;
}

/*
 * lsm_task_set_trigger_only: make a compact or checkpoint task not yet
 * run end once compaction is triggered, without waiting for the drain
 * (see the header of this file).  Never raises an error.
 */
void
lsm_task_set_trigger_only(LsmTask *task)
{
	task->trigger_only = true;
}

/*
 * lsm_task_set_source: who starts a task not yet run (lancelsm_flush and
 * the other direct calls are LSM_RUN_DIRECT, the default), and whether its
 * table is declared in lancelsm_table (its shared history and run entries
 * are then evicted after those of undeclared names).  Never raises an
 * error.
 */
void
lsm_task_set_source(LsmTask *task, LsmRunSource source, bool declared)
{
	task->source = source;
	task->declared = declared;
}

/*
 * lsm_task_set_row_deadline: make a task not yet run one of many tables
 * of a call that returns a row per table: the driver stops waiting for it
 * at lsm_statement_row_deadline (shortly before statement_timeout) and
 * fails it with 57014 and what it was waiting on, so that one stalled
 * table does not cost the others their rows.  Never raises an error.
 */
void
lsm_task_set_row_deadline(LsmTask *task)
{
	task->row_deadline = true;
}

/*
 * lsm_task_set_failure: end a task that is not running with failure
 * (NULL: success), without any request: a name or server refused before
 * the task ran, or a finished task whose answer its caller cannot use.
 * Its timings and counters stay as they are; a task never run keeps
 * started_at 0.  Never raises an error.
 */
void
lsm_task_set_failure(LsmTask *task, LsmFailure *failure)
{
	task->phase = LSM_PHASE_DONE;
	task->failure = failure;
}

/*
 * task_phase_name: the phase of a task as lancelsm_progress shows it:
 * flush, watermark, draining (a request of the compact and poll loop in
 * flight), waiting (between polls), backoff (before a retry or re-issue),
 * done.
 */
static const char *
task_phase_name(const LsmTask *task)
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

/*
 * lsm_task_snapshot: copy into snap what progress reporting needs of the
 * task.  Targets and outstanding generations exist only once the
 * watermark is set (compact and poll phases); a re-issue from flush
 * clears them until the next watermark.  Never raises an error (it runs
 * in lsm_task_run_all's error handler).
 */
void
lsm_task_snapshot(const LsmTask *task, LsmTaskSnapshot *snap)
{
	const LsmWatermark *wm = &task->watermark;
	bool		set = (task->phase == LSM_PHASE_COMPACT ||
					   task->phase == LSM_PHASE_POLL);

	snap->kind = task->kind;
	snap->trigger_only = task->trigger_only;
	snap->server_name = task->config ? task->config->server_name : NULL;
	snap->serverid = task->config ? task->config->serverid : InvalidOid;
	snap->table_name = task->table_name;
	snap->wire_table_name = task->wire_table_name;
	snap->phase = task_phase_name(task);
	snap->waiting_bucket = task->watermark.waiting_shard;
	snap->waiting_status = task->watermark.waiting_status;
	snap->finished = (task->phase == LSM_PHASE_DONE);
	snap->failure = task->failure;
	snap->answered = task->answered;
	snap->source = task->source;
	snap->declared = task->declared;
	snap->requests = task->requests;
	snap->counters.target = set ? (int64) wm->initial_outstanding : -1;
	snap->counters.outstanding =
		(set && wm->last_outstanding != PG_UINT64_MAX) ?
		(int64) wm->last_outstanding : -1;
	snap->counters.passes = task->passes;
	snap->counters.polls = task->polls;
	snap->counters.retries = task->total_retries;
	snap->counters.reissues = task->reissues;
	snap->counters.stalled_passes = set ? wm->stalled_passes : 0;
	snap->started_at = task->started_at;
	snap->finished_at = task->finished_at;
	snap->progress_slot = task->progress_slot;
}

/*
 * task_fault: what the task does, as the LsmFaultMessage of its failures
 * (their errmsg names the operation and takes the table's name).  An
 * unrecognized kind cannot happen (elog, XX000).
 */
static LsmFaultMessage
task_fault(const LsmTask *task)
{
	switch (task->kind)
	{
		case LSM_TASK_FLUSH:
			return LSM_FAULT_FLUSH;
		case LSM_TASK_COMPACT:
			return LSM_FAULT_COMPACT;
		case LSM_TASK_STATS:
			return LSM_FAULT_READ_STATS;
		case LSM_TASK_CHECKPOINT:
			return LSM_FAULT_CHECKPOINT;
		case LSM_TASK_SET_SPEC:
			return LSM_FAULT_SET_SPEC;
		case LSM_TASK_UNSET_SPEC:
			return LSM_FAULT_UNSET_SPEC;
		case LSM_TASK_GET_SPEC:
			return LSM_FAULT_GET_SPEC;
	}
	elog(ERROR, "unrecognized lancelsm task kind %d", (int) task->kind);
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
 * task_sleep: park the task for ms milliseconds; the driver issues its
 * current phase's request when the time comes.
 */
static void
task_sleep(LsmTask *task, long ms)
{
	task->wake_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), ms);
}

/*
 * task_finish: the task is over; failure is NULL on success.  The
 * failure is redacted of the API key before anyone sees it.
 */
static void
task_finish(LsmTask *task, LsmFailure *failure)
{
	/* no failure may carry a secret, whatever the server sent */
	if (failure && task->req)
		lsm_fault_redact_outcome(failure, lsm_http_outcome(task->req));
	task->phase = LSM_PHASE_DONE;
	task->failure = failure;
	task->wake_at = 0;
	task->finished_at = GetCurrentTimestamp();
	/*
	 * What this checkpoint learnt of its passes, for the next one, unless
	 * it learnt a wait in the queue for permits behind the call's other
	 * passes rather than a pass.
	 */
	if (task->kind == LSM_TASK_CHECKPOINT)
	{
		LsmPace		pace = task->watermark.pace;

		lsm_watermark_release(&task->watermark);
		pace.agreed = lsm_pace_check_agreed(&task->watermark.pace_check);
		if (task->watermark.pace_learned && !task->watermark.pace_queued)
			lsm_pace_remember(task->config->serverid, task->wire_table_name,
							  task->declared, &pace);
	}
	lsm_http_release(task->req);
}

/*
 * task_fail_request: finish the task with its current request's fault,
 * whose SQLSTATE follows the fault table (lsm_fault_from_request).
 */
static void
task_fail_request(LsmTask *task)
{
	task_finish(task, lsm_fault_from_request(lsm_http_outcome(task->req),
											 task_fault(task),
											 task->table_name,
											 task->retries));
}

/*
 * task_fail_decode: finish the task with the protocol-violation failure
 * (08P01) of an answer that could not be decoded; what names the answer
 * ("statistics"), errbuf the decoder's description.
 */
static void
task_fail_decode(LsmTask *task, const char *what, const char *errbuf)
{
	bool		lossless;

	/* the decoder may quote the answer's UTF-8 */
	task_finish(task,
				lsm_fault_new(ERRCODE_PROTOCOL_VIOLATION,
							  psprintf("The %s the server sent could not be decoded: %s. Request ID: %s.",
									   what,
									   lsm_text_from_wire_quiet(errbuf, &lossless),
									   lsm_http_outcome(task->req)->request_id),
							  NULL, task_fault(task), task->table_name));
}

/*
 * task_decode_stats: decode the current request's stats answer strictly,
 * and note the spelling it used.  Returns NULL when the answer cannot be
 * used: either the task is finished with a protocol-violation failure
 * that names the field and the request id, or (phase not DONE) the
 * answer came in the other spelling than the generation rows were asked
 * in, and the caller must ask again, once, in the server's spelling.
 */
static LsmStats *
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
 * task_on_spec: a write spec request succeeded; a read is decoded
 * strictly into task->spec (a failure names the field and the request
 * id), the body of set and unset is ignored.
 */
static void
task_on_spec(LsmTask *task)
{
	LsmWriteSpec *spec;
	char		errbuf[LSM_JSON_ERRBUF_SIZE];

	if (task->kind != LSM_TASK_GET_SPEC)
	{
		task_finish(task, NULL);
		return;
	}
	spec = palloc0(sizeof(LsmWriteSpec));
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
 * task_stall_sentence: what a checkpoint saw of passes ending without
 * draining anything, as a sentence naming its table (palloc'd), or NULL
 * when its last pass drained something or none has ended.  From
 * LSM_STALL_SUSPECT_PASSES passes in a row on, it says that the server
 * may keep compacted generations listed.
 */
static char *
task_stall_sentence(const LsmTask *task)
{
	const LsmWatermark *wm = &task->watermark;

	if (task->kind != LSM_TASK_CHECKPOINT || wm->stalled_passes == 0)
		return NULL;
	return psprintf("The checkpoint of LanceDB table \"%s\" saw compaction passes end without draining anything, %d in a row, with %llu outstanding L0 generations left%s",
					task->table_name, wm->stalled_passes,
					(unsigned long long) wm->last_outstanding,
					lsm_watermark_stall_suspected(wm) ?
					": the server may keep compacted generations listed." :
					".");
}

/*
 * task_diagnosis: what a checkpoint that has not converged was waiting
 * on, as full sentences (palloc'd): a bucket that is not Active holding
 * outstanding L0 (a Sealed bucket: a drop in flight), and passes that
 * ended without draining anything (task_stall_sentence); NULL when
 * neither.
 */
static char *
task_diagnosis(const LsmTask *task)
{
	char	   *stall = task_stall_sentence(task);
	char	   *bucket = NULL;

	if (task->kind == LSM_TASK_CHECKPOINT &&
		task->watermark.waiting_shard[0] != '\0')
		bucket = psprintf("The checkpoint of LanceDB table \"%s\" was waiting for bucket \"%s\", whose status is \"%s\".",
						  task->table_name,
						  task->watermark.waiting_shard,
						  task->watermark.waiting_status);
	if (bucket && stall)
		return psprintf("%s %s", bucket, stall);
	return bucket ? bucket : stall;
}

/*
 * task_check_bound: the opt-in progress bound, lancelsm.max_idle_polls = N
 * (0, the default: none, as the SDK's checkpoint_lsm has none, so that
 * statement_timeout and cancel are the bound).  Fails the checkpoint with
 * 53400 after N polls in a row without progress and without a pass
 * running, or after N passes in a row that ended without draining
 * anything (the detail then says the server may keep compacted
 * generations listed).  Returns false after failing the task.
 */
static bool
task_check_bound(LsmTask *task)
{
	const LsmWatermark *wm = &task->watermark;
	char	   *detail;

	if (lsm_max_idle_polls <= 0)
		return true;
	if (wm->idle_polls >= lsm_max_idle_polls)
		detail = psprintf("%d consecutive polls saw %llu outstanding L0 generations, no fewer, and no compaction pass running.",
						  wm->idle_polls,
						  (unsigned long long) wm->last_outstanding);
	else if (wm->stalled_passes >= lsm_max_idle_polls)
		detail = task_stall_sentence(task);
	else
		return true;
	task_finish(task,
				lsm_fault_new(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED, detail,
							  pstrdup("Raise lancelsm.max_idle_polls, or set it to 0 to rely on statement_timeout alone."),
							  task_fault(task), task->table_name));
	return false;
}

/*
 * task_pace_recall: a checkpoint that has learnt nothing of its table's
 * passes in this call starts from what its table's last checkpoint learnt
 * (shared memory; nothing without the preload), unless it shares a drain:
 * its passes may then queue behind the call's others, and a pass's own
 * duration would only make it poll early.  What it recalled is kept to
 * check this call's passes against (steady, src/task/pace.c).
 */
static void
task_pace_recall(LsmTask *task)
{
	LsmWatermark *wm = &task->watermark;

	if (wm->pace.hi_ms == 0 && wm->drain == NULL &&
		lsm_pace_recall(task->config->serverid, task->wire_table_name,
						&wm->pace))
	{
		wm->pace_recalled = true;
		wm->pace_check.recalled = wm->pace;
	}
}

/*
 * task_checkpoint_step: act on one stats read of a checkpoint: set the
 * targets (first read), then finish, trigger compaction or poll again.
 */
static void
task_checkpoint_step(LsmTask *task, const LsmStats *stats)
{
	LsmWatermark *wm = &task->watermark;
	bool		progressed;
	bool		pass_running;
	LsmNextStep step;

	if (task->phase == LSM_PHASE_WATERMARK)
	{
		if (lsm_watermark_set(wm, stats) == 0)
		{
			task_finish(task, NULL);
			return;
		}
		task_pace_recall(task);
	}
	step = lsm_watermark_evaluate(wm, stats, &progressed, &pass_running);
	if (step == LSM_STEP_DONE)
		task_finish(task, NULL);
	else if (!task_check_bound(task))
		return;
	else if (step == LSM_STEP_TRIGGER)
	{
		task->phase = LSM_PHASE_COMPACT;
		if (lsm_watermark_stall_suspected(wm))
		{
			/*
			 * Passes keep ending without draining anything: wait on, as
			 * the SDK does, but at the doubling poll interval rather than
			 * with a pass and two stats reads every few milliseconds.
			 */
			task_sleep(task, lsm_poll_interval_next(wm, false));
		}
		else
			task_issue(task);
	}
	else if (task->trigger_only)
		task_finish(task, NULL);	/* passes own every outstanding bucket */
	else
	{
		task->phase = LSM_PHASE_POLL;
		task_sleep(task, lsm_poll_after_wait(wm, progressed,
											 GetCurrentTimestamp()));
	}
}

/*
 * task_on_stats: a stats read succeeded.
 */
static void
task_on_stats(LsmTask *task)
{
	LsmStats   *stats;
	MemoryContext old;

	if (task->kind == LSM_TASK_STATS)
		stats = task_decode_stats(task, task->include_generation_rows);
	else
	{
		/*
		 * One context for every checkpoint's polls, emptied at each: a
		 * poll's answer is read and forgotten at once (what the watermark
		 * keeps, lsm_watermark_set copies into the caller's memory), so a
		 * call of 10,000 tables holds one decoded answer, not 10,000.
		 */
		if (task_poll_cxt == NULL)
			task_poll_cxt = AllocSetContextCreate(TopMemoryContext,
												  "lancelsm checkpoint poll",
												  ALLOCSET_DEFAULT_SIZES);
		MemoryContextReset(task_poll_cxt);
		old = MemoryContextSwitchTo(task_poll_cxt);
		stats = task_decode_stats(task, false);
		MemoryContextSwitchTo(old);
	}
	if (stats == NULL)
	{
		/* ask again in the server's spelling, or the task has failed */
		if (task->phase != LSM_PHASE_DONE)
			task_issue(task);
	}
	else if (task->kind == LSM_TASK_STATS)
	{
		task->stats = stats;
		task_finish(task, NULL);
	}
	else
		task_checkpoint_step(task, stats);
}

/*
 * task_on_success: the current request got its expected answer.
 */
static void
task_on_success(LsmTask *task)
{
	task->retries = 0;
	task->answered = true;
	switch (task->phase)
	{
		case LSM_PHASE_FLUSH:
			if (task->kind == LSM_TASK_FLUSH)
				task_finish(task, NULL);
			else
			{
				task->phase = LSM_PHASE_WATERMARK;
				task_issue(task);
			}
			break;
		case LSM_PHASE_COMPACT:
			task->passes++;
			if (task->kind == LSM_TASK_COMPACT || task->trigger_only)
				task_finish(task, NULL);
			else
			{
				task->phase = LSM_PHASE_POLL;
				task_sleep(task,
						   lsm_poll_after_trigger(&task->watermark,
												  GetCurrentTimestamp()));
			}
			break;
		case LSM_PHASE_WATERMARK:
		case LSM_PHASE_POLL:
			task_on_stats(task);
			break;
		case LSM_PHASE_SPEC:
			task_on_spec(task);
			break;
		case LSM_PHASE_DONE:
			break;
	}
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
 * task_on_retryable: 429 or 503 (a draining node's included).
 */
static void
task_on_retryable(LsmTask *task)
{
	if (task->trigger_only && task->phase == LSM_PHASE_COMPACT)
		task_finish(task, NULL);	/* the next run observes */
	else if (task->kind == LSM_TASK_CHECKPOINT &&
			 task->phase == LSM_PHASE_COMPACT)
	{
		/* the latch it would contend for is the one doing the work */
		task->phase = LSM_PHASE_POLL;
		task_sleep(task, lsm_poll_interval_next(&task->watermark, false));
	}
	else
		task_retry_or_fail(task);
}

/*
 * task_on_lost_claim: 421.  A checkpoint re-issues from flush within its
 * budget; anything else, or a checkpoint past it, fails with the 421 as
 * itself (55P03).
 */
static void
task_on_lost_claim(LsmTask *task)
{
	LsmFailure *failure;

	if (task->kind != LSM_TASK_CHECKPOINT)
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
 * task_on_answer: the task's request finished; apply the fault table.
 */
static void
task_on_answer(LsmTask *task)
{
	task->in_flight = false;
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
		case LSM_VERDICT_FAIL:
			task_fail_request(task);
			break;
	}
}

/*
 * task_rate_wait_ms: for a checkpoint, take one token from its request
 * budget and return 0, or return how many milliseconds to wait for one.
 */
static long
task_rate_wait_ms(LsmTask *task)
{
	TimestampTz now = GetCurrentTimestamp();

	if (task->kind != LSM_TASK_CHECKPOINT)
		return 0;
	if (task->rate_at != 0)
		task->rate_tokens = Min((double) LSM_RATE_BURST,
								task->rate_tokens +
								(now - task->rate_at) / 1e6 * LSM_RATE_PER_SECOND);
	task->rate_at = now;
	if (task->rate_tokens < 1.0)
		return (long) ((1.0 - task->rate_tokens) * 1000 / LSM_RATE_PER_SECOND) + 1;
	task->rate_tokens -= 1.0;
	return 0;
}

/*
 * task_token_ready: with a bearer_token_file, make sure its token can be
 * read (src/net/token.c re-reads a changed file) before a request is built;
 * otherwise finish the task with F0000, so that in a checkpoint of many
 * tables or a monitoring view this server's tables fail as rows and the
 * others go on.  Returns false after finishing the task.
 */
static bool
task_token_ready(LsmTask *task)
{
	char	   *problem;

	if (task->config->bearer_token_file == NULL ||
		lsm_bearer_token_try(task->config->bearer_token_file, &problem))
		return true;
	task_finish(task,
				lsm_fault_new(ERRCODE_CONFIG_FILE_ERROR, problem,
							  pstrdup("Check the server's bearer_token_file option and the agent that writes the file."),
							  task_fault(task), task->table_name));
	return false;
}

/*
 * task_spec_route: the route of a write spec task.
 */
static LsmRoute
task_spec_route(LsmTaskKind kind)
{
	if (kind == LSM_TASK_SET_SPEC)
		return LSM_ROUTE_SET_SPEC;
	return kind == LSM_TASK_UNSET_SPEC ? LSM_ROUTE_UNSET_SPEC :
		LSM_ROUTE_GET_SPEC;
}

/*
 * task_progress_end: the task is over for progress reporting
 * (interrupted_by: 0, or the SQLSTATE of the error that ended the
 * statement); it no longer holds a progress entry.  Never raises an
 * error: it runs in lsm_task_run_all's error handler.
 */
static void
task_progress_end(LsmTask *task, int interrupted_by)
{
	LsmTaskSnapshot snap;

	lsm_task_snapshot(task, &snap);
	lsm_progress_end(&snap, interrupted_by);
	lsm_run_record(&snap, interrupted_by);
	lsm_counters_record(&snap, interrupted_by);
	task->progress_slot = -1;
}

/*
 * task_progress_begin: a task starts; it claims a progress entry when it
 * is a checkpoint that reports progress (progress.c decides) and listed,
 * i.e. its call has not claimed LSM_CALL_MAX_CLAIMS entries yet.  Returns
 * whether it holds an entry.
 */
static bool
task_progress_begin(LsmTask *task, bool listed)
{
	LsmTaskSnapshot snap;

	lsm_task_snapshot(task, &snap);
	task->progress_slot = lsm_progress_begin(&snap, listed);
	return task->progress_slot >= 0;
}

/*
 * task_progress_update: the task's phase and counters into its progress
 * entry, if it has one.
 */
static void
task_progress_update(const LsmTask *task)
{
	LsmTaskSnapshot snap;

	if (task->progress_slot < 0)
		return;					/* most tasks of a large call: no entry */
	lsm_task_snapshot(task, &snap);
	lsm_progress_update(&snap);
}

/*
 * task_rethrow_waiting: in lsm_task_run_all's error handler, for a cancel
 * or statement_timeout (57014): when a checkpoint had a diagnosis
 * (task_diagnosis: a bucket that is not Active holding outstanding L0,
 * passes that ended without draining anything), rethrow the error with it
 * as the detail; otherwise return.  cxt is the caller's memory context
 * (not ErrorContext).
 */
static void
task_rethrow_waiting(LsmTask **tasks, int ntasks, MemoryContext cxt)
{
	for (int i = 0; i < ntasks; i++)
	{
		const LsmTask *task = tasks[i];
		ErrorData  *edata;
		char	   *diagnosis;

		if (task->phase == LSM_PHASE_DONE)
			continue;
		MemoryContextSwitchTo(cxt);
		diagnosis = task_diagnosis(task);
		if (diagnosis == NULL)
			continue;
		edata = CopyErrorData();
		if (edata->detail != NULL)
			return;
		FlushErrorState();
		edata->detail = diagnosis;
		ReThrowError(edata);
	}
}

/*
 * task_row_deadline_failure: the failure of a task its call stopped
 * waiting for at the row deadline: 57014, with what it was waiting on.
 */
static LsmFailure *
task_row_deadline_failure(const LsmTask *task)
{
	char	   *diagnosis = task_diagnosis(task);

	return lsm_fault_new(ERRCODE_QUERY_CANCELED,
						 psprintf("The call stopped waiting shortly before statement_timeout, to return a row for each table.%s%s",
								  diagnosis ? " " : "",
								  diagnosis ? diagnosis : ""),
						 pstrdup("Raise statement_timeout, or look at lancelsm_progress while the checkpoint waits."),
						 task_fault(task), task->table_name);
}

/*
 * task_issue: make the request of the task's current phase due now, or as
 * soon as its request budget allows.  The driver sends it (task_send) when
 * its server has room for one more request in flight.
 */
static void
task_issue(LsmTask *task)
{
	long		wait_ms = task_rate_wait_ms(task);

	if (wait_ms > 0)
	{
		task_sleep(task, wait_ms);
		return;
	}
	if (!task_token_ready(task))
		return;
	task->wake_at = 0;
	task->backing_off = false;
	task->ready = true;
}

/*
 * The most requests one call keeps in flight on one server and role (one
 * connection pool), as many as the connections a pool may open
 * (src/net/pool.c), so that over HTTP/1.1 no request waits in libcurl's
 * queue; the server option max_requests_in_flight lowers it.  Within it
 * the gate's window (src/task/window.c) follows the round trip and
 * backs off on 429 and 503.  The other requests due wait in the driver,
 * as a task and not as a libcurl handle: libcurl's cost per handle
 * removed grows with the handles queued on its multi handle, and each
 * holds memory of its own.
 */
#define LSM_TASK_INFLIGHT_PER_POOL LSM_MAX_REQUESTS_IN_FLIGHT

/*
 * A queue of tasks whose request is due, oldest first.
 */
typedef struct TaskQueue
{
	LsmTask    *head;
	LsmTask    *tail;
} TaskQueue;

/*
 * The requests of one call to one server as one role: how many are in
 * flight, and the tasks whose request is due.  Tasks the server has
 * answered already (their watermark read, compaction trigger, polls) go
 * before tasks that have not started (their flush), so that a call of
 * many tables triggers its first passes at once rather than after every
 * table's flush: the permits of the server are the call's floor.
 */
typedef struct TaskGate
{
	Oid			serverid;
	Oid			umid;
	int			inflight;
	LsmWindow	window;			/* the most in flight, following the round
								 * trip (src/task/window.c) */
	TaskQueue	going;
	TaskQueue	fresh;
	struct TaskGate *next;
} TaskGate;

/*
 * The window each gate of the statement's last driver runs ended with,
 * per server and role, so that a statement that runs the driver more than
 * once (lancelsm_checkpoint_due reads the stats of its tables DUE_CHUNK
 * at a time, src/functions/due.c) goes on at the window it reached rather
 * than starting again from LSM_WINDOW_START each time: at a cloud's round
 * trip, a slow start costs a few round trips.  A new statement starts
 * afresh.  Backend-local, in TopMemoryContext: one entry per server and
 * role this backend has run.
 */
typedef struct TaskWindowKept
{
	Oid			serverid;
	Oid			umid;
	TimestampTz statement_start;
	LsmWindow	window;
	struct TaskWindowKept *next;
} TaskWindowKept;

static TaskWindowKept *task_windows_kept = NULL;

/*
 * The checkpoints of one driver run that wait for their next poll on one
 * drain (src/task/pace.c).  Those whose wait follows the drain's
 * prediction (lsm_watermark_follows_drain) are kept by the rank of their
 * pass, not in the heap of timers: the drain predicts passes to end in
 * rank order, so the lowest ranked is due first (lsm_watermark_drain_due),
 * and a pass seen over moves every other prediction without a visit.
 * The others (stragglers: asleep in the heap of timers on their own
 * schedule or a step, where a pass seen over may move them) are listed,
 * and each pass seen over reconsiders them (lsm_watermark_rewake).
 */
typedef struct TaskDrainQueue
{
	LsmPaceDrain *drain;
	pairingheap *ranked;
	dlist_head	stragglers;
	int			nstragglers;
	struct TaskDrainQueue *next;
} TaskDrainQueue;

/*
 * One run of the driver (lsm_task_run_all_notify): its tasks, the timers
 * of those asleep (a heap by wake-up time, and the polls that follow a
 * drain), its gates, the requests no task holds (reused), and which tasks
 * were handed to done.
 */
typedef struct TaskDriver
{
	LsmTask   **tasks;
	int			ntasks;
	int			active;			/* tasks not handed to done yet */
	bool	   *reported;
	pairingheap *sleepers;
	struct TaskDrainQueue *drains;	/* the polls waiting on each drain */
	bool		next_backing_off;	/* the task that wakes first sleeps
									 * before a retry or re-issue */
	TaskGate   *gates;
	List	   *spare;			/* LsmRequest *, released */
	TimestampTz deadline;
	TimestampTz row_deadline;	/* stop waiting then; 0: at deadline */
	LsmTaskDone done;
	void	   *arg;
} TaskDriver;

/*
 * task_sleep_cmp: pairingheap comparator putting the earliest wake-up
 * first (ties: the task given first).
 */
static int
task_sleep_cmp(const pairingheap_node *a, const pairingheap_node *b,
			   void *arg)
{
	const LsmTask *ta = pairingheap_const_container(LsmTask, sleep_node, a);
	const LsmTask *tb = pairingheap_const_container(LsmTask, sleep_node, b);

	if (ta->asleep_until != tb->asleep_until)
		return ta->asleep_until < tb->asleep_until ? 1 : -1;
	return ta->run_index < tb->run_index ? 1 :
		(ta->run_index > tb->run_index ? -1 : 0);
}

/*
 * task_rank_cmp: pairingheap comparator putting the lowest ranked pass
 * first (ranks are unique within a drain).
 */
static int
task_rank_cmp(const pairingheap_node *a, const pairingheap_node *b,
			  void *arg)
{
	int64		ra = pairingheap_const_container(LsmTask, rank_node, a)->watermark.pass_rank;
	int64		rb = pairingheap_const_container(LsmTask, rank_node, b)->watermark.pass_rank;

	return ra < rb ? 1 : (ra > rb ? -1 : 0);
}

/*
 * task_drain_queue_of: the queue of drain in driver d, created when
 * needed.
 */
static TaskDrainQueue *
task_drain_queue_of(TaskDriver *d, LsmPaceDrain *drain)
{
	TaskDrainQueue *q;

	for (q = d->drains; q; q = q->next)
		if (q->drain == drain)
			return q;
	q = palloc0(sizeof(TaskDrainQueue));
	q->drain = drain;
	q->ranked = pairingheap_allocate(task_rank_cmp, NULL);
	dlist_init(&q->stragglers);
	q->next = d->drains;
	d->drains = q;
	return q;
}

/*
 * task_poll_waiting: whether the task is a checkpoint waiting for the
 * next poll of a pass ranked in a shared drain, which a pass seen over
 * there may move.
 */
static bool
task_poll_waiting(const LsmTask *task)
{
	return task->watermark.drain != NULL && task->watermark.pass_rank != 0 &&
		task->phase == LSM_PHASE_POLL && !task->backing_off;
}

/*
 * task_park: file the timer of a task that sleeps until task->wake_at: by
 * rank in its drain's queue when its poll follows the drain, else in the
 * heap of timers (listed as a straggler of its drain when a pass seen over
 * may move it).
 */
static void
task_park(TaskDriver *d, LsmTask *task)
{
	task->asleep_until = task->wake_at;
	if (task_poll_waiting(task))
	{
		TaskDrainQueue *q = task_drain_queue_of(d, task->watermark.drain);

		if (lsm_watermark_follows_drain(&task->watermark))
		{
			pairingheap_add(q->ranked, &task->rank_node);
			task->ranked = true;
			return;
		}
		dlist_push_tail(&q->stragglers, &task->straggler_node);
		q->nstragglers++;
		task->straggling = true;
	}
	pairingheap_add(d->sleepers, &task->sleep_node);
	task->asleep = true;
}

/*
 * task_unpark: take a task's timer out of wherever task_park filed it.
 */
static void
task_unpark(TaskDriver *d, LsmTask *task)
{
	if (task->ranked || task->straggling)
	{
		TaskDrainQueue *q = task_drain_queue_of(d, task->watermark.drain);

		if (task->ranked)
			pairingheap_remove(q->ranked, &task->rank_node);
		if (task->straggling)
		{
			dlist_delete(&task->straggler_node);
			q->nstragglers--;
		}
	}
	if (task->asleep)
		pairingheap_remove(d->sleepers, &task->sleep_node);
	task->ranked = false;
	task->straggling = false;
	task->asleep = false;
}

/*
 * task_window_kept: the window kept for the server and role of gate g, or
 * NULL.
 */
static TaskWindowKept *
task_window_kept(const TaskGate *g)
{
	for (TaskWindowKept *k = task_windows_kept; k; k = k->next)
		if (k->serverid == g->serverid && k->umid == g->umid)
			return k;
	return NULL;
}

/*
 * task_window_recall: the window of a new gate g under ceiling: the one
 * an earlier driver run of this statement ended with on the same server
 * and role at the same ceiling, else a new one.
 */
static void
task_window_recall(TaskGate *g, int ceiling)
{
	TaskWindowKept *k = task_window_kept(g);

	if (k && k->statement_start == GetCurrentStatementStartTimestamp() &&
		k->window.ceiling == ceiling)
		g->window = k->window;
	else
		lsm_window_init(&g->window, ceiling);
}

/*
 * task_windows_keep: keep the windows of d's gates for the statement's
 * next driver run (task_window_recall).
 */
static void
task_windows_keep(const TaskDriver *d)
{
	for (const TaskGate *g = d->gates; g; g = g->next)
	{
		TaskWindowKept *k = task_window_kept(g);

		if (k == NULL)
		{
			k = MemoryContextAllocZero(TopMemoryContext, sizeof(TaskWindowKept));
			k->serverid = g->serverid;
			k->umid = g->umid;
			k->next = task_windows_kept;
			task_windows_kept = k;
		}
		k->statement_start = GetCurrentStatementStartTimestamp();
		k->window = g->window;
	}
}

/*
 * task_gate_of: the gate of a task's server and role in driver d, created
 * when needed.
 */
static TaskGate *
task_gate_of(TaskDriver *d, LsmTask *task)
{
	TaskGate   *g;
	int			ceiling;

	if (task->gate)
		return task->gate;
	for (g = d->gates; g; g = g->next)
		if (g->serverid == task->config->serverid &&
			g->umid == task->config->umid)
			break;
	if (g == NULL)
	{
		g = palloc0(sizeof(TaskGate));
		g->serverid = task->config->serverid;
		g->umid = task->config->umid;
		ceiling = task->config->max_requests_in_flight;
		if (ceiling < 1 || ceiling > LSM_TASK_INFLIGHT_PER_POOL)
			ceiling = LSM_TASK_INFLIGHT_PER_POOL;
		task_window_recall(g, ceiling);
		g->next = d->gates;
		d->gates = g;
	}
	task->gate = g;
	return g;
}

/*
 * task_send: send the due request of the task's current phase, on a
 * request no task holds when there is one.
 */
static void
task_send(TaskDriver *d, LsmTask *task)
{
	TaskGate   *g;
	LsmRoute	route = LSM_ROUTE_STATS;
	const char *body = NULL;

	if (task->phase == LSM_PHASE_FLUSH)
		route = LSM_ROUTE_FLUSH;
	else if (task->phase == LSM_PHASE_COMPACT)
		route = LSM_ROUTE_COMPACT;
	else if (task->phase == LSM_PHASE_SPEC)
	{
		route = task_spec_route(task->kind);
		body = task->spec_body;
	}
	else
	{
		body = task_stats_body(task);
		task->polls++;
	}
	task->ready = false;
	if (task->req == NULL && d->spare != NIL)
	{
		task->req = llast(d->spare);
		d->spare = list_delete_last(d->spare);
	}
	task->req = lsm_http_prepare(task->req, task->config, route,
								 task->wire_table_name, body, task);
	lsm_http_start(task->req, d->deadline);
	task->requests++;
	task->in_flight = true;
	g = task_gate_of(d, task);
	g->inflight++;
	task->window_seq = lsm_window_sent(&g->window);
}

/*
 * task_gate_drain: send the requests due on gate g, oldest first, while
 * it has room.
 */
static void
task_gate_drain(TaskDriver *d, TaskGate *g)
{
	while (g->inflight < g->window.cap)
	{
		TaskQueue  *q = g->going.head ? &g->going : &g->fresh;
		LsmTask    *task = q->head;

		if (task == NULL)
			return;
		q->head = task->queue_next;
		if (q->head == NULL)
			q->tail = NULL;
		task->queue_next = NULL;
		task_send(d, task);
		task_progress_update(task);
	}
}

/*
 * task_settle: after the driver acted on a task (started it, woke it,
 * handed it an answer, moved its timer): queue or send its due request,
 * file its timer in the heap, give its request back when none is in
 * flight, and hand it to done the moment it has finished (its progress
 * entry freed and its outcome in the history) or update its progress.
 * done must not raise an error.
 */
static void
task_settle(TaskDriver *d, LsmTask *task)
{
	if (task->ready)
	{
		TaskGate   *g = task_gate_of(d, task);
		TaskQueue  *q = task->answered ? &g->going : &g->fresh;

		if (q->tail)
			q->tail->queue_next = task;
		else
			q->head = task;
		q->tail = task;
		task->ready = false;	/* now it is the gate's */
		task_gate_drain(d, g);
	}
	if ((task->asleep || task->ranked) && task->asleep_until != task->wake_at)
		task_unpark(d, task);
	if (!task->asleep && !task->ranked && task->wake_at != 0 &&
		!task->in_flight && task->phase != LSM_PHASE_DONE)
		task_park(d, task);
	if (task->req && !task->in_flight)
	{
		lsm_http_release(task->req);
		d->spare = lappend(d->spare, task->req);
		task->req = NULL;
	}
	if (task->phase != LSM_PHASE_DONE)
	{
		task_progress_update(task);
		return;
	}
	if (d->reported[task->run_index])
		return;
	d->reported[task->run_index] = true;
	d->active--;
	task_progress_end(task, 0);
	if (d->done)
		d->done(task, task->run_index, d->arg);
}

/*
 * task_drain_due: hand the polls that followed drain queue q and are due
 * at now to the heap of timers, due now, lowest rank first; and those
 * that follow it no more (their pass is ranked below one seen over) at
 * the time lsm_watermark_rewake gives them.  Returns when the poll of the
 * lowest rank left is due (0: none left).
 */
static TimestampTz
task_drain_due(TaskDriver *d, TaskDrainQueue *q, TimestampTz now)
{
	while (!pairingheap_is_empty(q->ranked))
	{
		LsmTask    *task = pairingheap_container(LsmTask, rank_node,
												 pairingheap_first(q->ranked));
		TimestampTz due_at;

		if (lsm_watermark_drain_due(&task->watermark, &due_at))
		{
			if (due_at > now)
				return due_at;
			lsm_watermark_drain_polled(&task->watermark, now);
			task->wake_at = now;
		}
		else
		{
			TimestampTz wake_at = lsm_watermark_rewake(&task->watermark, now,
													   task->wake_at);

			if (wake_at != 0)
				task->wake_at = wake_at;
		}
		task_unpark(d, task);
		task_settle(d, task);
	}
	return 0;
}

/*
 * task_wake_due: issue the requests of tasks whose sleep is over; returns
 * the earliest wake-up still pending (0: none), and whether that task
 * sleeps before a retry or re-issue in d->next_backing_off.
 */
static TimestampTz
task_wake_due(TaskDriver *d)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz next = 0;
	TimestampTz drain_next = 0;

	d->next_backing_off = false;
	for (TaskDrainQueue *q = d->drains; q; q = q->next)
	{
		TimestampTz due_at = task_drain_due(d, q, now);

		if (due_at != 0 && (drain_next == 0 || due_at < drain_next))
			drain_next = due_at;
	}
	/* (issuing only marks a task ready: no drain's queue changes below) */
	while (!pairingheap_is_empty(d->sleepers))
	{
		LsmTask    *task = pairingheap_container(LsmTask, sleep_node,
												 pairingheap_first(d->sleepers));

		if (task->asleep_until > now)
		{
			next = task->asleep_until;
			d->next_backing_off = task->backing_off;
			break;
		}
		task_unpark(d, task);
		task_issue(task);
		task_settle(d, task);
	}
	if (drain_next != 0 && (next == 0 || drain_next < next))
	{
		next = drain_next;
		d->next_backing_off = false;
	}
	return next;
}

/*
 * task_drain_sighting: a pass of the call was seen over on the drain of
 * queue q, of a higher rank than any before: the polls of passes ranked
 * below it go now (task_drain_due), and every straggler's poll moves where
 * lsm_watermark_rewake says (the server grants permits in trigger order:
 * passes ranked below it are probably over, and the passes after it end
 * sooner or later than predicted).  The polls that follow the drain move
 * with its prediction without a visit.
 */
static void
task_drain_sighting(TaskDriver *d, TaskDrainQueue *q)
{
	TimestampTz now = GetCurrentTimestamp();
	int			n = q->nstragglers;

	(void) task_drain_due(d, q, now);
	for (int i = 0; i < n && !dlist_is_empty(&q->stragglers); i++)
	{
		dlist_node *node = dlist_pop_head_node(&q->stragglers);
		LsmTask    *task = dlist_container(LsmTask, straggler_node, node);
		TimestampTz wake_at = 0;

		/* visited once: back at the tail, or filed anew by task_settle */
		dlist_push_tail(&q->stragglers, node);
		if (task->wake_at > now)
			wake_at = lsm_watermark_rewake(&task->watermark, now,
										   task->wake_at);
		if (wake_at != 0 && wake_at != task->wake_at)
		{
			task->wake_at = wake_at;
			task_settle(d, task);
		}
	}
}

/*
 * task_may_share_drain: a checkpoint that will send requests (not one
 * refused before any: those have no server configuration).
 */
static bool
task_may_share_drain(const LsmTask *task)
{
	return task->kind == LSM_TASK_CHECKPOINT &&
		task->phase != LSM_PHASE_DONE && task->config != NULL;
}

/*
 * task_share_drains: give the checkpoints of each server that has two or
 * more of them in this call one LsmPaceDrain (src/task/pace.c), allocated in
 * CurrentMemoryContext.
 */
static void
task_share_drains(LsmTask **tasks, int ntasks)
{
	for (int i = 0; i < ntasks; i++)
	{
		LsmTask    *task = tasks[i];
		LsmPaceDrain *drain = NULL;

		if (!task_may_share_drain(task) || task->watermark.drain)
			continue;
		for (int j = i + 1; j < ntasks; j++)
		{
			LsmTask    *other = tasks[j];

			if (!task_may_share_drain(other) ||
				other->config->serverid != task->config->serverid)
				continue;
			if (drain == NULL)
				drain = palloc0(sizeof(LsmPaceDrain));
			other->watermark.drain = drain;
		}
		task->watermark.drain = drain;
	}
}

/*
 * lsm_task_run_all: run initialised tasks concurrently until each has
 * finished; each task's outcome is in its failure (NULL: success), stats
 * and counters.  Raises only PostgreSQL's own errors (cancel, timeout,
 * out of memory); every request still in flight is then aborted.
 */
void
lsm_task_run_all(LsmTask **tasks, int ntasks)
{
	lsm_task_run_all_notify(tasks, ntasks, NULL, NULL);
}

/*
 * task_driver_start: start every task of d not finished before the call
 * (the first LSM_CALL_MAX_CLAIMS checkpoints that report progress get a
 * progress entry each), then hand the finished ones to done, in order.
 */
static void
task_driver_start(TaskDriver *d)
{
	int			claims = 0;

	for (int i = 0; i < d->ntasks; i++)
	{
		LsmTask    *task = d->tasks[i];

		task->run_index = i;
		task->asleep = false;
		task->ranked = false;
		task->straggling = false;
		task->ready = false;
		task->queue_next = NULL;
		task->gate = NULL;
		if (task->phase == LSM_PHASE_DONE)
			continue;			/* refused before any request */
		d->active++;
		task->started_at = GetCurrentTimestamp();
		if (task_progress_begin(task, claims < LSM_CALL_MAX_CLAIMS))
			claims++;
		task_issue(task);
		task_settle(d, task);
	}
	for (int i = 0; i < d->ntasks; i++)
	{
		if (d->tasks[i]->phase != LSM_PHASE_DONE || d->reported[i])
			continue;			/* running, or handed over above */
		d->reported[i] = true;
		task_progress_end(d->tasks[i], 0);
		if (d->done)
			d->done(d->tasks[i], i, d->arg);
	}
}

/*
 * task_window_signal: what the answer to the task's request says about
 * the server's load, for its gate's window; read before the task acts on
 * it.  A 429 or 503 to a compact trigger tells of a pass holding the
 * latch, not of an overloaded server: neutral.
 */
static LsmWindowSignal
task_window_signal(LsmTask *task)
{
	switch (lsm_fault_verdict(lsm_http_outcome(task->req)))
	{
		case LSM_VERDICT_OK:
			return LSM_WINDOW_FINE;
		case LSM_VERDICT_RETRY:
			return task->phase == LSM_PHASE_COMPACT ?
				LSM_WINDOW_NEUTRAL : LSM_WINDOW_OVERLOADED;
		default:
			return LSM_WINDOW_NEUTRAL;
	}
}

/*
 * task_driver_answer: the request of task finished; act on its answer,
 * then move the polls waiting on its drain when it saw a pass of a higher
 * rank over, and send what is due on its gate.
 */
static void
task_driver_answer(TaskDriver *d, LsmTask *task)
{
	LsmPaceDrain *drain = task->watermark.drain;
	int64		seen = drain ? drain->last_rank : 0;
	TaskGate   *g = task_gate_of(d, task);

	g->inflight--;
	lsm_window_answered(&g->window, task->window_seq,
						task_window_signal(task));
	task_on_answer(task);
	task_settle(d, task);
	if (drain && drain->last_rank > seen)
		task_drain_sighting(d, task_drain_queue_of(d, drain));
	task_gate_drain(d, g);
}

/*
 * task_driver_row_deadline: lsm_statement_row_deadline when a task of d
 * returns a row among many (lsm_task_set_row_deadline), else 0.
 */
static TimestampTz
task_driver_row_deadline(const TaskDriver *d)
{
	for (int i = 0; i < d->ntasks; i++)
		if (d->tasks[i]->row_deadline)
			return lsm_statement_row_deadline();
	return 0;
}

/*
 * task_stop_waiting: the row deadline of d has come: abort every request
 * in flight and end each task not finished yet with 57014 and what it was
 * waiting on (task_row_deadline_failure), handing it to done as any
 * finished task.
 */
static void
task_stop_waiting(TaskDriver *d)
{
	lsm_http_abort_all();
	for (int i = 0; i < d->ntasks; i++)
	{
		LsmTask    *task = d->tasks[i];

		if (d->reported[i] || task->phase == LSM_PHASE_DONE)
			continue;
		task->in_flight = false;
		task->backing_off = false;
		task_finish(task, task_row_deadline_failure(task));
		task_settle(d, task);
	}
}

/*
 * lsm_task_run_all_notify: lsm_task_run_all, calling done(task, index,
 * arg) once for each task the moment it finishes (a task finished before
 * the call, refused before any request, at the first look), from inside
 * the driver loop: done must not raise an error nor run the driver again.
 * The first LSM_CALL_MAX_CLAIMS checkpoints of the call that report
 * progress get a progress entry each; the rest run unlisted, counted in
 * lancelsm_info's progress_skipped.  On an error the tasks not yet handed to
 * done are not handed to it: the caller's error handler sees them
 * unfinished.
 *
 * A call whose tasks return a row each among many
 * (lsm_task_set_row_deadline) stops waiting at
 * lsm_statement_row_deadline, shortly before statement_timeout: every
 * task not finished then fails with 57014 and its diagnosis, and the call
 * returns normally.
 *
 * The cost of an event does not grow with the call: timers are kept in a
 * heap, the polls that follow a drain by rank (a pass seen over moves
 * them without a visit), finished tasks are handed over as they finish,
 * and at most LSM_TASK_INFLIGHT_PER_POOL requests per server and role (or
 * the server's max_requests_in_flight; fewer while the gate's window is
 * smaller) are in flight, on requests reused from task to task, the
 * others due waiting in order.
 */
void
lsm_task_run_all_notify(LsmTask **tasks, int ntasks, LsmTaskDone done,
						void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	TaskDriver	d;
	ListCell   *lc;

	memset(&d, 0, sizeof(d));
	d.tasks = tasks;
	d.ntasks = ntasks;
	d.reported = palloc0(Max(ntasks, 1) * sizeof(bool));
	d.sleepers = pairingheap_allocate(task_sleep_cmp, NULL);
	d.deadline = lsm_statement_deadline();
	d.row_deadline = task_driver_row_deadline(&d);
	d.done = done;
	d.arg = arg;
	task_share_drains(tasks, ntasks);
	PG_TRY();
	{
		task_driver_start(&d);
		while (d.active > 0)
		{
			TimestampTz wake_at = task_wake_due(&d);
			LsmTask    *answered;

			if (d.row_deadline != 0)
			{
				if (GetCurrentTimestamp() >= d.row_deadline)
				{
					task_stop_waiting(&d);
					break;
				}
				if (wake_at == 0 || wake_at > d.row_deadline)
					wake_at = d.row_deadline;
			}
			answered = lsm_http_wait(wake_at, d.deadline,
									 d.next_backing_off);

			if (answered)
				task_driver_answer(&d, answered);
			else if (wake_at == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg_internal("lancelsm task stalled with nothing in flight")));
		}
	}
	PG_CATCH();
	{
		int			sqlerrcode = geterrcode();

		lsm_http_abort_all();
		for (int i = 0; i < ntasks; i++)
			if (!d.reported[i])
				task_progress_end(tasks[i], sqlerrcode);
		if (sqlerrcode == ERRCODE_QUERY_CANCELED)
			task_rethrow_waiting(tasks, ntasks, cxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	lsm_http_waits_over();
	task_windows_keep(&d);
	foreach(lc, d.spare)
		lsm_http_free((LsmRequest *) lfirst(lc));
	list_free(d.spare);
	pairingheap_free(d.sleepers);
	while (d.drains)
	{
		TaskDrainQueue *q = d.drains;

		d.drains = q->next;
		pairingheap_free(q->ranked);
		pfree(q);
	}
	pfree(d.reported);
}
