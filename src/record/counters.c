/*-------------------------------------------------------------------------
 *
 * counters.c
 *		The table counters: per (database, foreign server, table), the
 *		flush, compact and checkpoint runs lancelsm ran on it since the
 *		entry was created or reset, their failures, passes, polls,
 *		requests, retries and the time spent in them, as
 *		pg_stat_user_functions counts calls and time per function; and
 *		the stats lancelsm last read of it; in shared memory, read by the
 *		lancelsm_table_counters and lancelsm_last_stats views
 *		(src/functions/monitoring.c, through record.h).
 *
 * A run is counted where the run history records it (src/task/task.c
 * calls lsm_counters_record next to lsm_run_record), so that direct calls,
 * lancelsm_checkpoint_all() and lancelsm_checkpoint_due() all count, and
 * a run that the run history does not keep (refused before any request,
 * joined or skipped) is not counted either.  A run ended by its
 * statement's interruption counts as a failure; its time runs to the
 * interruption.  The last stats are what a stats read over declared
 * tables (src/functions/declared.c: lancelsm_table_stats,
 * lancelsm_bucket_stats, lancelsm_checkpoint_due()) read, or its failure,
 * kept by lsm_counters_record_stats, so that monitoring reads them
 * without a request.  What they show of a declared table comes only from
 * the runs and reads of roles that may record (the DBA's job:
 * src/functions/recording.c); a role that may not changes none of it
 * (1.5), and a declared table's entry is never evicted for a table that
 * is not declared.
 *
 * The entries are at most lancelsm.max_table_counters, one per table,
 * under one LWLock, found through a shared hash table
 * (src/record/shared_array.c).  A table not counted yet takes a free entry, else it
 * evicts one by the fair rule of src/record/shared_key.c (the least
 * recently counted, undeclared tables' first, of the (database, role)
 * that holds the most; a stats read makes an entry recent too), as the
 * histories do; evictions are counted
 * (lancelsm_info.counter_evicted).  An entry is held by the role whose
 * run or stats read created it.  lsm_counters_reset removes entries; a
 * table counted again starts a new one, whose stats_since says since
 * when it counts.
 * Nothing here survives a restart.
 *
 * All of this needs lancelsm in shared_preload_libraries; without it
 * lsm_counters_record and lsm_counters_record_stats are no-ops and
 * lsm_counters_copy returns nothing.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "record/counters.h"
#include "record/shared_array.h"
#include "record/shared_key.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

/* One table's counters; protected by the LWLock. */
typedef struct CounterEntry
{
	SharedKey	key;			/* age: when it last counted a run */
	char		server[NAMEDATALEN];	/* UTF-8, its name when counted */
	TimestampTz since;			/* when the entry was created */
	LsmActionCounts actions[LSM_COUNTED_ACTIONS];
	LsmStatsRead last_stats;	/* read_at 0: none read */
	bool		foreign;		/* a role that may not record counted in
								 * it (never once its table is declared) */
} CounterEntry;

/* The shared header; the entries follow it. */
typedef struct CounterShared
{
	SharedArray array;
} CounterShared;

int			lsm_max_table_counters = 1000;

static CounterShared *counter_shared = NULL;
static CounterEntry *counter_entries = NULL;
static HTAB *counter_index = NULL;

static const SharedArrayDesc counter_array = {
	"lancelsm counters", sizeof(CounterShared), sizeof(CounterEntry),
	&lsm_max_table_counters, (void **) &counter_shared,
	(void **) &counter_entries, NULL, &counter_index
};

/*
 * lsm_counters_shmem_init: when lancelsm is being loaded by
 * shared_preload_libraries, have the counters set up in shared memory
 * (src/record/shared_array.c), sized by lancelsm.max_table_counters
 * (defined just before); otherwise do nothing, and nothing is counted.
 * Called from _PG_init.
 */
void
lsm_counters_shmem_init(void)
{
	shared_array_register(&counter_array);
}

/*
 * counters_action: the index in CounterEntry.actions of a run's kind;
 * -1 for a task that is no run (a stats read, a write spec request).
 */
static int
counters_action(LsmTaskKind kind)
{
	if (kind == LSM_TASK_FLUSH)
		return LSM_COUNTED_FLUSH;
	if (kind == LSM_TASK_COMPACT)
		return LSM_COUNTED_COMPACT;
	return kind == LSM_TASK_CHECKPOINT ? LSM_COUNTED_CHECKPOINT : -1;
}

/*
 * counters_entry: the entry of key (in use, held by the current role),
 * found or created at time now (evicting by the fair rule when all are
 * in use, counted), with server (UTF-8, NAMEDATALEN bytes) as its
 * server's name and now as its age; NULL when none could be claimed
 * (src/record/shared_array.c), and for a role that may not record
 * (records false) when the table is declared, by key or by the entry: a
 * declared table's counters and last stats are the DBA's job's alone.
 * An entry that such a role counted in before its table was known to be
 * declared starts again, empty, when a role that may record counts in it
 * as declared.  Found through the counters' index, so a lookup costs the
 * same whatever lancelsm.max_table_counters is.  The caller holds the
 * lock exclusively.  Never raises an error.
 */
static CounterEntry *
counters_entry(const SharedKey *key, bool records, const char *server,
			   TimestampTz now)
{
	bool		evicts;
	int			i = shared_array_find(&counter_array, key);
	CounterEntry *e;

	if (!records &&
		(key->declared || (i >= 0 && counter_entries[i].key.declared)))
		return NULL;
	if (i >= 0 && key->declared && !counter_entries[i].key.declared &&
		counter_entries[i].foreign)
	{
		e = &counter_entries[i];
		memset(e->actions, 0, sizeof(e->actions));
		memset(&e->last_stats, 0, sizeof(e->last_stats));
		e->key.roleid = key->roleid;
		e->since = now;
		e->foreign = false;
	}
	if (i < 0)
	{
		i = shared_array_claim(&counter_array, key, &evicts);
		if (i < 0)
			return NULL;
		e = &counter_entries[i];
		memset(e, 0, sizeof(CounterEntry));
		e->key = *key;
		e->key.in_use = true;
		e->since = now;
	}
	e = &counter_entries[i];
	e->key.age = now;
	e->key.declared |= key->declared;	/* until the table is removed */
	e->foreign |= !records;
	memcpy(e->server, server, sizeof(e->server));
	return e;
}

/*
 * lsm_counters_record: a task is over (interrupted_by: 0, or the SQLSTATE
 * of the error that ended the statement): when it is a run that the run
 * history records (a flush, compact or checkpoint started on a resolved
 * server), add it to its table's counters, creating the entry (evicting
 * by the fair rule when all are in use).  Never raises an error but out
 * of memory (it runs in lsm_task_run_all's error handler).
 */
void
lsm_counters_record(const LsmTaskSnapshot *snap, int interrupted_by)
{
	SharedKey	key;
	SharedOutcome outcome;
	LsmActionCounts *c;
	CounterEntry *e;
	int			action = counters_action(snap->kind);

	if (counter_shared == NULL || counter_shared->array.n == 0 ||
		action < 0 || snap->started_at == 0 || snap->server_name == NULL)
		return;
	shared_outcome_fill(&key, &outcome, snap, interrupted_by);

	LWLockAcquire(counter_shared->array.lock, LW_EXCLUSIVE);
	e = counters_entry(&key, snap->records, outcome.server,
					   outcome.finished_at);
	if (e == NULL)
	{
		LWLockRelease(counter_shared->array.lock);
		return;
	}
	c = &e->actions[action];
	c->runs++;
	if (!outcome.ok)
		c->failures++;
	c->passes += snap->counters.passes;
	c->polls += snap->counters.polls;
	c->requests += snap->requests;
	c->retries += snap->counters.retries;
	c->usecs += Max(outcome.finished_at - outcome.started_at, 0);
	LWLockRelease(counter_shared->array.lock);
}

/*
 * lsm_counters_record_stats: a stats read of a table finished (read: its
 * totals, or its failure with ok false): keep it as the table's last
 * stats, creating the entry as lsm_counters_record does.  A read refused
 * before any request (no server resolved, or never started) is not
 * kept.  Never raises an error but out of memory.
 */
void
lsm_counters_record_stats(const LsmTaskSnapshot *snap,
						  const LsmStatsRead *read)
{
	SharedKey	key;
	char		server[NAMEDATALEN];
	CounterEntry *e;

	if (counter_shared == NULL || counter_shared->array.n == 0)
		return;
	if (snap->started_at == 0 || snap->server_name == NULL)
		return;
	shared_key_set(&key, snap->serverid, snap->wire_table_name,
				   snap->declared);
	shared_key_clip_copy(server, snap->server_name, sizeof(server));

	LWLockAcquire(counter_shared->array.lock, LW_EXCLUSIVE);
	e = counters_entry(&key, snap->records, server, read->read_at);
	if (e != NULL)
		e->last_stats = *read;
	LWLockRelease(counter_shared->array.lock);
}

/*
 * lsm_counters_copy: a copy of every entry, in a palloc'd array; *n is
 * set to their count (the array has at least one element).  Copied under
 * a shared LWLock, so together they are one snapshot.  Strings stay
 * UTF-8.  Raises only out of memory (before taking the lock).
 */
LsmCountersCopy *
lsm_counters_copy(int *n)
{
	int			nentries = counter_shared ? counter_shared->array.n : 0;
	LsmCountersCopy *rows = palloc(mul_size(Max(nentries, 1),
											sizeof(LsmCountersCopy)));

	*n = 0;
	if (counter_shared == NULL)
		return rows;
	LWLockAcquire(counter_shared->array.lock, LW_SHARED);
	for (int i = 0; i < nentries; i++)
	{
		const CounterEntry *e = &counter_entries[i];
		LsmCountersCopy *row;

		if (!e->key.in_use)
			continue;
		row = &rows[(*n)++];
		row->dbid = e->key.dbid;
		row->serverid = e->key.serverid;
		memcpy(row->server, e->server, sizeof(row->server));
		memcpy(row->table_name, e->key.table_name, sizeof(row->table_name));
		row->since = e->since;
		memcpy(row->actions, e->actions, sizeof(row->actions));
		row->last_stats = e->last_stats;
	}
	LWLockRelease(counter_shared->array.lock);
	return rows;
}

/*
 * lsm_counters_reset: remove the entries of database dbid, foreign server
 * serverid (an OID of that database) and table_name (UTF-8); InvalidOid
 * or NULL matches any.  Returns how many entries it removed.  Never
 * raises an error; a no-op returning 0 when lancelsm is not preloaded.
 */
int64
lsm_counters_reset(Oid dbid, Oid serverid, const char *table_name)
{
	SharedKey	named;
	int64		removed = 0;

	if (counter_shared == NULL)
		return 0;
	if (table_name)
		shared_key_set(&named, InvalidOid, table_name, false);
	LWLockAcquire(counter_shared->array.lock, LW_EXCLUSIVE);
	for (int i = 0; i < counter_shared->array.n; i++)
	{
		CounterEntry *e = &counter_entries[i];

		if (!shared_key_of(&e->key, dbid, serverid,
						   table_name ? &named : NULL))
			continue;
		shared_array_release(&counter_array, i);
		removed++;
	}
	LWLockRelease(counter_shared->array.lock);
	return removed;
}

/*
 * lsm_counters_usage: the entries in use, lancelsm.max_table_counters and
 * the entries evicted since server start; false, with all 0, when
 * lancelsm is not preloaded.  Never raises an error.
 */
bool
lsm_counters_usage(int *used, int *max, uint64 *evicted)
{
	return shared_array_usage(&counter_array, used, max, evicted);
}
