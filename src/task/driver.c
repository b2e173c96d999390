/*-------------------------------------------------------------------------
 *
 * driver.c
 *		The driver: runs any number of tasks at once on the shared HTTP
 *		client, until each has finished.
 *
 * Tasks due wait in a gate per server and role (at most its window in
 * flight, window.c), sleepers in a heap of timers, and the polls that
 * follow a drain (pace.c) by the rank of their pass; each answer goes to
 * the policy (retry.c), which takes the task's next step.  A call of many
 * tables stops waiting at its row deadline; on an error every request in
 * flight is aborted and the tasks' progress ended.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "deadline.h"
#include "miscadmin.h"
#include "net/net.h"
#include "nodes/pg_list.h"
#include "protocol/protocol.h"
#include "task/retry.h"
#include "task/steps.h"
#include "task/task.h"
#include "task/task_internal.h"
#include "task/window.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

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
 * task_window_recall: the window of a new gate g under ceiling: the one
 * an earlier driver run of this statement ended with on the same server
 * and role at the same ceiling, else a new one (window_kept.c).
 */
static void
task_window_recall(TaskGate *g, int ceiling)
{
	lsm_window_recall(g->serverid, g->umid, ceiling, &g->window);
}

/*
 * task_windows_keep: keep the windows of d's gates for the statement's
 * next driver run (task_window_recall).
 */
static void
task_windows_keep(const TaskDriver *d)
{
	for (const TaskGate *g = d->gates; g; g = g->next)
		lsm_window_keep(g->serverid, g->umid, &g->window);
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
 * task_fresh_headers: the freshness headers of the task's prepared
 * request (docs/protocol.md, "Fresh reads"): the kept version, or the
 * floor of a checkpoint's reads when higher; the read_consistency_interval's
 * time, or the time of sending while a checkpoint's reads follow an
 * unversioned flush.
 */
static void
task_fresh_headers(LsmTask *task)
{
	uint64		version = lsm_fresh_kept(task->config, task->wire_table_name);
	TimestampTz at = lsm_fresh_min_timestamp(task->config);
	bool		read_after_flush = (task->phase == LSM_PHASE_WATERMARK ||
									task->phase == LSM_PHASE_POLL);

	if (read_after_flush && version < task->floor_version)
		version = task->floor_version;
	if (read_after_flush && task->time_floor)
		at = GetCurrentTimestamp();
	lsm_http_set_freshness(task->req, version, at);
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
								 task->wire_table_name, body, task,
								 task->phase == LSM_PHASE_SPEC &&
								 task->retries > 0 ? task->request_id : NULL);
	strlcpy(task->request_id, lsm_http_outcome(task->req)->request_id,
			sizeof(task->request_id));
	task_fresh_headers(task);
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
