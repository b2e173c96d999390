/*-------------------------------------------------------------------------
 *
 * outcome_queue.c
 *		The outcomes of declared tables that outlive the caller's
 *		transaction: each outcome a call records in lancelsm_table
 *		(src/functions/outcome.c) is also staged here, in the backend,
 *		until its transaction ends.  A commit keeps the caller's own write
 *		and drops the staged copy; an abort (an error, ROLLBACK, a failed
 *		savepoint or PL/pgSQL EXCEPTION block) hands the copies made since
 *		the transaction or subtransaction began to a bounded queue in
 *		shared memory, from which a background worker of the outcome's
 *		database writes them in a transaction of its own
 *		(src/record/outcome_launcher.c starts it,
 *		src/functions/outcome_writer.c is it).
 *
 * The staged copies live in the transaction's memory, each with the
 * nesting level of the (sub)transaction that staged it: a subtransaction
 * that commits gives its copies to its parent; one that aborts hands
 * them over, and the parent's stay.  A prepared transaction's copies are
 * dropped as at a commit: its write is in it.  Handing over takes the
 * queue's LWLock and copies, with no allocation and no error: it runs in
 * the abort path.  An outcome the full queue cannot take is dropped and
 * counted (lancelsm_info.outcomes_dropped); so is one whose text does
 * not fit an entry (LSM_OUTCOME_NAME_LEN), and a message is clipped to
 * LSM_OUTCOME_MESSAGE_LEN bytes.
 *
 * The queue holds lancelsm.max_pending_outcomes entries (a server-start
 * setting, 0: none), each keyed by its database: a worker takes only its
 * own database's.  It is not written to disk: what a server stops with
 * is lost, so a worker drains its database's entries before it exits at
 * shutdown.  Without shared_preload_libraries (or with the setting 0)
 * nothing is staged, and outcomes roll back with the caller's
 * transaction, as before 1.5.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "record/record.h"
#include "record/shared_array.h"
#include "record/shared_key.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/memutils.h"

/* One outcome waiting for its database's worker; under the array's lock. */
typedef struct OutcomeEntry
{
	SharedKey	key;			/* in_use and dbid only */
	Oid			relid;
	bool		ok;
	bool		checkpointed;
	bool		only_if_failing;
	bool		has_message;
	char		sqlstate[6];
	char		action[LSM_OUTCOME_WORD_LEN];
	char		source[LSM_OUTCOME_WORD_LEN];
	TimestampTz started_at;
	TimestampTz finished_at;
	char		server[NAMEDATALEN];
	char		table_name[LSM_OUTCOME_NAME_LEN];
	char		message[LSM_OUTCOME_MESSAGE_LEN];
} OutcomeEntry;

/* The shared header; the entries follow it. */
typedef struct OutcomeQueue
{
	SharedArray array;			/* its lock protects launcher_latch too */
	pg_atomic_uint64 dropped;	/* outcomes not queued since server start */
	Latch	   *launcher_latch; /* NULL: no launcher running */
} OutcomeQueue;

/* An outcome staged in this backend's transaction. */
typedef struct StagedOutcome
{
	LsmOutcomeRecord rec;		/* its strings in TopTransactionContext */
	int			level;			/* the transaction nest level that owns it */
	struct StagedOutcome *next;
} StagedOutcome;

int			lsm_max_pending_outcomes = 1000;

static OutcomeQueue *queue = NULL;
static OutcomeEntry *queue_entries = NULL;

static StagedOutcome *staged = NULL;	/* newest first */
static bool callbacks_registered = false;

static void queue_shared_init(void *header);

static const SharedArrayDesc queue_array = {
	"lancelsm outcomes", sizeof(OutcomeQueue), sizeof(OutcomeEntry),
	&lsm_max_pending_outcomes, (void **) &queue, (void **) &queue_entries,
	queue_shared_init, NULL
};

/*
 * queue_shared_init: the queue's part of a new shared header.
 */
static void
queue_shared_init(void *header)
{
	OutcomeQueue *q = (OutcomeQueue *) header;

	pg_atomic_init_u64(&q->dropped, 0);
	q->launcher_latch = NULL;
}

/*
 * lsm_outcome_queue_shmem_init: have the queue set up with lancelsm's
 * other shared arrays (a no-op unless preloaded).  Called by
 * lsm_checkpoint_init after lancelsm.max_pending_outcomes is defined.
 */
void
lsm_outcome_queue_shmem_init(void)
{
	shared_array_register(&queue_array);
}

/*
 * lsm_outcome_queue_available: whether outcomes are staged and outlive
 * the caller's transaction: lancelsm is preloaded with a queue of at
 * least one entry.
 */
bool
lsm_outcome_queue_available(void)
{
	return queue != NULL && queue->array.n > 0;
}

/*
 * queue_entry_fill: copy rec into the free entry e of database dbid;
 * false (e untouched but for being cleared) when a name does not fit.
 * The message is clipped at a character boundary.  Raises nothing.
 */
static bool
queue_entry_fill(OutcomeEntry *e, Oid dbid, const LsmOutcomeRecord *rec)
{
	if (strlen(rec->table_name) >= sizeof(e->table_name) ||
		strlen(rec->server) >= sizeof(e->server))
		return false;
	e->key.dbid = dbid;
	e->relid = rec->relid;
	e->ok = rec->ok;
	e->checkpointed = rec->checkpointed;
	e->only_if_failing = rec->only_if_failing;
	e->has_message = (rec->message != NULL);
	strlcpy(e->sqlstate, rec->sqlstate ? rec->sqlstate : "",
			sizeof(e->sqlstate));
	strlcpy(e->action, rec->action, sizeof(e->action));
	strlcpy(e->source, rec->source, sizeof(e->source));
	e->started_at = rec->started_at;
	e->finished_at = rec->finished_at;
	strlcpy(e->server, rec->server, sizeof(e->server));
	strlcpy(e->table_name, rec->table_name, sizeof(e->table_name));
	if (rec->message != NULL)
	{
		int			len = pg_mbcliplen(rec->message, strlen(rec->message),
									   sizeof(e->message) - 1);

		memcpy(e->message, rec->message, len);
		e->message[len] = '\0';
	}
	else
		e->message[0] = '\0';
	e->key.in_use = true;
	return true;
}

/*
 * queue_hand_over: move the staged outcomes of nest level level and
 * deeper into the shared queue, dropping (and counting) what it cannot
 * take, then wake the launcher.  Runs in the abort path: no allocation,
 * no error.
 */
static void
queue_hand_over(int level)
{
	StagedOutcome **link = &staged;
	int			slot = 0;
	int			handed = 0;
	uint64		dropped = 0;

	LWLockAcquire(queue->array.lock, LW_EXCLUSIVE);
	while (*link != NULL)
	{
		StagedOutcome *s = *link;

		if (s->level < level)
		{
			link = &s->next;
			continue;
		}
		*link = s->next;
		while (slot < queue->array.n && queue_entries[slot].key.in_use)
			slot++;
		if (slot < queue->array.n &&
			queue_entry_fill(&queue_entries[slot], MyDatabaseId, &s->rec))
			handed++;
		else
			dropped++;
	}
	if (handed > 0 && queue->launcher_latch != NULL)
		SetLatch(queue->launcher_latch);
	LWLockRelease(queue->array.lock);
	if (dropped > 0)
		pg_atomic_fetch_add_u64(&queue->dropped, dropped);
}

/*
 * queue_xact_callback: at a top-level commit or prepare, drop the staged
 * outcomes (the caller's own write holds them); at an abort, hand them
 * over.
 */
static void
queue_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			if (staged != NULL)
				queue_hand_over(0);
			staged = NULL;
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			staged = NULL;		/* freed with TopTransactionContext */
			break;
		default:
			break;
	}
}

/*
 * queue_subxact_callback: a subtransaction that commits gives its staged
 * outcomes to its parent; one that aborts hands them over.
 */
static void
queue_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();

	if (staged == NULL)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
		queue_hand_over(level);
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
		for (StagedOutcome *s = staged; s != NULL; s = s->next)
			if (s->level >= level)
				s->level = level - 1;
}

/*
 * copy_or_null: a copy of s in the current memory context, or NULL.
 */
static const char *
copy_or_null(const char *s)
{
	return s ? pstrdup(s) : NULL;
}

/*
 * lsm_outcome_stage: stage the outcome rec, which the caller also writes
 * in lancelsm_table in its own transaction, so that it is written by a
 * worker if that transaction, or the subtransaction it is in, aborts.  A
 * no-op when lsm_outcome_queue_available is false.  The caller checks
 * that the current role may record it.  Raises only out of memory.
 */
void
lsm_outcome_stage(const LsmOutcomeRecord *rec)
{
	MemoryContext old;
	StagedOutcome *s;

	if (!lsm_outcome_queue_available())
		return;
	if (!callbacks_registered)
	{
		RegisterXactCallback(queue_xact_callback, NULL);
		RegisterSubXactCallback(queue_subxact_callback, NULL);
		callbacks_registered = true;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	s = palloc(sizeof(StagedOutcome));
	s->rec = *rec;
	s->rec.server = pstrdup(rec->server);
	s->rec.table_name = pstrdup(rec->table_name);
	s->rec.action = pstrdup(rec->action);
	s->rec.source = pstrdup(rec->source);
	s->rec.sqlstate = copy_or_null(rec->sqlstate);
	s->rec.message = copy_or_null(rec->message);
	s->level = GetCurrentTransactionNestLevel();
	s->next = staged;
	staged = s;
	MemoryContextSwitchTo(old);
}

/*
 * queue_entry_record: the outcome of entry e as a record whose strings
 * are copies in the current memory context.
 */
static void
queue_entry_record(const OutcomeEntry *e, LsmOutcomeRecord *rec)
{
	rec->relid = e->relid;
	rec->server = pstrdup(e->server);
	rec->table_name = pstrdup(e->table_name);
	rec->action = pstrdup(e->action);
	rec->source = pstrdup(e->source);
	rec->ok = e->ok;
	rec->sqlstate = e->ok ? NULL : pstrdup(e->sqlstate);
	rec->message = e->has_message ? pstrdup(e->message) : NULL;
	rec->started_at = e->started_at;
	rec->finished_at = e->finished_at;
	rec->checkpointed = e->checkpointed;
	rec->only_if_failing = e->only_if_failing;
}

/*
 * lsm_outcome_queue_take: take at most max outcomes of database dbid off
 * the queue into recs (copies in the current memory context); returns
 * how many.  What is taken is the caller's to write: it is no longer in
 * the queue.  0 when none wait (or not preloaded).
 */
int
lsm_outcome_queue_take(Oid dbid, LsmOutcomeRecord *recs, int max)
{
	int			n = 0;

	if (!lsm_outcome_queue_available())
		return 0;
	LWLockAcquire(queue->array.lock, LW_EXCLUSIVE);
	for (int i = 0; i < queue->array.n && n < max; i++)
	{
		OutcomeEntry *e = &queue_entries[i];

		if (!e->key.in_use || e->key.dbid != dbid)
			continue;
		queue_entry_record(e, &recs[n++]);
		e->key.in_use = false;
	}
	LWLockRelease(queue->array.lock);
	return n;
}

/*
 * lsm_outcome_queue_databases: the distinct databases with outcomes
 * waiting, at most max of them, into dbids; returns how many.
 */
int
lsm_outcome_queue_databases(Oid *dbids, int max)
{
	int			n = 0;

	if (!lsm_outcome_queue_available())
		return 0;
	LWLockAcquire(queue->array.lock, LW_SHARED);
	for (int i = 0; i < queue->array.n && n < max; i++)
	{
		const OutcomeEntry *e = &queue_entries[i];
		int			k = 0;

		if (!e->key.in_use)
			continue;
		while (k < n && dbids[k] != e->key.dbid)
			k++;
		if (k == n)
			dbids[n++] = e->key.dbid;
	}
	LWLockRelease(queue->array.lock);
	return n;
}

/*
 * lsm_outcome_queue_set_launcher: called by the launcher when it starts
 * (running true) and exits: staging backends set its latch when they
 * hand outcomes over.
 */
void
lsm_outcome_queue_set_launcher(bool running)
{
	if (queue == NULL)
		return;
	LWLockAcquire(queue->array.lock, LW_EXCLUSIVE);
	queue->launcher_latch = running ? MyLatch : NULL;
	LWLockRelease(queue->array.lock);
}

/*
 * lsm_outcome_queue_usage: the outcomes waiting now, the queue's size and
 * the outcomes dropped since server start (the queue full, or a name too
 * long for an entry); false, with all 0, when not preloaded.
 */
bool
lsm_outcome_queue_usage(int *pending, int *max, uint64 *dropped)
{
	*dropped = 0;
	if (!shared_array_usage(&queue_array, pending, max, dropped))
		return false;
	*dropped = pg_atomic_read_u64(&queue->dropped);
	return true;
}

/*
 * lsm_outcome_queue_drop: count n outcomes as dropped: taken off the
 * queue by a worker that could not write them.
 */
void
lsm_outcome_queue_drop(int n)
{
	if (queue != NULL && n > 0)
		pg_atomic_fetch_add_u64(&queue->dropped, n);
}
