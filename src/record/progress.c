/*-------------------------------------------------------------------------
 *
 * progress.c
 *		Checkpoint progress and history in shared memory, and the copies of
 *		them that the SQL functions of the lancelsm_progress and
 *		lancelsm_checkpoint_history views read (src/functions/monitoring.c,
 *		through record.h).
 *
 * Progress is a fixed pool of lancelsm.max_progress_entries entries.  A
 * checkpoint task claims one when it starts (a backend checkpointing many
 * tables at once claims one per table, up to LSM_CALL_MAX_CLAIMS per
 * call), updates it after every step and frees it the moment it ends.
 * When the pool is full, or the call has claimed its share, the
 * checkpoint runs without an entry and a counter of skipped entries is
 * incremented.  Each entry records its database and server OIDs.  Each entry has
 * its own spinlock: writers copy a few counters under it and readers copy
 * the entry out, so neither waits for long.  A before_shmem_exit callback
 * frees every entry of the exiting backend, so that a backend terminated
 * mid-checkpoint leaves nothing behind.
 *
 * History keeps the last outcome of each (database, server, table_name)
 * checkpoint -- the database's and the foreign server's OIDs, never a
 * name another database could choose -- at most
 * lancelsm.max_history_entries of them, under one LWLock.  A table enters
 * it only through a checkpoint that got a success answer (a flush,
 * compact or stats 2xx); once in, every later outcome of the table
 * replaces its entry.  When the history is full, a new table evicts an
 * entry by the fair rule of src/record/shared_key.c: the oldest
 * (undeclared tables' first) of the (database, role) that holds the most
 * entries -- its own when it holds as many as any other -- so that no
 * database and no role, however many servers and names it spreads its
 * checkpoints over, evicts the entries of one that holds fewer.
 * Evictions are counted (lancelsm_info.history_evicted).  Shared memory
 * is not transactional, so an outcome survives the caller's rollback.
 * The postmaster dumps the history to pg_stat/lancelsm_history.stat at a
 * clean shutdown and loads (then removes) that file at startup; a crash
 * loses it.
 *
 * Next to the history, the pace keeps what the last checkpoint of each
 * (database, server, table_name) learnt of its compaction passes' duration
 * (src/task/pace.c), so that the next checkpoint of the table polls right after
 * its first pass ends (when it polls within the same interval bounds: a
 * session that slows its own polls sets no one else's pace); up to
 * lancelsm.max_history_entries tables, evicted by the same rule (counted
 * in lancelsm_info.pace_evicted), under the same LWLock, not saved at
 * shutdown (a restart only costs a first pass polled the slow way).
 *
 * Text in shared memory (names, messages) is UTF-8, whatever the encoding
 * of the database that wrote it; the copies handed out keep it so, and
 * each reader converts it to its own (src/wire_text.c, in
 * src/functions/monitoring.c), escaping what that encoding cannot hold, so
 * that no database can break another's view with a name.
 *
 * All of this needs lancelsm in shared_preload_libraries.  Without it the
 * task hooks are no-ops, lsm_progress_available says so and the SQL
 * functions raise an error saying so.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "record/progress.h"
#include "record/shared_key.h"
#include "settings.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "wire_text.h"
#include "pg_compat.h"

/* The history file, written at shutdown and read (then removed) at start. */
#define HISTORY_FILE PGSTAT_STAT_PERMANENT_DIRECTORY "/lancelsm_history.stat"
#define HISTORY_FILE_MAGIC 0x4C534D48	/* "LSMH" */
#define HISTORY_FILE_VERSION 5
/* Written by lancelsm 1.4: the same entries, without removed_at. */
#define HISTORY_FILE_VERSION_NO_REMOVED 4
/* Written by lancelsm 1.3: those of 1.4, without role nor declared. */
#define HISTORY_FILE_VERSION_NO_ROLE 3
/* Written by lancelsm 1.1 and 1.2: entries keyed by server name. */
#define HISTORY_FILE_VERSION_NAMES 2

/* What a running checkpoint reports after each step. */
typedef struct ProgressCounters
{
	char		phase[LSM_PROGRESS_PHASE_LEN];
	char		waiting_bucket[LSM_WATERMARK_NAME_LEN]; /* UTF-8; "": none */
	char		waiting_status[LSM_WATERMARK_NAME_LEN];
	LsmTaskCounters counts;
} ProgressCounters;

/* One running checkpoint; every field is protected by mutex. */
typedef struct ProgressEntry
{
	slock_t		mutex;
	bool		in_use;
	int			pid;
	Oid			dbid;			/* the checkpoint's database */
	Oid			roleid;			/* its backend's session user */
	Oid			serverid;		/* its foreign server */
	TimestampTz started_at;
	char		server[NAMEDATALEN];
	char		table_name[LSM_PROGRESS_NAME_LEN];
	ProgressCounters counters;
} ProgressEntry;

/* The last outcome of one table's checkpoint; protected by the LWLock. */
typedef struct HistoryEntry
{
	SharedKey	key;			/* age: finished_at */
	SharedOutcome outcome;
	TimestampTz removed_at;		/* its table removed; 0: not (1.5) */
} HistoryEntry;

/* The size of an entry in history files of formats 3 and 4. */
#define HISTORY_ENTRY_SIZE_NO_REMOVED offsetof(HistoryEntry, removed_at)

/*
 * What a table's last checkpoint learnt of its passes, and the poll
 * interval it polled within (a bracket is only as fine as its polls);
 * under the LWLock.
 */
typedef struct PaceEntry
{
	SharedKey	key;			/* age: when stored */
	LsmPace		pace;
	int32		poll_min_ms;	/* lancelsm.poll_interval_min of its session */
	int32		poll_max_ms;	/* lancelsm.poll_interval_max of its session */
} PaceEntry;

/* The shared header; the two arrays follow it. */
typedef struct ProgressShared
{
	LWLock	   *lock;			/* protects the history array */
	int			nprogress;
	int			nhistory;
	pg_atomic_uint64 skipped;	/* checkpoints run without an entry */
	pg_atomic_uint64 history_evicted;	/* history entries evicted */
	pg_atomic_uint64 pace_evicted;	/* pace entries evicted */
} ProgressShared;

/* The history file's header. */
typedef struct HistoryFileHeader
{
	uint32		magic;
	uint32		version;
	uint32		entry_size;
	int32		count;
} HistoryFileHeader;

int			lsm_max_progress_entries = 256;
int			lsm_max_history_entries = 1000;

static ProgressShared *progress_shared = NULL;
static ProgressEntry *progress_entries = NULL;
static HistoryEntry *history_entries = NULL;
static PaceEntry *pace_entries = NULL;
static bool progress_exit_registered = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * progress_shmem_size: the shared memory the header, the progress pool and
 * the history need, from the settings.
 */
static Size
progress_shmem_size(void)
{
	Size		size = MAXALIGN(sizeof(ProgressShared));

	size = add_size(size, MAXALIGN(mul_size(lsm_max_progress_entries,
											sizeof(ProgressEntry))));
	return add_size(size, mul_size(lsm_max_history_entries,
								   sizeof(HistoryEntry)));
}

/*
 * pace_shmem_size: the shared memory of the pace entries.
 */
static Size
pace_shmem_size(void)
{
	return mul_size(lsm_max_history_entries, sizeof(PaceEntry));
}

/*
 * pace_shmem_attach: find (or allocate and clear) the pace entries.  The
 * caller holds AddinShmemInitLock.
 */
static void
pace_shmem_attach(void)
{
	bool		found;

	pace_entries = ShmemInitStruct("lancelsm pace", pace_shmem_size(), &found);
	if (!found)
		memset(pace_entries, 0, pace_shmem_size());
}

/*
 * lsm_pace_recall: what the last checkpoint of wire_table_name (UTF-8, as
 * sent) on foreign server serverid, in this database, learnt of its
 * passes, into *pace, when that checkpoint polled within the same
 * lancelsm.poll_interval_min and _max as this session: a session that
 * slows its own polls learns a coarse, late bracket, and no other
 * session's first polls may follow it (no role sets another's pace).
 * Returns false (pace untouched) when nothing such is kept or lancelsm
 * is not preloaded.  Never raises an error.
 */
bool
lsm_pace_recall(Oid serverid, const char *wire_table_name, LsmPace *pace)
{
	SharedKey	key;
	int			i;
	bool		evicts;

	if (progress_shared == NULL || pace_entries == NULL)
		return false;
	shared_key_set(&key, serverid, wire_table_name, false);
	LWLockAcquire(progress_shared->lock, LW_SHARED);
	i = shared_key_find(pace_entries, sizeof(PaceEntry),
						progress_shared->nhistory, &key, false, &evicts);
	if (i >= 0 && (pace_entries[i].poll_min_ms != lsm_poll_interval_min_ms ||
				   pace_entries[i].poll_max_ms != lsm_poll_interval_max_ms))
		i = -1;					/* learnt at another pace */
	if (i >= 0)
		*pace = pace_entries[i].pace;
	LWLockRelease(progress_shared->lock);
	return i >= 0;
}

/*
 * lsm_pace_remember: keep pace, what a checkpoint of wire_table_name
 * (UTF-8, as sent) on foreign server serverid learnt of its passes, for
 * the table's next checkpoint in this database (in any session);
 * declared: the table is declared in lancelsm_table (its entry is
 * evicted last).  A new table in a full pace memory evicts by the fair
 * rule (src/record/shared_key.c), counted in pace_evicted.  A no-op
 * when lancelsm is not preloaded.  Never raises an error.
 */
void
lsm_pace_remember(Oid serverid, const char *wire_table_name, bool declared,
				  const LsmPace *pace)
{
	SharedKey	key;
	int			i;
	bool		evicts;

	if (progress_shared == NULL || pace_entries == NULL)
		return;
	shared_key_set(&key, serverid, wire_table_name, declared);
	key.in_use = true;
	key.age = GetCurrentTimestamp();
	LWLockAcquire(progress_shared->lock, LW_EXCLUSIVE);
	i = shared_key_find(pace_entries, sizeof(PaceEntry),
						progress_shared->nhistory, &key, true, &evicts);
	if (evicts)
		pg_atomic_fetch_add_u64(&progress_shared->pace_evicted, 1);
	if (i >= 0)
	{
		key.declared |= (pace_entries[i].key.in_use && !evicts &&
						 pace_entries[i].key.declared);
		pace_entries[i].key = key;
		pace_entries[i].pace = *pace;
		pace_entries[i].poll_min_ms = lsm_poll_interval_min_ms;
		pace_entries[i].poll_max_ms = lsm_poll_interval_max_ms;
	}
	LWLockRelease(progress_shared->lock);
}

/*
 * progress_shmem_request: reserve the shared memory and the LWLock
 * (shmem_request_hook, postmaster only).
 */
static void
progress_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(progress_shmem_size());
	RequestAddinShmemSpace(pace_shmem_size());
	RequestNamedLWLockTranche("lancelsm", 1);
}

/*
 * progress_shmem_first_init: initialise freshly allocated shared memory.
 * The caller holds AddinShmemInitLock.
 */
static void
progress_shmem_first_init(void)
{
	progress_shared->lock = &(GetNamedLWLockTranche("lancelsm"))->lock;
	progress_shared->nprogress = lsm_max_progress_entries;
	progress_shared->nhistory = lsm_max_history_entries;
	pg_atomic_init_u64(&progress_shared->skipped, 0);
	pg_atomic_init_u64(&progress_shared->history_evicted, 0);
	pg_atomic_init_u64(&progress_shared->pace_evicted, 0);
	for (int i = 0; i < lsm_max_progress_entries; i++)
	{
		SpinLockInit(&progress_entries[i].mutex);
		progress_entries[i].in_use = false;
	}
	memset(history_entries, 0,
		   mul_size(lsm_max_history_entries, sizeof(HistoryEntry)));
}

/*
 * history_store: keep one outcome, replacing the table's previous one
 * (a table once stored as declared stays so); when existing_only, only if
 * the table already has one.  A new table in a full history evicts by the
 * fair rule (src/record/shared_key.c), counted in history_evicted.
 * The caller holds the LWLock exclusively (or is the postmaster, alone).
 */
static void
history_store(const HistoryEntry *entry, bool existing_only)
{
	bool		evicts;
	int			i = shared_key_find(history_entries, sizeof(HistoryEntry),
									progress_shared->nhistory, &entry->key,
									!existing_only, &evicts);
	bool		declared;

	if (i < 0)
		return;
	if (evicts)
		pg_atomic_fetch_add_u64(&progress_shared->history_evicted, 1);
	declared = entry->key.declared ||
		(!evicts && history_entries[i].key.in_use &&
		 history_entries[i].key.declared);
	history_entries[i] = *entry;
	history_entries[i].key.in_use = true;
	history_entries[i].key.declared = declared;
}

/* What reading a history file found. */
typedef enum HistoryRead
{
	HISTORY_READ_OK,
	HISTORY_READ_OLD,			/* an older format: nothing read */
	HISTORY_READ_BAD			/* truncated or foreign: the rest ignored */
} HistoryRead;

/*
 * history_read_file: read the entries of an open history file into
 * shared memory.  A file of lancelsm 1.2 or older (keyed by server name,
 * no database) is not read: its entries cannot be given to a database.
 * One of lancelsm 1.3 (format 3: no role, no declared flag) is read with
 * its entries held by no role (InvalidOid), which the fair rule treats as
 * one more holder; one of 1.3 or 1.4 (format 4) with no entry removed.
 */
static HistoryRead
history_read_file(FILE *file)
{
	HistoryFileHeader header;
	HistoryEntry entry;

	if (fread(&header, sizeof(header), 1, file) != 1 ||
		header.magic != HISTORY_FILE_MAGIC)
		return HISTORY_READ_BAD;
	if (header.version == HISTORY_FILE_VERSION_NAMES)
		return HISTORY_READ_OLD;
	if (header.version == HISTORY_FILE_VERSION ?
		header.entry_size != sizeof(HistoryEntry) :
		((header.version != HISTORY_FILE_VERSION_NO_REMOVED &&
		  header.version != HISTORY_FILE_VERSION_NO_ROLE) ||
		 header.entry_size != HISTORY_ENTRY_SIZE_NO_REMOVED))
		return HISTORY_READ_BAD;
	for (int i = 0; i < header.count; i++)
	{
		memset(&entry, 0, sizeof(entry));
		if (fread(&entry, header.entry_size, 1, file) != 1)
			return HISTORY_READ_BAD;
		/* never trust a terminator from disk */
		entry.outcome.sqlstate[sizeof(entry.outcome.sqlstate) - 1] = '\0';
		entry.outcome.server[sizeof(entry.outcome.server) - 1] = '\0';
		entry.key.table_name[sizeof(entry.key.table_name) - 1] = '\0';
		entry.outcome.message[sizeof(entry.outcome.message) - 1] = '\0';
		if (header.version == HISTORY_FILE_VERSION_NO_ROLE)
		{
			/* 1.3's padding: held by no role, evicted by the rule */
			entry.key.roleid = InvalidOid;
			entry.key.declared = false;
		}
		history_store(&entry, false);
	}
	return HISTORY_READ_OK;
}

/*
 * history_load: load the history dumped at the last clean shutdown, then
 * remove the file so that a crash cannot bring back stale outcomes.
 * Postmaster only, before any backend runs.  Problems are logged, never
 * raised: the server starts with an empty history instead.
 */
static void
history_load(void)
{
	FILE	   *file = AllocateFile(HISTORY_FILE, PG_BINARY_R);

	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", HISTORY_FILE)));
		return;
	}
	switch (history_read_file(file))
	{
		case HISTORY_READ_OK:
			break;
		case HISTORY_READ_OLD:
			ereport(LOG,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("discarding lancelsm checkpoint history file \"%s\" of an older format",
							HISTORY_FILE),
					 errdetail("It was written by lancelsm 1.2 or older, whose entries do not name their database.")));
			break;
		case HISTORY_READ_BAD:
			ereport(LOG,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("ignoring the rest of lancelsm checkpoint history file \"%s\"",
							HISTORY_FILE),
					 errdetail("The file is truncated or was written by another version of lancelsm.")));
			break;
	}
	FreeFile(file);
	unlink(HISTORY_FILE);
}

/*
 * history_write_file: write the history kept in shared memory to an open
 * file.  Returns false on a write error (errno set).
 */
static bool
history_write_file(FILE *file)
{
	HistoryFileHeader header;

	header.magic = HISTORY_FILE_MAGIC;
	header.version = HISTORY_FILE_VERSION;
	header.entry_size = sizeof(HistoryEntry);
	header.count = 0;
	for (int i = 0; i < progress_shared->nhistory; i++)
		if (history_entries[i].key.in_use)
			header.count++;
	if (fwrite(&header, sizeof(header), 1, file) != 1)
		return false;
	for (int i = 0; i < progress_shared->nhistory; i++)
		if (history_entries[i].key.in_use &&
			fwrite(&history_entries[i], sizeof(HistoryEntry), 1, file) != 1)
			return false;
	return true;
}

/*
 * history_shmem_shutdown: dump the history at a clean postmaster shutdown
 * (on_shmem_exit).  Nothing is written after a crash (code != 0).  No
 * lock: no other process runs any more.
 */
static void
history_shmem_shutdown(int code, Datum arg)
{
	const char *tmpfile = HISTORY_FILE ".tmp";
	FILE	   *file;

	if (code != 0 || progress_shared == NULL)
		return;
	file = AllocateFile(tmpfile, PG_BINARY_W);
	if (file == NULL || !history_write_file(file) || FreeFile(file) != 0)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not write file \"%s\": %m", tmpfile)));
		if (file)
			FreeFile(file);
		unlink(tmpfile);
		return;
	}
	(void) durable_rename(tmpfile, HISTORY_FILE, LOG);
}

/*
 * progress_shmem_startup: attach to (or create) the shared state
 * (shmem_startup_hook).  The postmaster also loads the history file and
 * arranges to dump it at shutdown.
 */
static void
progress_shmem_startup(void)
{
	bool		found;
	char	   *base;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	base = ShmemInitStruct("lancelsm progress", progress_shmem_size(), &found);
	progress_shared = (ProgressShared *) base;
	progress_entries = (ProgressEntry *)
		(base + MAXALIGN(sizeof(ProgressShared)));
	history_entries = (HistoryEntry *)
		((char *) progress_entries +
		 MAXALIGN(mul_size(lsm_max_progress_entries, sizeof(ProgressEntry))));
	if (!found)
		progress_shmem_first_init();
	pace_shmem_attach();
	LWLockRelease(AddinShmemInitLock);
	if (IsUnderPostmaster)
		return;
	on_shmem_exit(history_shmem_shutdown, (Datum) 0);
	if (!found)
		history_load();
}

/*
 * lsm_progress_shmem_init: when lancelsm is being loaded by
 * shared_preload_libraries, install the shared memory hooks, sized by
 * lancelsm.max_progress_entries and lancelsm.max_history_entries (which
 * _PG_init defines just before); otherwise do nothing, and progress and
 * history stay unavailable.  Called from _PG_init.
 */
void
lsm_progress_shmem_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = progress_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = progress_shmem_startup;
}

/*
 * progress_release_slot: free one progress entry.
 */
static void
progress_release_slot(int slot)
{
	ProgressEntry *e = &progress_entries[slot];

	SpinLockAcquire(&e->mutex);
	e->in_use = false;
	SpinLockRelease(&e->mutex);
}

/*
 * progress_backend_exit: free every progress entry this backend still
 * holds (before_shmem_exit), e.g. after pg_terminate_backend mid-checkpoint.
 */
static void
progress_backend_exit(int code, Datum arg)
{
	for (int i = 0; i < progress_shared->nprogress; i++)
	{
		ProgressEntry *e = &progress_entries[i];

		SpinLockAcquire(&e->mutex);
		if (e->in_use && e->pid == MyProcPid)
			e->in_use = false;
		SpinLockRelease(&e->mutex);
	}
}

/*
 * progress_claim_slot: claim a free progress entry for this backend;
 * returns its index, or -1 when the pool is full.
 */
static int
progress_claim_slot(void)
{
	for (int i = 0; i < progress_shared->nprogress; i++)
	{
		ProgressEntry *e = &progress_entries[i];
		bool		claimed = false;

		SpinLockAcquire(&e->mutex);
		if (!e->in_use)
		{
			e->in_use = true;
			e->pid = MyProcPid;
			claimed = true;
		}
		SpinLockRelease(&e->mutex);
		if (claimed)
			return i;
	}
	return -1;
}

/*
 * progress_counters: the counters of a task (its snapshot) as its
 * progress entry shows them.
 */
static void
progress_counters(const LsmTaskSnapshot *snap, ProgressCounters *c)
{
	strlcpy(c->phase, snap->phase, sizeof(c->phase));
	shared_key_clip_utf8(c->waiting_bucket, snap->waiting_bucket,
					   sizeof(c->waiting_bucket));
	shared_key_clip_utf8(c->waiting_status, snap->waiting_status,
					   sizeof(c->waiting_status));
	c->counts = snap->counters;
}

/*
 * progress_reported: whether a task (its snapshot) is shown in progress
 * and history: a checkpoint that waits for its drain (other kinds and
 * trigger-only checkpoints get neither), with shared memory present.
 */
static bool
progress_reported(const LsmTaskSnapshot *snap)
{
	return snap->kind == LSM_TASK_CHECKPOINT && !snap->trigger_only &&
		progress_shared != NULL;
}

/*
 * lsm_progress_begin: claim a progress entry for a checkpoint task that
 * is starting (see progress_reported) and return its index, for the
 * caller to keep as the task's progress slot; -1 for none.  When the
 * pool is full, or the task is not listed (its call has claimed its
 * share of entries), the checkpoint runs without one and the skipped
 * counter grows.  A task without a server gets none.
 */
int
lsm_progress_begin(const LsmTaskSnapshot *snap, bool listed)
{
	char		server[NAMEDATALEN];
	char		table_name[LSM_PROGRESS_NAME_LEN];
	ProgressEntry *e;
	int			slot;

	if (!progress_reported(snap) || snap->server_name == NULL)
		return -1;
	if (!progress_exit_registered)
	{
		before_shmem_exit(progress_backend_exit, (Datum) 0);
		progress_exit_registered = true;
	}
	shared_key_clip_copy(server, snap->server_name, sizeof(server));
	shared_key_clip_utf8(table_name, snap->wire_table_name, sizeof(table_name));
	if (!listed || (slot = progress_claim_slot()) < 0)
	{
		pg_atomic_fetch_add_u64(&progress_shared->skipped, 1);
		return -1;
	}
	e = &progress_entries[slot];
	SpinLockAcquire(&e->mutex);
	e->started_at = snap->started_at;
	e->dbid = MyDatabaseId;
	e->roleid = GetSessionUserId();
	e->serverid = snap->serverid;
	memcpy(e->server, server, sizeof(server));
	memcpy(e->table_name, table_name, sizeof(table_name));
	memset(&e->counters, 0, sizeof(e->counters));
	SpinLockRelease(&e->mutex);
	return slot;
}

/*
 * lsm_progress_update: copy the task's phase and counters into its
 * progress entry, if it has one.
 */
void
lsm_progress_update(const LsmTaskSnapshot *snap)
{
	ProgressCounters counters;
	ProgressEntry *e;

	if (progress_shared == NULL)
		return;
	if (snap->progress_slot < 0)
		return;
	progress_counters(snap, &counters);
	e = &progress_entries[snap->progress_slot];
	SpinLockAcquire(&e->mutex);
	e->counters = counters;
	SpinLockRelease(&e->mutex);
}

/*
 * lsm_progress_end: a task is over (interrupted_by: 0, or the SQLSTATE of
 * the error that ended the statement).  Frees its progress entry (the
 * caller then forgets the task's progress slot) and, for a checkpoint
 * that had started and waited for its drain (not trigger-only), records
 * its outcome in the history.  Only a checkpoint one of whose requests
 * the server answered with success (snap->answered) may add a table to
 * the history; any other outcome only replaces the entry of a table
 * already there.  So a name the server does not know (404) leaves no
 * entry and no role can flood the history with made-up table names,
 * while a known table whose checkpoints start failing or hanging shows
 * that, not its last success.
 * Never raises an error: it runs in lsm_task_run_all's error handler.
 */
void
lsm_progress_end(const LsmTaskSnapshot *snap, int interrupted_by)
{
	HistoryEntry entry;

	if (!progress_reported(snap))
		return;
	if (snap->progress_slot >= 0)
		progress_release_slot(snap->progress_slot);
	if (snap->started_at == 0 || snap->server_name == NULL)
		return;					/* refused before any request */
	shared_outcome_fill(&entry.key, &entry.outcome, snap, interrupted_by);
	entry.removed_at = 0;
	LWLockAcquire(progress_shared->lock, LW_EXCLUSIVE);
	history_store(&entry, !snap->answered);
	LWLockRelease(progress_shared->lock);
}

/*
 * lsm_progress_available: whether progress and history are kept, that is
 * whether lancelsm was loaded by shared_preload_libraries.  The functions
 * below return nothing (and change nothing) when it was not; the SQL
 * functions of the views (src/functions/monitoring.c) raise their error
 * instead.  Never raises an error.
 */
bool
lsm_progress_available(void)
{
	return progress_shared != NULL;
}

/*
 * lsm_progress_diagnosis: what lancelsm_progress says a running checkpoint
 * with counters counts waits on, as a sentence (a constant string), or
 * NULL when nothing is amiss: passes that end without draining anything,
 * and from LSM_STALL_SUSPECT_PASSES of them in a row on, the possible
 * causes (retention while an index catches up, garbage collection, passes
 * that merged nothing).  The checkpoint keeps waiting
 * (statement_timeout, cancel and lancelsm.max_idle_polls are its bounds).
 * Never raises an error.
 */
const char *
lsm_progress_diagnosis(const LsmTaskCounters *counts)
{
	if (counts->stalled_passes >= LSM_STALL_SUSPECT_PASSES)
		return "Compaction passes end without draining anything: compacted generations may stay listed while an index catches up or until garbage collection, or the passes may not have merged them.";
	if (counts->stalled_passes > 0)
		return "Compaction passes end without draining anything.";
	return NULL;
}

/*
 * lsm_progress_copy: a copy of every progress entry in use, in the order
 * of the pool, in a palloc'd array; *n is set to their count (the array
 * has at least one element, even when *n is 0).  Each entry is copied
 * under its own spinlock, so each is consistent; together they are not
 * one snapshot.  The strings stay UTF-8.  Raises only out of memory.
 */
LsmProgressCopy *
lsm_progress_copy(int *n)
{
	int			nprogress = progress_shared ? progress_shared->nprogress : 0;
	LsmProgressCopy *rows = palloc(mul_size(Max(nprogress, 1),
											sizeof(LsmProgressCopy)));

	*n = 0;
	for (int i = 0; i < nprogress; i++)
	{
		ProgressEntry *e = &progress_entries[i];
		ProgressEntry copy;
		LsmProgressCopy *row;

		SpinLockAcquire(&e->mutex);
		copy = *e;
		SpinLockRelease(&e->mutex);
		if (!copy.in_use)
			continue;
		row = &rows[(*n)++];
		row->pid = copy.pid;
		row->dbid = copy.dbid;
		row->roleid = copy.roleid;
		row->started_at = copy.started_at;
		memcpy(row->server, copy.server, sizeof(row->server));
		memcpy(row->table_name, copy.table_name, sizeof(row->table_name));
		memcpy(row->phase, copy.counters.phase, sizeof(row->phase));
		memcpy(row->waiting_bucket, copy.counters.waiting_bucket,
			   sizeof(row->waiting_bucket));
		memcpy(row->waiting_status, copy.counters.waiting_status,
			   sizeof(row->waiting_status));
		row->counts = copy.counters.counts;
	}
	return rows;
}

/*
 * lsm_progress_skipped_count: how many checkpoints since server start ran
 * without a progress entry (see lsm_progress_begin); 0 when lancelsm is
 * not preloaded.  Never raises an error.
 */
uint64
lsm_progress_skipped_count(void)
{
	if (progress_shared == NULL)
		return 0;
	return pg_atomic_read_u64(&progress_shared->skipped);
}

/*
 * lsm_evicted_counts: how many history and pace entries were evicted
 * since server start (the fair rule, src/record/shared_key.c); false,
 * with both 0, when lancelsm is not preloaded.  Never raises an error.
 */
bool
lsm_evicted_counts(uint64 *history, uint64 *pace)
{
	*history = *pace = 0;
	if (progress_shared == NULL)
		return false;
	*history = pg_atomic_read_u64(&progress_shared->history_evicted);
	*pace = pg_atomic_read_u64(&progress_shared->pace_evicted);
	return true;
}

/*
 * lsm_history_copy: a copy of every history entry kept, in the order of
 * the array, in a palloc'd array; *n is set to their count (the array has
 * at least one element, even when *n is 0).  Copied under a shared
 * LWLock, so together they are one snapshot.  The strings stay UTF-8.
 * Raises only out of memory (before taking the lock).
 */
LsmHistoryCopy *
lsm_history_copy(int *n)
{
	int			nhistory = progress_shared ? progress_shared->nhistory : 0;
	LsmHistoryCopy *rows = palloc(mul_size(Max(nhistory, 1),
										   sizeof(LsmHistoryCopy)));

	*n = 0;
	if (progress_shared == NULL)
		return rows;
	LWLockAcquire(progress_shared->lock, LW_SHARED);
	for (int i = 0; i < nhistory; i++)
	{
		const HistoryEntry *h = &history_entries[i];
		LsmHistoryCopy *row;

		if (!h->key.in_use)
			continue;
		row = &rows[(*n)++];
		shared_outcome_copy(&h->key, &h->outcome, row);
		row->removed_at = h->removed_at;
	}
	LWLockRelease(progress_shared->lock);
	return rows;
}

/*
 * lsm_history_forget: a table was removed (named, a key of shared_key_set
 * on serverid, in this database; NULL with serverid InvalidOid: every
 * table of the database), at time removed_at; 0: the database's
 * extension was dropped.  A removed table's history entry stays, marked
 * with removed_at and no longer declared (evicted as any other), and its
 * pace entry is no longer declared either; when the extension was
 * dropped, the database's entries and pace go.  A no-op when lancelsm is
 * not preloaded.  Never raises an error.
 */
void
lsm_history_forget(Oid serverid, const SharedKey *named,
				   TimestampTz removed_at)
{
	if (progress_shared == NULL)
		return;
	LWLockAcquire(progress_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < progress_shared->nhistory; i++)
	{
		HistoryEntry *h = &history_entries[i];
		PaceEntry  *p = pace_entries ? &pace_entries[i] : NULL;

		if (shared_key_of(&h->key, MyDatabaseId, serverid, named))
		{
			h->removed_at = removed_at;
			h->key.declared = false;
			h->key.in_use = (removed_at != 0);
		}
		if (p != NULL && shared_key_of(&p->key, MyDatabaseId, serverid, named))
		{
			p->key.declared = false;
			p->key.in_use = (removed_at != 0);
		}
	}
	LWLockRelease(progress_shared->lock);
}

/*
 * lsm_history_reset: forget every kept checkpoint outcome (not the pace
 * entries), under the LWLock held exclusively.  A no-op when lancelsm is
 * not preloaded.  Never raises an error.
 */
void
lsm_history_reset(void)
{
	if (progress_shared == NULL)
		return;
	LWLockAcquire(progress_shared->lock, LW_EXCLUSIVE);
	memset(history_entries, 0,
		   mul_size(progress_shared->nhistory, sizeof(HistoryEntry)));
	LWLockRelease(progress_shared->lock);
}
