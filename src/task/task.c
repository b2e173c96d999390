/*-------------------------------------------------------------------------
 *
 * task.c
 *		A task: one SQL-level operation on one table, its state, how it is
 *		prepared, issued and finished, and what it reports to the record.
 *
 * A task is one operation on one table: flush, compact, a stats read, or a
 * checkpoint (flush, then stats, then compact and poll until the targets
 * are drained), or a write spec request.  Tasks are state machines: each
 * owns at most one request in flight or one timer, so the driver
 * (driver.c) runs many of them on the shared HTTP client and one table's
 * faults never stop another.  What an answer makes of a task is the
 * policy's (retry.c: the fault table, retries and back-off) and its
 * operation's table of steps (step_flush.c, step_compact.c, step_stats.c,
 * step_checkpoint.c, step_spec.c).
 *
 * The engine reports to the record (src/record/): a task's snapshot when
 * it starts, as it goes and when it ends (progress, the run history, the
 * table counters), and the pace a checkpoint learnt.  The record never
 * calls back.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "net/net.h"
#include "settings.h"
#include "protocol/protocol.h"
#include "task/task.h"
#include "task/task_internal.h"
#include "utils/timestamp.h"
#include "wire_text.h"

/*
 * A checkpoint sends at most LSM_RATE_BURST requests at once and
 * LSM_RATE_PER_SECOND on average (a token bucket), so that no window of one
 * second ever holds more than 20 requests to one table, however often its
 * polls see progress.
 */
#define LSM_RATE_BURST 4
#define LSM_RATE_PER_SECOND 16

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
 * lsm_task_set_records: whether the role that starts a task not yet run
 * may record (src/functions/recording.c): only then does the task count
 * in the table counters and last stats of a declared table
 * (src/record/counters.c).  False unless set.  Never raises an error.
 */
void
lsm_task_set_records(LsmTask *task, bool records)
{
	task->records = records;
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
	snap->waiting_bucket = lsm_watermark_waiting(&task->watermark,
												 &snap->waiting_status);
	snap->finished = (task->phase == LSM_PHASE_DONE);
	snap->failure = task->failure;
	snap->answered = task->answered;
	snap->source = task->source;
	snap->declared = task->declared;
	snap->records = task->records;
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
LsmFaultMessage
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
 * task_sleep: park the task for ms milliseconds; the driver issues its
 * current phase's request when the time comes.
 */
void
task_sleep(LsmTask *task, long ms)
{
	task->wake_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), ms);
}

/*
 * task_finish: the task is over; failure is NULL on success.  The
 * failure is redacted of the API key before anyone sees it.
 */
void
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
void
task_fail_request(LsmTask *task)
{
	task_finish(task, lsm_fault_from_request(lsm_http_outcome(task->req),
											 task_fault(task),
											 task->table_name,
											 task->retries));
}

/*
 * task_fail: finish the task with a failure of its own rather than its
 * request's fault: sqlerrcode, with detail and hint as full sentences
 * (palloc'd; hint may be NULL), under the errmsg of its operation and
 * table (task_fault).
 */
void
task_fail(LsmTask *task, int sqlerrcode, char *detail, char *hint)
{
	task_finish(task, lsm_fault_new(sqlerrcode, detail, hint,
									task_fault(task), task->table_name));
}

/*
 * task_fail_decode: finish the task with the protocol-violation failure
 * (08P01) of an answer that could not be decoded; what names the answer
 * ("statistics"), errbuf the decoder's description.
 */
void
task_fail_decode(LsmTask *task, const char *what, const char *errbuf)
{
	bool		lossless;

	/* the decoder may quote the answer's UTF-8 */
	task_fail(task, ERRCODE_PROTOCOL_VIOLATION,
			  psprintf("The %s the server sent could not be decoded: %s. Request ID: %s.",
					   what,
					   lsm_text_from_wire_quiet(errbuf, &lossless),
					   lsm_http_outcome(task->req)->request_id),
			  NULL);
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
	task_fail(task, ERRCODE_CONFIG_FILE_ERROR, problem,
			  pstrdup("Check the server's bearer_token_file option and the agent that writes the file."));
	return false;
}

/*
 * task_issue: make the request of the task's current phase due now, or as
 * soon as its request budget allows.  The driver sends it (task_send) when
 * its server has room for one more request in flight.
 */
void
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
 * task_progress_begin: a task starts; it claims a progress entry when it
 * is a checkpoint that reports progress (progress.c decides) and listed,
 * i.e. its call has not claimed LSM_CALL_MAX_CLAIMS entries yet.  Returns
 * whether it holds an entry.
 */
bool
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
void
task_progress_update(const LsmTask *task)
{
	LsmTaskSnapshot snap;

	if (task->progress_slot < 0)
		return;					/* most tasks of a large call: no entry */
	lsm_task_snapshot(task, &snap);
	lsm_progress_update(&snap);
}

/*
 * task_progress_end: the task is over for progress reporting
 * (interrupted_by: 0, or the SQLSTATE of the error that ended the
 * statement); it no longer holds a progress entry.  Never raises an
 * error: it runs in lsm_task_run_all's error handler.
 */
void
task_progress_end(LsmTask *task, int interrupted_by)
{
	LsmTaskSnapshot snap;

	lsm_task_snapshot(task, &snap);
	lsm_progress_end(&snap, interrupted_by);
	lsm_run_record(&snap, interrupted_by);
	lsm_counters_record(&snap, interrupted_by);
	task->progress_slot = -1;
}
