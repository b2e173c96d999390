/*-------------------------------------------------------------------------
 *
 * fresh.c
 *		The versions lancelsm keeps for fresh reads: per table, the highest
 *		x-lancedb-version a 2xx answer carried, which every later request
 *		of the table sends as x-lancedb-min-read-version, as the SDK's
 *		remote table does (docs/protocol.md, "Fresh reads").
 *
 * A table is known by (endpoint, database, table, key hash): the base URL,
 * the database and its prefix, the table's identifier as sent, and a hash
 * of the credentials (the API key or the bearer token file's path), so
 * that two tenants of one endpoint never share a version and no secret is
 * kept.  The entries hold two independent 64-bit hashes of that, never the
 * text: a collision needs both to match.
 *
 * Loaded by shared_preload_libraries, the versions live in a shared hash
 * table of lancelsm.max_table_versions entries, so that a new session (a
 * pg_cron run) starts from what earlier sessions saw; when it is full a
 * new table evicts another, whose next request then starts cold, as the
 * SDK's does after openTable without a describe.  Not preloaded, each
 * backend keeps its own table for as long as it lives, and every session
 * starts cold.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "protocol/protocol.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* The two seeds of a table's key hashes. */
#define FRESH_SEED_A UINT64CONST(0x6c616e63656c736d)
#define FRESH_SEED_B UINT64CONST(0x66726573682d7631)

/* What names a table's version: two hashes of its identity. */
typedef struct FreshKey
{
	uint64		a;
	uint64		b;
} FreshKey;

/* A table's kept version. */
typedef struct FreshEntry
{
	FreshKey	key;
	uint64		version;
} FreshEntry;

/* lancelsm.max_table_versions: entries of the shared table */
static int	fresh_max_entries = 100000;

static HTAB *fresh_shared = NULL;	/* attached when preloaded */
static LWLock *fresh_lock = NULL;
static HTAB *fresh_local = NULL;	/* this backend's, when not preloaded */

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * fresh_request: reserve the shared table and its lock
 * (shmem_request_hook, postmaster only).
 */
static void
fresh_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	if (fresh_max_entries == 0)
		return;
	RequestAddinShmemSpace(hash_estimate_size(fresh_max_entries,
											  sizeof(FreshEntry)));
	RequestNamedLWLockTranche("lancelsm table versions", 1);
}

/*
 * fresh_startup: create or attach the shared table (shmem_startup_hook).
 */
static void
fresh_startup(void)
{
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	if (fresh_max_entries == 0)
		return;
	info.keysize = sizeof(FreshKey);
	info.entrysize = sizeof(FreshEntry);
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	fresh_shared = lsm_shmem_init_hash("lancelsm table versions",
									   fresh_max_entries, &info,
									   HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
	fresh_lock = &(GetNamedLWLockTranche("lancelsm table versions"))->lock;
	LWLockRelease(AddinShmemInitLock);
}

/*
 * lsm_fresh_init: loaded by shared_preload_libraries, define
 * lancelsm.max_table_versions and install the shared table's hooks;
 * otherwise do nothing (each backend then keeps its own versions).
 * Called once per process by _PG_init.
 */
void
lsm_fresh_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("lancelsm.max_table_versions",
							"Sets how many tables' highest seen version lancelsm keeps in shared memory for fresh reads; when all are in use a new table evicts another, whose next request starts cold.",
							NULL, &fresh_max_entries, 100000, 0, 10000000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = fresh_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = fresh_startup;
}

/*
 * fresh_hash_text: fold a string, its terminating NUL included (so that
 * "ab" + "c" differs from "a" + "bc"), into both hashes; NULL as "".
 */
static void
fresh_hash_text(FreshKey *key, const char *s)
{
	if (s == NULL)
		s = "";
	key->a = hash_combine64(key->a,
							hash_bytes_extended((const unsigned char *) s,
												strlen(s) + 1, FRESH_SEED_A));
	key->b = hash_combine64(key->b,
							hash_bytes_extended((const unsigned char *) s,
												strlen(s) + 1, FRESH_SEED_B));
}

/*
 * fresh_key: the key of table (its identifier as sent) on config's
 * endpoint, database and credentials.
 */
static void
fresh_key(const LsmConfig *config, const char *table, FreshKey *key)
{
	memset(key, 0, sizeof(FreshKey));
	fresh_hash_text(key, config->base_url);
	fresh_hash_text(key, config->database);
	fresh_hash_text(key, config->database_prefix);
	fresh_hash_text(key, config->id_delimiter);
	fresh_hash_text(key, table);
	fresh_hash_text(key, config->api_key);
	fresh_hash_text(key, config->bearer_token_file);
}

/*
 * fresh_local_table: this backend's table of versions, created at first
 * use in TopMemoryContext.
 */
static HTAB *
fresh_local_table(void)
{
	HASHCTL		info;

	if (fresh_local == NULL)
	{
		info.keysize = sizeof(FreshKey);
		info.entrysize = sizeof(FreshEntry);
		info.hcxt = TopMemoryContext;
		fresh_local = hash_create("lancelsm table versions", 256, &info,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	return fresh_local;
}

/*
 * fresh_evict_one: make room in the full shared table by removing its
 * first entry in scan order, an arbitrary one.  The caller holds the lock
 * exclusively.
 */
static void
fresh_evict_one(void)
{
	HASH_SEQ_STATUS scan;
	FreshEntry *victim;

	hash_seq_init(&scan, fresh_shared);
	victim = hash_seq_search(&scan);
	if (victim == NULL)
		return;
	hash_seq_term(&scan);
	(void) hash_search(fresh_shared, &victim->key, HASH_REMOVE, NULL);
}

/*
 * lsm_fresh_kept: the version kept for table (its identifier as sent) on
 * config's server, 0 when none.  Never raises an error (but for out of
 * memory creating this backend's own table).
 */
uint64
lsm_fresh_kept(const LsmConfig *config, const char *table)
{
	FreshKey	key;
	FreshEntry *entry;
	uint64		version = 0;

	fresh_key(config, table, &key);
	if (fresh_shared == NULL)
	{
		entry = hash_search(fresh_local_table(), &key, HASH_FIND, NULL);
		return entry ? entry->version : 0;
	}
	LWLockAcquire(fresh_lock, LW_SHARED);
	entry = hash_search(fresh_shared, &key, HASH_FIND, NULL);
	if (entry)
		version = entry->version;
	LWLockRelease(fresh_lock);
	return version;
}

/*
 * lsm_fresh_observe: a 2xx answer for table carried version: keep it
 * when it is above the kept one; 0 changes nothing (the SDK ignores it).
 * A kept version is never lowered.
 */
void
lsm_fresh_observe(const LsmConfig *config, const char *table, uint64 version)
{
	FreshKey	key;
	FreshEntry *entry;
	bool		found;

	if (version == 0)
		return;
	fresh_key(config, table, &key);
	if (fresh_shared == NULL)
	{
		entry = hash_search(fresh_local_table(), &key, HASH_ENTER, &found);
		if (!found || entry->version < version)
			entry->version = version;
		return;
	}
	LWLockAcquire(fresh_lock, LW_EXCLUSIVE);
	entry = hash_search(fresh_shared, &key, HASH_ENTER_NULL, &found);
	if (entry == NULL)
	{
		fresh_evict_one();
		entry = hash_search(fresh_shared, &key, HASH_ENTER_NULL, &found);
	}
	if (entry != NULL && (!found || entry->version < version))
		entry->version = version;
	LWLockRelease(fresh_lock);
}

/*
 * lsm_fresh_forget: the server refused a read for the version kept for
 * table: forget it, so that the next request starts cold.
 */
void
lsm_fresh_forget(const LsmConfig *config, const char *table)
{
	FreshKey	key;

	fresh_key(config, table, &key);
	if (fresh_shared == NULL)
	{
		(void) hash_search(fresh_local_table(), &key, HASH_REMOVE, NULL);
		return;
	}
	LWLockAcquire(fresh_lock, LW_EXCLUSIVE);
	(void) hash_search(fresh_shared, &key, HASH_REMOVE, NULL);
	LWLockRelease(fresh_lock);
}

/*
 * lsm_fresh_min_timestamp: the x-lancedb-min-timestamp config's
 * read_consistency_interval asks of a request sent now (now minus the
 * interval; 0: the option is unset, no header).
 */
TimestampTz
lsm_fresh_min_timestamp(const LsmConfig *config)
{
	if (config->read_consistency_interval_ms < 0)
		return 0;
	return GetCurrentTimestamp() -
		(TimestampTz) config->read_consistency_interval_ms * 1000;
}
