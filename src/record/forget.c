/*-------------------------------------------------------------------------
 *
 * forget.c
 *		What the record forgets once a transaction commits: a declared
 *		table that lancelsm_remove_table or DROP SERVER ... CASCADE
 *		removed, and everything of a database whose lancelsm extension
 *		DROP EXTENSION dropped.
 *
 * Shared memory is not transactional, so a removal is queued in the
 * transaction that makes it and applied when that transaction commits
 * (a rollback, or that of the savepoint it was made under, drops it), as
 * PostgreSQL drops a relation's files only at commit.  At commit:
 *	 - a removed table leaves the table counters and the last stats
 *	   (lancelsm_table_counters, lancelsm_last_stats), and its entries in
 *	   the checkpoint history and the run history stay, marked with the
 *	   commit's time (removed_at) and no longer declared;
 *	 - a dropped extension takes every entry of its database out of the
 *	   counters, the last stats, both histories and the pace memory, so
 *	   that after CREATE EXTENSION nothing from before shows in any view,
 *	   in this backend or another.
 * A transaction prepared for two-phase commit forgets nothing.  Without
 * lancelsm in shared_preload_libraries there is nothing to forget, and
 * each call here is a no-op.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "record/counters.h"
#include "record/progress.h"
#include "record/run.h"
#include "record/shared_key.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* One removal waiting for its transaction's commit. */
typedef struct ForgetItem
{
	int			nest_level;		/* the (sub)transaction that made it */
	Oid			serverid;		/* InvalidOid: the whole database */
	char	   *wire_table_name;	/* UTF-8; NULL: the whole database */
} ForgetItem;

/* The removals of the current transaction, in TopTransactionContext. */
static List *forget_pending = NIL;
static bool forget_callbacks = false;

/*
 * forget_apply: apply one removal at commit, at time now.  Never raises
 * an error but out of memory.
 */
static void
forget_apply(const ForgetItem *item, TimestampTz now)
{
	SharedKey	named;

	if (item->wire_table_name == NULL)
	{
		(void) lsm_counters_reset(MyDatabaseId, InvalidOid, NULL);
		lsm_history_forget(InvalidOid, NULL, 0);
		lsm_run_forget(InvalidOid, NULL, 0);
		return;
	}
	shared_key_set(&named, item->serverid, item->wire_table_name, false);
	(void) lsm_counters_reset(MyDatabaseId, item->serverid,
							  item->wire_table_name);
	lsm_history_forget(item->serverid, &named, now);
	lsm_run_forget(item->serverid, &named, now);
}

/*
 * forget_xact: at commit apply the queued removals; at the end of any
 * transaction, drop the queue (XactCallback).
 */
static void
forget_xact(XactEvent event, void *arg)
{
	ListCell   *lc;

	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT)
	{
		TimestampTz now = GetCurrentTimestamp();

		foreach(lc, forget_pending)
			forget_apply((const ForgetItem *) lfirst(lc), now);
	}
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		forget_pending = NIL;	/* freed with TopTransactionContext */
}

/*
 * forget_subxact: a subtransaction that aborts drops the removals it
 * made; one that commits hands them to its parent (SubXactCallback).
 */
static void
forget_subxact(SubXactEvent event, SubTransactionId mySubid,
			   SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *lc;

	if (event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB)
		return;
	foreach(lc, forget_pending)
	{
		ForgetItem *item = (ForgetItem *) lfirst(lc);

		if (item->nest_level < level)
			continue;
		if (event == SUBXACT_EVENT_COMMIT_SUB)
			item->nest_level = level - 1;
		else
			forget_pending = foreach_delete_current(forget_pending, lc);
	}
}

/*
 * forget_queue: queue a removal (serverid and wire_table_name, UTF-8;
 * InvalidOid and NULL: the whole database) for the current transaction's
 * commit, registering the callbacks at the first.  Raises only out of
 * memory.
 */
static void
forget_queue(Oid serverid, const char *wire_table_name)
{
	MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);
	ForgetItem *item = palloc(sizeof(ForgetItem));

	item->nest_level = GetCurrentTransactionNestLevel();
	item->serverid = serverid;
	item->wire_table_name = wire_table_name ? pstrdup(wire_table_name) : NULL;
	forget_pending = lappend(forget_pending, item);
	MemoryContextSwitchTo(old);
	if (!forget_callbacks)
	{
		RegisterXactCallback(forget_xact, NULL);
		RegisterSubXactCallback(forget_subxact, NULL);
		forget_callbacks = true;
	}
}

/*
 * lsm_record_forget_table: the declared table wire_table_name (UTF-8, as
 * sent) of foreign server serverid, in this database, was removed; see
 * the head of this file for what the record forgets when the transaction
 * commits.  Raises only out of memory.
 */
void
lsm_record_forget_table(Oid serverid, const char *wire_table_name)
{
	forget_queue(serverid, wire_table_name);
}

/*
 * lsm_record_forget_database: the lancelsm extension of this database is
 * being dropped; see the head of this file for what the record forgets
 * when the transaction commits.  Raises only out of memory.
 */
void
lsm_record_forget_database(void)
{
	forget_queue(InvalidOid, NULL);
}
