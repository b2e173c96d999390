/*-------------------------------------------------------------------------
 *
 * run.c
 *		The run history: one entry per action lancelsm ran on a table --
 *		a flush, a compact or a checkpoint, called directly or by
 *		lancelsm_checkpoint_all() or lancelsm_checkpoint_due() -- in
 *		shared memory, and the copy of it that the SQL function of the
 *		lancelsm_run_history view reads (src/functions/monitoring.c,
 *		through record.h).
 *
 * An entry is written when the action ends (src/task/task.c calls
 * lsm_run_record as it does lsm_progress_end): what it was and who
 * started it, its database, server and table, when it started and ended,
 * how it ended (ok, or the SQLSTATE and "errmsg: errdetail" of its
 * failure, or of the error that interrupted its statement) and its
 * passes, polls and requests.  An action refused before any request (an
 * unusable server, a refused name) writes none; nor does a checkpoint
 * that joined or was skipped for another backend's run of its table: the
 * run it joined is the one recorded, by the backend that ran it.  A
 * lancelsm_checkpoint_due() run that leaves a table alone writes nothing
 * for it; since 1.5 each such run (each slice's call) writes one entry of
 * its own, of kind LSM_TASK_STATS, with no server and no table, counting
 * the tables whose stats read it sent (reads_sent), their requests and
 * the tables it did not read because their next read was not due
 * (lsm_run_record_due): ok when its reads and actions ended without an
 * error, else that error's SQLSTATE and "errmsg: errdetail", written
 * before the error goes on; it is evicted as a declared table's entry.
 *
 * The entries are at most lancelsm.max_run_history, under one LWLock.
 * Every run adds an entry; when all are in use, it evicts one by the fair
 * rule of src/record/shared_key.c -- the oldest (undeclared tables'
 * first) of the (database, role) that holds the most, its own when it
 * holds as many as any other -- so that no database and no role evicts
 * the runs of one that holds fewer.  Evictions are counted
 * (lancelsm_info.run_evicted).  Shared memory is not transactional, so a
 * run survives the caller's rollback; it does not survive a restart (the
 * history file of src/record/progress.c does not hold runs).  Text is
 * UTF-8, as in the checkpoint history.
 *
 * All of this needs lancelsm in shared_preload_libraries; without it
 * lsm_run_record is a no-op and lsm_run_copy returns nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "record/run.h"
#include "record/shared_array.h"
#include "record/shared_key.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

/* One run; protected by the LWLock. */
typedef struct RunEntry
{
	SharedKey	key;			/* age: finished_at */
	SharedOutcome outcome;
	uint64		seq;			/* the order runs were recorded in */
	uint8		kind;			/* LsmTaskKind: flush, compact, checkpoint */
	uint8		source;			/* LsmRunSource */
	int32		polls;
	int32		requests;
	TimestampTz removed_at;		/* its table removed; 0: not (1.5) */
	int32		reads_sent;		/* a due run's entry: tables read (sent) */
	int32		reads_skipped;	/* a due run's entry: tables not read */
} RunEntry;

/* The shared header; the entries follow it. */
typedef struct RunShared
{
	SharedArray array;			/* its lock protects next_seq too */
	uint64		next_seq;
} RunShared;

int			lsm_max_run_history = 1000;

static RunShared *run_shared = NULL;
static RunEntry *run_entries = NULL;

static void run_shared_init(void *header);

static const SharedArrayDesc run_array = {
	"lancelsm runs", sizeof(RunShared), sizeof(RunEntry),
	&lsm_max_run_history, (void **) &run_shared, (void **) &run_entries,
	run_shared_init, NULL
};

/*
 * run_shared_init: the run history's part of its new shared header.
 */
static void
run_shared_init(void *header)
{
	((RunShared *) header)->next_seq = 1;
}

/*
 * lsm_run_shmem_init: when lancelsm is being loaded by
 * shared_preload_libraries, have the run history set up in shared
 * memory (src/record/shared_array.c), sized by
 * lancelsm.max_run_history (which _PG_init defines just before);
 * otherwise do nothing, and no run is kept.  Called from _PG_init.
 */
void
lsm_run_shmem_init(void)
{
	shared_array_register(&run_array);
}

/*
 * run_recorded: whether a task (its snapshot) that is over is a run:
 * a flush, compact or checkpoint that started on a resolved server, with
 * the run history present.
 */
static bool
run_recorded(const LsmTaskSnapshot *snap)
{
	if (run_shared == NULL || run_shared->array.n == 0 ||
		snap->started_at == 0 || snap->server_name == NULL)
		return false;
	return snap->kind == LSM_TASK_FLUSH || snap->kind == LSM_TASK_COMPACT ||
		snap->kind == LSM_TASK_CHECKPOINT;
}

/*
 * run_add: add a filled entry (its key in use), evicting by the fair rule
 * when all are in use, and count an eviction.  Never raises an error.
 */
static void
run_add(RunEntry *entry)
{
	bool		evicts;
	int			i;

	LWLockAcquire(run_shared->array.lock, LW_EXCLUSIVE);
	i = shared_key_slot_new(run_entries, sizeof(RunEntry), run_shared->array.n,
							&entry->key, &evicts);
	if (evicts)
		pg_atomic_fetch_add_u64(&run_shared->array.evicted, 1);
	if (i >= 0)
	{
		entry->seq = run_shared->next_seq++;
		run_entries[i] = *entry;
	}
	LWLockRelease(run_shared->array.lock);
}

/*
 * lsm_run_record: a task is over (interrupted_by: 0, or the SQLSTATE of
 * the error that ended the statement): when it is a run (see the head of
 * this file), add its entry, evicting by the fair rule when all are in
 * use.  Never raises an error but out of memory (it runs in
 * lsm_task_run_all's error handler, as lsm_progress_end).
 */
void
lsm_run_record(const LsmTaskSnapshot *snap, int interrupted_by)
{
	RunEntry	entry;

	if (!run_recorded(snap))
		return;
	memset(&entry, 0, sizeof(entry));
	shared_outcome_fill(&entry.key, &entry.outcome, snap, interrupted_by);
	entry.kind = (uint8) snap->kind;
	entry.source = (uint8) snap->source;
	entry.polls = snap->counters.polls;
	entry.requests = snap->requests;

	run_add(&entry);
}

/*
 * lsm_run_record_due: a lancelsm_checkpoint_due() call is over, or an
 * error (NULL: none) ended it while it read or acted: add its entry (see
 * the head of this file) with its stats reads (reads: sent, requests,
 * skipped, started_at) and, for an error, ok false with the error's
 * SQLSTATE and "errmsg: errdetail", evicting by the fair rule when all
 * are in use.  The entry counts as a declared table's there: a run's
 * entries of its actions on declared tables never push out the entry of
 * the run itself (an undeclared table's would not be kept when every
 * entry is a declared table's).  A no-op when lancelsm is not preloaded.
 * Called in the call's error handler with the error already copied out
 * of ErrorContext (src/functions/outcome.c, lsm_outcome_error): never
 * raises an error but out of memory.
 */
void
lsm_run_record_due(const LsmDueReads *reads, const ErrorData *error)
{
	RunEntry	entry;

	if (run_shared == NULL || run_shared->array.n == 0)
		return;
	memset(&entry, 0, sizeof(entry));
	/* the run over the declared tables: evicted as their entries are */
	shared_key_set(&entry.key, InvalidOid, "", true);
	entry.outcome.ok = true;
	if (error != NULL)
		shared_outcome_failed(&entry.outcome, error->sqlerrcode,
							  error->message, error->detail);
	entry.outcome.started_at = reads->started_at;
	entry.outcome.finished_at = GetCurrentTimestamp();
	entry.key.age = entry.outcome.finished_at;
	entry.key.in_use = true;
	entry.kind = (uint8) LSM_TASK_STATS;
	entry.source = (uint8) LSM_RUN_CHECKPOINT_DUE;
	entry.requests = reads->requests;
	entry.reads_sent = reads->sent;
	entry.reads_skipped = reads->skipped;

	run_add(&entry);
}

/*
 * run_seq_cmp: qsort order of run copies, oldest recorded first.
 */
static int
run_seq_cmp(const void *a, const void *b)
{
	uint64		sa = ((const LsmRunCopy *) a)->seq;
	uint64		sb = ((const LsmRunCopy *) b)->seq;

	return sa < sb ? -1 : (sa > sb ? 1 : 0);
}

/*
 * lsm_run_copy: a copy of every run kept, in the order they were
 * recorded, in a palloc'd array; *n is set to their count (the array has
 * at least one element, even when *n is 0).  Copied under a shared
 * LWLock, so together they are one snapshot.  The strings stay UTF-8.
 * Raises only out of memory (before taking the lock).
 */
LsmRunCopy *
lsm_run_copy(int *n)
{
	int			nruns = run_shared ? run_shared->array.n : 0;
	LsmRunCopy *rows = palloc(mul_size(Max(nruns, 1), sizeof(LsmRunCopy)));

	*n = 0;
	if (run_shared == NULL)
		return rows;
	LWLockAcquire(run_shared->array.lock, LW_SHARED);
	for (int i = 0; i < nruns; i++)
	{
		const RunEntry *e = &run_entries[i];
		LsmRunCopy *row;

		if (!e->key.in_use)
			continue;
		row = &rows[(*n)++];
		shared_outcome_copy(&e->key, &e->outcome, &row->outcome);
		row->seq = e->seq;
		row->kind = (LsmTaskKind) e->kind;
		row->source = (LsmRunSource) e->source;
		row->polls = e->polls;
		row->requests = e->requests;
		row->reads_sent = e->reads_sent;
		row->reads_skipped = e->reads_skipped;
		row->outcome.removed_at = e->removed_at;
	}
	LWLockRelease(run_shared->array.lock);
	qsort(rows, *n, sizeof(LsmRunCopy), run_seq_cmp);
	return rows;
}

/*
 * lsm_run_forget: a table was removed (named, a key of shared_key_set on
 * serverid, in this database; NULL with serverid InvalidOid: every table
 * of the database), at time removed_at; 0: the database's extension was
 * dropped.  A removed table's runs stay, marked with removed_at and no
 * longer declared; when the extension was dropped, the database's runs
 * go.  A no-op when lancelsm is not preloaded.  Never raises an error.
 */
void
lsm_run_forget(Oid serverid, const SharedKey *named, TimestampTz removed_at)
{
	if (run_shared == NULL)
		return;
	LWLockAcquire(run_shared->array.lock, LW_EXCLUSIVE);
	for (int i = 0; i < run_shared->array.n; i++)
	{
		RunEntry   *e = &run_entries[i];

		if (!shared_key_of(&e->key, MyDatabaseId, serverid, named))
			continue;
		e->removed_at = removed_at;
		e->key.declared = false;
		if (removed_at == 0)
			shared_array_release(&run_array, i);
	}
	LWLockRelease(run_shared->array.lock);
}

/*
 * lsm_run_usage: the runs kept, lancelsm.max_run_history and the runs
 * evicted since server start; false, with all 0, when lancelsm is not
 * preloaded.  Never raises an error.
 */
bool
lsm_run_usage(int *used, int *max, uint64 *evicted)
{
	return shared_array_usage(&run_array, used, max, evicted);
}
