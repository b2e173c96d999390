/*-------------------------------------------------------------------------
 *
 * window_kept.c
 *		The request windows a statement's calls reached, kept per server
 *		and user mapping for the statement's next driver run.
 *
 * A statement that runs the driver more than once (lancelsm_checkpoint_due
 * reads the stats of its tables a chunk at a time, src/functions/due.c)
 * goes on at the window it reached on each server and role rather than
 * starting again from LSM_WINDOW_START each time: at a cloud's round
 * trip, a slow start costs a few round trips.  A new statement starts
 * afresh.
 *
 * The windows live in a backend-local hash table (dynahash, in
 * TopMemoryContext) keyed by (server, user mapping), and are bounded:
 * keeping the windows of a statement drops those of earlier statements,
 * so the table holds at most the servers and roles of one statement; and
 * the window of a (server, user mapping) is dropped when its connection
 * pool closes (src/net/pool.c: options changed, the server dropped,
 * lancelsm_disconnect), through the hook lsm_pool_on_close.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "task/window.h"
#include "net/net.h"
#include "utils/hsearch.h"

/* The key of a kept window: one server as one role (its user mapping). */
typedef struct WindowKeptKey
{
	Oid			serverid;
	Oid			umid;			/* InvalidOid: no user mapping */
} WindowKeptKey;

typedef struct WindowKept
{
	WindowKeptKey key;
	TimestampTz statement_start;	/* the statement that kept it */
	LsmWindow	window;
} WindowKept;

/* the kept windows; NULL until the first is kept */
static HTAB *windows_kept = NULL;

/*
 * window_kept_key: the key of serverid and umid, padding zeroed
 * (HASH_BLOBS compares every byte).
 */
static WindowKeptKey
window_kept_key(Oid serverid, Oid umid)
{
	WindowKeptKey key;

	memset(&key, 0, sizeof(key));
	key.serverid = serverid;
	key.umid = umid;
	return key;
}

/*
 * window_kept_pool_closed: the pool of serverid and umid closed (the
 * lsm_pool_on_close hook): drop its window.  Allocates nothing, raises
 * nothing.
 */
static void
window_kept_pool_closed(Oid serverid, Oid umid)
{
	WindowKeptKey key = window_kept_key(serverid, umid);

	if (windows_kept != NULL)
		(void) hash_search(windows_kept, &key, HASH_REMOVE, NULL);
}

/*
 * window_kept_forget_older: drop the windows kept by statements other
 * than the one that started at statement_start.
 */
static void
window_kept_forget_older(TimestampTz statement_start)
{
	HASH_SEQ_STATUS seq;
	WindowKept *k;

	hash_seq_init(&seq, windows_kept);
	while ((k = hash_seq_search(&seq)) != NULL)
		if (k->statement_start != statement_start)
			(void) hash_search(windows_kept, &k->key, HASH_REMOVE, NULL);
}

/*
 * lsm_window_recall: into *w, the window this statement's last driver
 * run ended with on serverid as umid at the same ceiling; else a new one
 * under ceiling.  Raises nothing.
 */
void
lsm_window_recall(Oid serverid, Oid umid, int ceiling, LsmWindow *w)
{
	WindowKeptKey key = window_kept_key(serverid, umid);
	WindowKept *k = windows_kept ?
		hash_search(windows_kept, &key, HASH_FIND, NULL) : NULL;

	if (k && k->statement_start == GetCurrentStatementStartTimestamp() &&
		k->window.ceiling == ceiling)
		*w = k->window;
	else
		lsm_window_init(w, ceiling);
}

/*
 * lsm_window_keep: keep w as the window this statement reached on
 * serverid as umid, for lsm_window_recall; the windows of earlier
 * statements are dropped.  Errors: out of memory.
 */
void
lsm_window_keep(Oid serverid, Oid umid, const LsmWindow *w)
{
	TimestampTz statement_start = GetCurrentStatementStartTimestamp();
	WindowKeptKey key = window_kept_key(serverid, umid);
	WindowKept *k;

	if (windows_kept == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(WindowKeptKey);
		ctl.entrysize = sizeof(WindowKept);
		windows_kept = hash_create("lancelsm request windows", 16, &ctl,
								   HASH_ELEM | HASH_BLOBS);
		lsm_pool_on_close(window_kept_pool_closed);
	}
	window_kept_forget_older(statement_start);
	k = hash_search(windows_kept, &key, HASH_ENTER, NULL);
	k->statement_start = statement_start;
	k->window = *w;
}
