/*-------------------------------------------------------------------------
 *
 * herd.c
 *		Many sessions of this cluster checkpointing one LanceDB table at
 *		once: the first leads a run, the others join it and wait on shared
 *		memory for its outcome instead of each polling the server.
 *
 * A small registry in shared memory (its own segment, HERD_ENTRIES
 * entries under one LWLock) holds one entry per LanceDB table with a
 * checkpoint running in this cluster: the table is the exact request
 * target (the URL with its ?delimiter=), the database, its prefix, the CA
 * bundle and the proxy, and a run is shared by the sessions of any
 * database and role that send the same credentials (a digest of them is
 * part of the entry's key; no secret is kept in clear) and pace their
 * checkpoints alike (their poll interval, backoff, budgets and bounds are
 * part of the key too): no session's settings make another session's
 * checkpoint wait longer than it would alone.  A checkpoint that
 * waits for its drain claims its table's entry ("leads a run") just before
 * it starts and publishes its outcome into the entry the moment its table
 * finishes -- the task driver reports each finished task to a callback
 * of this file, so a multi-table call never holds a finished table's run
 * -- and each end broadcasts the entry's condition variable.  One call
 * leads at most LSM_CALL_MAX_CLAIMS runs; its other tables run alone.
 *
 * Joining.  A checkpoint converges what was written before it started:
 * its flush seals the memtables, its targets (the watermark, see
 * src/task/watermark.c) are the newest L0 generations after that flush.  A run
 * is claimed before its flush is sent (every flush it sends, re-issues
 * after 421 included, comes after the claim), so its targets cover every
 * write made before the claim.  A checkpoint that starts while a run is
 * going therefore joins it only if the run was claimed at or after its own
 * start; otherwise new writes may sit above the run's targets, and it
 * waits for the run to end and then leads the next run or joins it.  A
 * herd that arrives at once thus costs at most two runs.
 *
 * Outcome.  A joiner ends with the run's outcome: its success, or its
 * failure with the same SQLSTATE (the detail says it was joined).  A run
 * that ends without an outcome of the table -- its statement cancelled or
 * timed out, its backend terminated, or a failure of its own session
 * rather than of the table (the key refused: 28000, 42501; the bearer
 * token file: F0000) -- is not shared: its joiners take over, the first
 * to get there leading a new run.  A joiner is bounded by its own
 * statement_timeout and cancel, as any wait of lancelsm.
 *
 * A session with lancelsm.share_checkpoints off neither joins, skips nor
 * leads: its checkpoints run alone and verify their own outcome.
 *
 * Sessions on different PostgreSQL servers share nothing here: each
 * server's herd costs its own runs.  Without lancelsm in
 * shared_preload_libraries there is no registry, and every checkpoint
 * runs alone.  A checkpoint that finds the registry full runs alone too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/cryptohash.h"
#include "common/hashfn.h"
#include "common/sha2.h"
#include "task/task.h"
#include "deadline.h"
#include "settings.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "pg_compat.h"
#include "wire_text.h"

/* Runs of distinct tables the registry tracks at once. */
#define HERD_ENTRIES 256
/* Longest table key kept, in bytes with the terminator (clipped). */
#define HERD_KEY_LEN 512
/* Longest failure detail a run publishes, with the terminator (clipped). */
#define HERD_DETAIL_LEN 512

/* The outcome of a run that ended. */
typedef struct HerdOutcome
{
	uint64		run;			/* the run; 0: none yet */
	bool		shared;			/* its joiners take it as theirs */
	int			sqlerrcode;		/* 0: success */
	char		detail[HERD_DETAIL_LEN];	/* the failure's errdetail, UTF-8 */
	int32		passes;
	int32		polls;
	int			leader_pid;
} HerdOutcome;

/* One table's runs; protected by the LWLock, but for cv. */
typedef struct HerdEntry
{
	ConditionVariable cv;		/* broadcast when a run ends */
	bool		used;			/* key is set */
	bool		running;		/* run is going */
	uint64		key_hash;		/* of the whole key: clipped ones differ */
	char		key[HERD_KEY_LEN];
	uint64		run;			/* the running or last run */
	int			leader_pid;
	TimestampTz claimed_at;
	HerdOutcome last;			/* of the last run that ended */
} HerdEntry;

typedef struct HerdShared
{
	LWLock	   *lock;
	uint64		next_run;
	HerdEntry	entries[HERD_ENTRIES];
} HerdShared;

/* What a task of this backend does about its table's run. */
typedef enum HerdRole
{
	HERD_ALONE,					/* runs without the registry */
	HERD_LEAD,					/* claimed a run: runs and publishes it */
	HERD_JOIN,					/* waits for a run that covers it */
	HERD_BEHIND,				/* waits for a run that does not, then again */
	HERD_SKIPPED				/* finished: a run is going (LSM_HERD_SKIP) */
} HerdRole;

typedef struct HerdTicket
{
	HerdRole	role;
	int			slot;			/* the entry, when not ALONE */
	uint64		run;
	TimestampTz need_at;		/* when the task's caller started it */
} HerdTicket;

/* Where a run stands, seen by one who waits for it. */
typedef enum HerdState
{
	HERD_RUNNING,
	HERD_ENDED,					/* its outcome is copied out */
	HERD_LOST,					/* the entry has moved on: try again */
	HERD_STOPPED				/* the waiter's row deadline came first */
} HerdState;

static HerdShared *herd_shared = NULL;
static bool herd_exit_registered = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * herd_shmem_request: reserve the registry and its LWLock
 * (shmem_request_hook, postmaster only).
 */
static void
herd_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(sizeof(HerdShared));
	RequestNamedLWLockTranche("lancelsm herd", 1);
}

/*
 * herd_shmem_startup: attach to (or create) the registry
 * (shmem_startup_hook).
 */
static void
herd_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	herd_shared = ShmemInitStruct("lancelsm herd", sizeof(HerdShared), &found);
	if (!found)
	{
		memset(herd_shared, 0, sizeof(HerdShared));
		herd_shared->lock = &(GetNamedLWLockTranche("lancelsm herd"))->lock;
		herd_shared->next_run = 1;
		for (int i = 0; i < HERD_ENTRIES; i++)
			ConditionVariableInit(&herd_shared->entries[i].cv);
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * lsm_herd_shmem_init: when lancelsm is being loaded by
 * shared_preload_libraries, install the registry's shared memory hooks;
 * otherwise do nothing, and every checkpoint runs alone.  Called from
 * _PG_init.
 */
void
lsm_herd_shmem_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = herd_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = herd_shmem_startup;
}

/*
 * herd_wait_event: the wait event of a backend waiting for another
 * backend's run of the same table, LancelsmHerd: registered by name on
 * PostgreSQL 17 and later (once per process), the generic Extension
 * before (pg_compat.h).
 */
static uint32
herd_wait_event(void)
{
	static uint32 event = 0;

	if (event == 0)
		event = WaitEventExtensionNew("LancelsmHerd");
	return event;
}

/*
 * lsm_herd_usage: how many herd entries are running a checkpoint now
 * (*running) and how many there are (*max), counted under a shared lock;
 * false, with both 0, when lancelsm was not preloaded (no registry).
 */
bool
lsm_herd_usage(int *running, int *max)
{
	*running = 0;
	*max = 0;
	if (herd_shared == NULL)
		return false;
	*max = HERD_ENTRIES;
	LWLockAcquire(herd_shared->lock, LW_SHARED);
	for (int i = 0; i < HERD_ENTRIES; i++)
		if (herd_shared->entries[i].running)
			(*running)++;
	LWLockRelease(herd_shared->lock);
	return true;
}

/*
 * herd_end_run: end run of entry e with outcome (NULL: none to share)
 * and wake its waiters, if this backend still leads it.  The caller holds
 * no lock.  Never raises an error.
 */
static void
herd_end_run(HerdEntry *e, uint64 run, const HerdOutcome *outcome)
{
	bool		ended = false;

	LWLockAcquire(herd_shared->lock, LW_EXCLUSIVE);
	if (e->running && e->run == run && e->leader_pid == MyProcPid)
	{
		e->running = false;
		memset(&e->last, 0, sizeof(HerdOutcome));
		if (outcome)
			e->last = *outcome;
		e->last.run = run;
		e->last.leader_pid = MyProcPid;
		ended = true;
	}
	LWLockRelease(herd_shared->lock);
	if (ended)
		ConditionVariableBroadcast(&e->cv);
}

/*
 * herd_backend_exit: end every run this backend still leads, with no
 * outcome (before_shmem_exit), e.g. after pg_terminate_backend.
 */
static void
herd_backend_exit(int code, Datum arg)
{
	for (int i = 0; i < HERD_ENTRIES; i++)
	{
		HerdEntry  *e = &herd_shared->entries[i];

		herd_end_run(e, e->run, NULL);
	}
}

/*
 * herd_digest: the SHA-256, in hex, of parts (NULL counts as empty), each
 * ended by its terminator so that "ab","c" is not "a","bc"; palloc'd.
 * Raises only out of memory (53200).
 */
static char *
herd_digest(const char *const *parts, int nparts)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	char	   *hex = palloc(2 * PG_SHA256_DIGEST_LENGTH + 1);
	bool		ok = pg_cryptohash_init(ctx) == 0;

	for (int i = 0; i < nparts && ok; i++)
	{
		const char *part = parts[i] ? parts[i] : "";

		ok = pg_cryptohash_update(ctx, (const uint8 *) part,
								  strlen(part) + 1) == 0;
	}
	ok = ok && pg_cryptohash_final(ctx, digest, sizeof(digest)) == 0;
	pg_cryptohash_free(ctx);
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	for (int i = 0; i < PG_SHA256_DIGEST_LENGTH; i++)
		sprintf(hex + 2 * i, "%02x", digest[i]);
	return hex;
}

/*
 * herd_credential: the digest of everything a request of config c
 * authenticates with -- the API key, the bearer token file, the client
 * certificate and key, the proxy user and password, the user id and every
 * extra header -- so that a run is shared only among sessions that would
 * send the same credentials: a role whose own credentials the server or
 * the proxy would refuse never waits on, or learns the outcome of,
 * another role's run.  The secrets themselves never reach shared memory.
 * Raises only out of memory (53200).
 */
static char *
herd_credential(const LsmConfig *c)
{
	const char *fixed[] = {c->api_key, c->bearer_token_file, c->ssl_cert_file,
		c->ssl_key_file, c->proxy_user, c->proxy_password, c->user_id};
	int			nfixed = lengthof(fixed);
	const char **parts = palloc((nfixed + c->nheaders) * sizeof(char *));
	char	   *hex;

	memcpy(parts, fixed, sizeof(fixed));
	for (int i = 0; i < c->nheaders; i++)
		parts[nfixed + i] = c->header_lines[i];
	hex = herd_digest(parts, nfixed + c->nheaders);
	pfree(parts);
	return hex;
}

/*
 * herd_pace: the settings of this session that decide how a run goes and
 * when it ends -- the poll interval's bounds, the backoff, the retry and
 * re-issue budgets, the idle bound and the response cap -- as text;
 * palloc'd.  Part of the key, so that a run is shared only among
 * sessions that would run it alike: a role that slows its own polls
 * (lancelsm.poll_interval_min = '1h') or makes its runs fail early
 * (lancelsm.retry_budget = 0) leads a run of its own, which no session
 * of other settings joins, waits behind or is skipped for.
 */
static char *
herd_pace(void)
{
	return psprintf("%d %d %d %d %d %d %d %d",
					lsm_poll_interval_min_ms, lsm_poll_interval_max_ms,
					lsm_backoff_base_ms, lsm_backoff_max_ms,
					lsm_retry_budget, lsm_reissue_budget,
					lsm_max_idle_polls, lsm_max_response_size_kb);
}

/*
 * herd_key: the registry key of a task's table, its hash in *hash;
 * palloc'd.  The key is the credentials' digest, the session's pacing
 * settings (herd_pace) and the exact request target: the table's URL as
 * every request of the checkpoint names it (base URL, encoded identifier,
 * ?delimiter= when not "$"), the database, its prefix, the CA bundle and
 * the proxy that carry it, so that two servers which would address
 * different tables never share a run.
 */
static char *
herd_key(const LsmTask *task, uint64 *hash)
{
	const LsmConfig *c = task->config;
	char	   *credential = herd_credential(c);
	char	   *pace = herd_pace();
	char	   *target = lsm_url_build(c->base_url, c->id_delimiter,
									   task->wire_table_name, "lsm");
	char	   *key = psprintf("%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s",
							   credential, pace, target,
							   c->database ? c->database : "",
							   c->database_prefix ? c->database_prefix : "",
							   c->ssl_ca_file ? c->ssl_ca_file : "",
							   c->proxy ? c->proxy : "");

	pfree(credential);
	pfree(pace);
	pfree(target);
	*hash = hash_bytes_extended((const unsigned char *) key, strlen(key), 0);
	return key;
}

/*
 * herd_find: the entry of a key (clipped to HERD_KEY_LEN), else a free
 * one (never used, else not running), else -1.  The caller holds the
 * LWLock.
 */
static int
herd_find(const char *key, uint64 hash)
{
	int			unused = -1;
	int			idle = -1;

	for (int i = 0; i < HERD_ENTRIES; i++)
	{
		HerdEntry  *e = &herd_shared->entries[i];

		if (e->used && e->key_hash == hash && strcmp(e->key, key) == 0)
			return i;
		if (!e->used && unused < 0)
			unused = i;
		else if (e->used && !e->running && idle < 0)
			idle = i;
	}
	return unused >= 0 ? unused : idle;
}

/*
 * herd_claim: make entry e this backend's run of key.  The caller holds
 * the LWLock exclusively.
 */
static void
herd_claim(HerdEntry *e, const char *key, uint64 hash, HerdTicket *t)
{
	if (!e->used || e->key_hash != hash || strcmp(e->key, key) != 0)
	{
		e->used = true;
		e->key_hash = hash;
		strlcpy(e->key, key, sizeof(e->key));
		memset(&e->last, 0, sizeof(HerdOutcome));
	}
	e->running = true;
	e->run = herd_shared->next_run++;
	e->leader_pid = MyProcPid;
	e->claimed_at = GetCurrentTimestamp();
	t->role = HERD_LEAD;
	t->run = e->run;
}

/*
 * herd_may_lead: whether a task can lead a run: a checkpoint that waits
 * for its drain (a trigger-only one covers nobody).
 */
static bool
herd_may_lead(const LsmTask *task)
{
	return task->kind == LSM_TASK_CHECKPOINT && !task->trigger_only;
}

/*
 * herd_try: decide what a task does about its table's run, in ticket t
 * (need_at set by the caller): skip, join, wait behind or claim it, or
 * run alone (not a checkpoint that waits for its drain in
 * LSM_HERD_JOIN, the registry full, a run of this very backend, or
 * may_claim false: its call has claimed its share of runs).  A claim is
 * made under the LWLock after every step that may raise an error, and the
 * caller's error handler ends it (herd_release).
 */
static void
herd_try(LsmTask *task, LsmHerdMode mode, HerdTicket *t, bool may_claim)
{
	uint64		hash;
	char	   *key = herd_key(task, &hash);
	char		clipped[HERD_KEY_LEN];
	HerdEntry  *e;

	t->role = HERD_ALONE;
	strlcpy(clipped, key, sizeof(clipped));
	LWLockAcquire(herd_shared->lock, LW_EXCLUSIVE);
	t->slot = herd_find(clipped, hash);
	e = t->slot >= 0 ? &herd_shared->entries[t->slot] : NULL;
	if (e && e->running && e->key_hash == hash && strcmp(e->key, clipped) == 0)
	{
		t->run = e->run;
		if (e->leader_pid == MyProcPid)
			t->role = HERD_ALONE;
		else if (mode == LSM_HERD_SKIP)
			t->role = HERD_SKIPPED;
		else if (herd_may_lead(task))
			t->role = e->claimed_at >= t->need_at ? HERD_JOIN : HERD_BEHIND;
		if (t->role == HERD_SKIPPED)
		{
			lsm_task_set_failure(task, NULL);
			task->skipped = true;
			task->note = psprintf("skipped: a checkpoint of this table is running in backend %d",
								  e->leader_pid);
		}
	}
	else if (e && herd_may_lead(task) && may_claim)
		herd_claim(e, clipped, hash, t);
	LWLockRelease(herd_shared->lock);
	pfree(key);
}

/*
 * herd_personal: whether a failure belongs to the leader's session (its
 * key or token refused, or its call stopped waiting at its own row
 * deadline: 57014) rather than to the table.
 */
static bool
herd_personal(const LsmFailure *f)
{
	return ERRCODE_TO_CATEGORY(f->sqlerrcode) ==
		ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION ||
		f->sqlerrcode == ERRCODE_INSUFFICIENT_PRIVILEGE ||
		f->sqlerrcode == ERRCODE_CONFIG_FILE_ERROR ||
		f->sqlerrcode == ERRCODE_QUERY_CANCELED;
}

/*
 * herd_publish: a led task has finished (interrupted: its statement was
 * ended by an error first); end its run with its outcome.
 */
static void
herd_publish(const LsmTask *task, const HerdTicket *t, bool interrupted)
{
	HerdOutcome out;
	const LsmFailure *f = task->failure;

	memset(&out, 0, sizeof(out));
	out.shared = !interrupted && task->phase == LSM_PHASE_DONE &&
		(f == NULL || !herd_personal(f));
	out.sqlerrcode = f ? f->sqlerrcode : 0;
	if (f && f->detail)
	{
		bool		lossless;
		char	   *detail = lsm_text_to_wire_quiet(f->detail, &lossless);
		int			len = strlen(detail);

		/* UTF-8: joiners of any database read it (herd_adopt) */
		if (len >= HERD_DETAIL_LEN)
			len = pg_encoding_mbcliplen(PG_UTF8, detail, len,
										HERD_DETAIL_LEN - 1);
		memcpy(out.detail, detail, len);
	}
	out.passes = task->passes;
	out.polls = task->polls;
	herd_end_run(&herd_shared->entries[t->slot], t->run, &out);
}

/* What herd_task_done needs to find a finished task's ticket. */
typedef struct HerdCall
{
	LsmTask   **tasks;
	HerdTicket *tickets;
	int			ntasks;
} HerdCall;

/*
 * The tasks of a call that lead or run alone, as handed to the driver:
 * call_index[i] is the position in call of the driver's task i.
 */
typedef struct HerdRun
{
	HerdCall   *call;
	int		   *call_index;
} HerdRun;

/*
 * herd_task_done: a task of the call has finished (LsmTaskDone, called by
 * the task driver at once): when it leads a run, end the run with its
 * outcome now, so that the sessions waiting on its table go on while the
 * call's other tables still run.  Never raises an error.
 */
static void
herd_task_done(LsmTask *task, int index, void *arg)
{
	HerdRun    *run = (HerdRun *) arg;
	int			i = run->call_index[index];

	if (run->call->tickets[i].role == HERD_LEAD)
		herd_publish(task, &run->call->tickets[i], false);
}

/*
 * herd_run_leaders: run the tasks of call that lead or run alone,
 * concurrently; each led run ends with its table's outcome the moment
 * that table finishes (herd_task_done).  Raises only PostgreSQL's own
 * errors (lsm_task_run_all); the caller's error handler ends the runs
 * still led (herd_release).
 */
static void
herd_run_leaders(HerdCall *call)
{
	LsmTask   **tasks = palloc(Max(call->ntasks, 1) * sizeof(LsmTask *));
	HerdRun		run = {call, palloc(Max(call->ntasks, 1) * sizeof(int))};
	int			nrun = 0;

	for (int i = 0; i < call->ntasks; i++)
		if (call->tickets[i].role == HERD_ALONE ||
			call->tickets[i].role == HERD_LEAD)
		{
			run.call_index[nrun] = i;
			tasks[nrun++] = call->tasks[i];
		}
	lsm_task_run_all_notify(tasks, nrun, herd_task_done, &run);
	pfree(run.call_index);
	pfree(tasks);
}

/*
 * herd_release: the statement ends by an error; end every run the call
 * still leads -- claimed but never started included -- without an
 * outcome to share.  A run already ended is left as it is.  Never raises
 * an error (it runs in an error handler).
 */
static void
herd_release(const HerdCall *call)
{
	for (int i = 0; i < call->ntasks; i++)
		if (call->tickets[i].role == HERD_LEAD)
			herd_publish(call->tasks[i], &call->tickets[i], true);
}

/*
 * herd_state: where the run of ticket t stands; its outcome into *out
 * once it has ended.
 */
static HerdState
herd_state(const HerdTicket *t, HerdOutcome *out)
{
	HerdEntry  *e = &herd_shared->entries[t->slot];
	HerdState	state = HERD_LOST;

	LWLockAcquire(herd_shared->lock, LW_SHARED);
	if (e->running && e->run == t->run)
		state = HERD_RUNNING;
	else if (e->last.run == t->run)
	{
		*out = e->last;
		state = HERD_ENDED;
	}
	LWLockRelease(herd_shared->lock);
	return state;
}

/*
 * herd_wait: sleep on the entry's condition variable until the run of
 * ticket t is over (HERD_ENDED, its outcome in *out), or was lost sight of
 * (HERD_LOST: the entry went to another run), or, for a task that returns
 * a row among many (row_deadline), until its call's row deadline
 * (HERD_STOPPED).  Bounded by cancel and statement_timeout (57014), as
 * every wait of lancelsm: where no timer is armed, the statement's
 * deadline raises the same error.
 */
static HerdState
herd_wait(const HerdTicket *t, bool row_deadline, HerdOutcome *out)
{
	ConditionVariable *cv = &herd_shared->entries[t->slot].cv;
	TimestampTz deadline = lsm_statement_deadline();
	TimestampTz stop_at = row_deadline ? lsm_statement_row_deadline() : 0;
	HerdState	state;

	if (deadline != 0)
		deadline = TimestampTzPlusMilliseconds(deadline, LSM_DEADLINE_GRACE_MS);
	ConditionVariablePrepareToSleep(cv);
	while ((state = herd_state(t, out)) == HERD_RUNNING)
	{
		TimestampTz until = stop_at != 0 ? stop_at : deadline;
		long		ms;

		if (until == 0)
		{
			ConditionVariableSleep(cv, herd_wait_event());
			continue;
		}
		ms = (long) ((until - GetCurrentTimestamp() + 999) / 1000);
		if (ms <= 0 && stop_at != 0)
		{
			state = HERD_STOPPED;
			break;
		}
		if (ms <= 0)
			lsm_deadline_passed();
		(void) ConditionVariableTimedSleep(cv, ms, herd_wait_event());
	}
	ConditionVariableCancelSleep();
	return state;
}

/*
 * herd_stop: end a joiner whose call's row deadline came before the run
 * it waits for ended: 57014, naming the backend that leads the run.
 */
static void
herd_stop(LsmTask *task, const HerdTicket *t)
{
	int			leader = 0;

	LWLockAcquire(herd_shared->lock, LW_SHARED);
	if (herd_shared->entries[t->slot].run == t->run)
		leader = herd_shared->entries[t->slot].leader_pid;
	LWLockRelease(herd_shared->lock);
	lsm_task_set_failure(task,
						 lsm_fault_new(ERRCODE_QUERY_CANCELED,
									   psprintf("The call stopped waiting shortly before statement_timeout, to return a row for each table; the checkpoint of backend %d it waited for was still running.",
												leader),
									   pstrdup("Raise statement_timeout, or look at lancelsm_progress while the checkpoint waits."),
									   LSM_FAULT_CHECKPOINT, task->table_name));
	task->started_at = t->need_at;
	task->finished_at = GetCurrentTimestamp();
}

/*
 * herd_adopt: end a joiner with the outcome of the run it joined: its
 * own timings (from its start to now), no requests of its own, and a
 * note or a failure that names the backend that led the run.
 */
static void
herd_adopt(LsmTask *task, const HerdTicket *t, const HerdOutcome *out)
{
	LsmFailure *failure = NULL;
	bool		lossless;

	if (out->sqlerrcode != 0)
		failure = lsm_fault_new(out->sqlerrcode,
								psprintf("The checkpoint of backend %d, which this one joined, failed: %s",
										 out->leader_pid,
										 lsm_text_from_wire_quiet(out->detail,
																  &lossless)),
								NULL, LSM_FAULT_CHECKPOINT, task->table_name);
	else
		task->note = psprintf("joined the checkpoint of backend %d: %d passes, %d polls",
							  out->leader_pid, out->passes, out->polls);
	lsm_task_set_failure(task, failure);
	task->started_at = t->need_at;
	task->finished_at = GetCurrentTimestamp();
}

/*
 * herd_follow: see a task that joins or waits behind a run through: adopt
 * the outcome of the run it joined when that is shared, else try again,
 * leading a run itself when its turn comes.  *t is the task's ticket in
 * call, so that the caller's error handler ends a run it comes to lead.
 */
static void
herd_follow(LsmTask *task, HerdTicket *t)
{
	for (;;)
	{
		HerdOutcome out;
		HerdState	state;

		if (t->role == HERD_ALONE || t->role == HERD_LEAD)
		{
			HerdCall	one = {&task, t, 1};

			herd_run_leaders(&one);
			return;
		}
		state = herd_wait(t, task->row_deadline, &out);
		if (state == HERD_STOPPED)
		{
			herd_stop(task, t);
			return;
		}
		if (state == HERD_ENDED && t->role == HERD_JOIN && out.shared)
		{
			herd_adopt(task, t, &out);
			return;
		}
		herd_try(task, LSM_HERD_JOIN, t, true);
	}
}

/*
 * herd_claim_all: decide, in call->tickets, what each task of the call
 * does about its table's run (herd_try); at most LSM_CALL_MAX_CLAIMS of
 * them claim a run, the rest that would lead run alone.
 */
static void
herd_claim_all(HerdCall *call, LsmHerdMode mode)
{
	int			claims = 0;

	for (int i = 0; i < call->ntasks; i++)
	{
		LsmTask    *task = call->tasks[i];

		if (mode == LSM_HERD_JOIN && !herd_may_lead(task))
			continue;			/* nothing to join: it runs as ever */
		if (task->phase == LSM_PHASE_DONE || task->config == NULL)
			continue;
		herd_try(task, mode, &call->tickets[i],
				 claims < LSM_CALL_MAX_CLAIMS);
		if (call->tickets[i].role == HERD_LEAD)
			claims++;
	}
}

/*
 * lsm_herd_run_all: run initialised tasks as lsm_task_run_all does, each
 * checkpoint sharing its table's run with the rest of this cluster: with
 * LSM_HERD_JOIN a checkpoint that waits for its drain joins a run that
 * covers it (or waits behind one that does not, then joins or leads the
 * next: see the header of this file) and leads a run otherwise; with
 * LSM_HERD_SKIP every task whose table has a run going is finished at
 * once, not as a success, with a "skipped" note and no start time
 * (lsm_herd_skipped: its row says ok false, 55006), and the others lead or run alone.  A led run ends
 * the moment its table finishes, whatever the call's other tables do.  At
 * most LSM_CALL_MAX_CLAIMS tasks of one call lead; the others that would
 * run alone.  A joiner ends with no requests of its own (passes and polls
 * 0), the run's failure with a detail naming the leading backend, or
 * success with a note "joined the checkpoint of backend N: P passes, Q
 * polls".  Tasks that run lead first, all concurrently; the joiners wait
 * afterwards, one after the other, so that no backend waits while it
 * leads a run.  On any error (cancel, timeout, out of memory, while
 * claiming too) every run the call claimed and has not ended is ended
 * without an outcome before the error goes on.  Without shared memory, or
 * with lancelsm.share_checkpoints off, this is lsm_task_run_all: the tasks
 * neither join, skip nor lead.  Raises only PostgreSQL's own errors
 * (cancel, statement_timeout: 57014; out of memory).
 */
void
lsm_herd_run_all(LsmTask **tasks, int ntasks, LsmHerdMode mode)
{
	HerdCall	call;
	TimestampTz now = GetCurrentTimestamp();

	if (herd_shared == NULL || !lsm_share_checkpoints)
	{
		lsm_task_run_all(tasks, ntasks);
		return;
	}
	if (!herd_exit_registered)
	{
		before_shmem_exit(herd_backend_exit, (Datum) 0);
		herd_exit_registered = true;
	}
	call.tasks = tasks;
	call.ntasks = ntasks;
	call.tickets = palloc0(Max(ntasks, 1) * sizeof(HerdTicket));
	for (int i = 0; i < ntasks; i++)
	{
		call.tickets[i].need_at = now;
		call.tickets[i].role = HERD_ALONE;
	}
	PG_TRY();
	{
		herd_claim_all(&call, mode);
		herd_run_leaders(&call);
		for (int i = 0; i < ntasks; i++)
			if (call.tickets[i].role == HERD_JOIN ||
				call.tickets[i].role == HERD_BEHIND)
				herd_follow(tasks[i], &call.tickets[i]);
	}
	PG_CATCH();
	{
		herd_release(&call);
		PG_RE_THROW();
	}
	PG_END_TRY();
	pfree(call.tickets);
}

/*
 * lsm_herd_skipped: whether lsm_herd_run_all skipped a task because a
 * checkpoint of its table was running (LSM_HERD_SKIP).
 */
bool
lsm_herd_skipped(const LsmTask *task)
{
	return task->skipped;
}
