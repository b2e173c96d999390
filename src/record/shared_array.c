/*-------------------------------------------------------------------------
 *
 * shared_array.c
 *		The set-up of lancelsm's bounded arrays of table entries in shared
 *		memory (the run history of src/record/run.c, the table
 *		counters of src/record/counters.c): each is a header starting
 *		with a SharedArray, then its entries, each starting with its
 *		SharedKey (src/record/shared_key.c finds and evicts them),
 *		sized by a server-start setting, under one LWLock.
 *
 * An owner registers its array from _PG_init while lancelsm is loaded by
 * shared_preload_libraries; this file installs one shmem_request_hook
 * and one shmem_startup_hook for all of them, which reserve, create or
 * attach each array and set the owner's pointers.  Not preloaded, no
 * array is registered and the owners' pointers stay NULL.
 *
 * An indexed array (the table counters: one entry per table, up to
 * 100,000, looked up at every run and stats read) also has a shared hash
 * table from each entry's key to its slot, under the array's lock, as
 * pg_stat_statements finds its entries: a lookup costs the same with 10
 * entries as with 100,000, where a scan of the array costs each lookup
 * the whole array.  Every entry in use is in the index, and nothing
 * else; the owner claims and releases entries here to keep it so.  A
 * free entry is sought from where the last one was found; an eviction
 * still scans the array once (src/record/shared_key.c), which a
 * well-sized array rarely needs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "record/shared_array.h"
#include "record/shared_key.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "pg_compat.h"

/* The arrays lancelsm has: the run history and the table counters. */
#define SHARED_MAX_ARRAYS 4

/*
 * What an indexed array's hash table is keyed by: what names a table in
 * a SharedKey (shared_key_same), zero-padded, so that equal keys are
 * equal bytes.
 */
typedef struct SharedIndexKey
{
	Oid			dbid;
	Oid			serverid;
	uint64		name_hash;
	char		table_name[LSM_PROGRESS_NAME_LEN];
} SharedIndexKey;

/* An entry of the hash table: a key, and the slot of its entry. */
typedef struct SharedIndexEntry
{
	SharedIndexKey key;
	int			slot;
} SharedIndexEntry;

static const SharedArrayDesc *arrays[SHARED_MAX_ARRAYS];
static int	narrays = 0;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * shared_array_size: the shared memory of an array's header and entries.
 */
static Size
shared_array_size(const SharedArrayDesc *desc)
{
	return add_size(MAXALIGN(desc->header_size),
					mul_size(*desc->max_entries, desc->entry_size));
}

/*
 * shared_array_index_size: the shared memory of an array's index; 0 for
 * an array without one.
 */
static Size
shared_array_index_size(const SharedArrayDesc *desc)
{
	if (desc->index == NULL || *desc->max_entries == 0)
		return 0;
	return hash_estimate_size(*desc->max_entries, sizeof(SharedIndexEntry));
}

/*
 * shared_array_index_name: the name of an array's index in shared
 * memory, in a static buffer.
 */
static const char *
shared_array_index_name(const SharedArrayDesc *desc)
{
	static char name[NAMEDATALEN];

	snprintf(name, sizeof(name), "%s index", desc->name);
	return name;
}

/*
 * shared_array_index_attach: create or attach the index of desc, when
 * it has one (postmaster start, or a backend's attach; the caller holds
 * AddinShmemInitLock).
 */
static void
shared_array_index_attach(const SharedArrayDesc *desc)
{
	HASHCTL		info;

	if (shared_array_index_size(desc) == 0)
		return;
	info.keysize = sizeof(SharedIndexKey);
	info.entrysize = sizeof(SharedIndexEntry);
	*desc->index = lsm_shmem_init_hash(shared_array_index_name(desc),
									   *desc->max_entries, &info,
									   HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
}

/*
 * shared_array_request: reserve every array's shared memory and LWLock
 * (shmem_request_hook, postmaster only).
 */
static void
shared_array_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	for (int a = 0; a < narrays; a++)
	{
		RequestAddinShmemSpace(add_size(shared_array_size(arrays[a]),
										shared_array_index_size(arrays[a])));
		RequestNamedLWLockTranche(arrays[a]->name, 1);
	}
}

/*
 * shared_array_startup: attach to (or create and clear) every array and
 * set its owner's pointers (shmem_startup_hook).
 */
static void
shared_array_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	for (int a = 0; a < narrays; a++)
	{
		const SharedArrayDesc *desc = arrays[a];
		bool		found;
		char	   *base = ShmemInitStruct(desc->name, shared_array_size(desc),
										   &found);
		SharedArray *array = (SharedArray *) base;

		if (!found)
		{
			memset(base, 0, shared_array_size(desc));
			array->lock = &(GetNamedLWLockTranche(desc->name))->lock;
			array->n = *desc->max_entries;
			pg_atomic_init_u64(&array->evicted, 0);
			if (desc->init)
				desc->init(base);
		}
		*desc->header = base;
		*desc->entries = base + MAXALIGN(desc->header_size);
		shared_array_index_attach(desc);
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * shared_array_register: when lancelsm is being loaded by
 * shared_preload_libraries, have the array of desc (static, sized by a
 * setting defined before) set up with the others, installing the hooks
 * at the first; otherwise do nothing.  Called from _PG_init.
 */
void
shared_array_register(const SharedArrayDesc *desc)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	if (narrays == SHARED_MAX_ARRAYS)
		elog(ERROR, "too many lancelsm shared arrays");
	if (narrays == 0)
	{
		prev_shmem_request_hook = shmem_request_hook;
		shmem_request_hook = shared_array_request;
		prev_shmem_startup_hook = shmem_startup_hook;
		shmem_startup_hook = shared_array_startup;
	}
	arrays[narrays++] = desc;
}

/*
 * shared_array_index_key: the index key of a SharedKey.
 */
static void
shared_array_index_key(const SharedKey *key, SharedIndexKey *ikey)
{
	memset(ikey, 0, sizeof(SharedIndexKey));
	ikey->dbid = key->dbid;
	ikey->serverid = key->serverid;
	ikey->name_hash = key->name_hash;
	strlcpy(ikey->table_name, key->table_name, sizeof(ikey->table_name));
}

/*
 * shared_array_key_at: the key of entry slot of desc's array.
 */
static SharedKey *
shared_array_key_at(const SharedArrayDesc *desc, int slot)
{
	return (SharedKey *) ((char *) *desc->entries + desc->entry_size * slot);
}

/*
 * shared_array_find: the slot of key's entry in desc's array (attached,
 * indexed or not), or -1 when none is in use.  The caller holds the
 * array's lock.  Never raises an error.
 */
int
shared_array_find(const SharedArrayDesc *desc, const SharedKey *key)
{
	SharedArray *array = (SharedArray *) *desc->header;
	SharedIndexKey ikey;
	SharedIndexEntry *found;
	bool		evicts;

	if (desc->index == NULL || *desc->index == NULL)
		return shared_key_find(*desc->entries, desc->entry_size, array->n,
							   key, false, &evicts);
	shared_array_index_key(key, &ikey);
	found = hash_search(*desc->index, &ikey, HASH_FIND, NULL);
	return found ? found->slot : -1;
}

/*
 * shared_array_free_slot: a free entry of an indexed array that has
 * one, sought from array->next_free on, which moves past it.
 */
static int
shared_array_free_slot(const SharedArrayDesc *desc, SharedArray *array)
{
	for (int i = 0; i < array->n; i++)
	{
		int			slot = (array->next_free + i) % array->n;

		if (!shared_array_key_at(desc, slot)->in_use)
		{
			array->next_free = (slot + 1) % array->n;
			return slot;
		}
	}
	return -1;					/* not reached: the index counts one free */
}

/*
 * shared_array_claim: the slot for a new entry of key, which has none in
 * use in desc's array (attached, n > 0): a free one, else the one the
 * fair rule evicts (src/record/shared_key.c; *evicts set true then,
 * false otherwise, and counted).  For an indexed array the key is
 * entered in the index, the evicted entry's taken out.  The caller holds
 * the lock exclusively and then fills the entry, its key in use.
 * Returns -1 (nothing claimed) when the fair rule keeps every entry (a
 * table not declared, the array full of declared ones), or if the index
 * has no room, which its sizing rules out.  Never raises an error.
 */
int
shared_array_claim(const SharedArrayDesc *desc, const SharedKey *key,
				   bool *evicts)
{
	SharedArray *array = (SharedArray *) *desc->header;
	SharedIndexKey ikey;
	SharedIndexEntry *entry;
	int			slot;

	*evicts = false;
	if (desc->index == NULL || *desc->index == NULL)
		slot = shared_key_slot_new(*desc->entries, desc->entry_size, array->n,
								   key, evicts);
	else if (hash_get_num_entries(*desc->index) < array->n)
		slot = shared_array_free_slot(desc, array);
	else
	{
		slot = shared_key_slot_new(*desc->entries, desc->entry_size, array->n,
								   key, evicts);
		if (slot >= 0)
			shared_array_release(desc, slot);
	}
	if (*evicts)
		pg_atomic_fetch_add_u64(&array->evicted, 1);
	if (slot < 0 || desc->index == NULL || *desc->index == NULL)
		return slot;
	shared_array_index_key(key, &ikey);
	entry = hash_search(*desc->index, &ikey, HASH_ENTER_NULL, NULL);
	if (entry == NULL)
		return -1;
	entry->slot = slot;
	return slot;
}

/*
 * shared_array_release: entry slot of desc's array is no longer in use;
 * taken out of the index too.  The caller holds the lock exclusively.
 * Never raises an error.
 */
void
shared_array_release(const SharedArrayDesc *desc, int slot)
{
	SharedKey  *key = shared_array_key_at(desc, slot);
	SharedIndexKey ikey;

	if (key->in_use && desc->index != NULL && *desc->index != NULL)
	{
		shared_array_index_key(key, &ikey);
		(void) hash_search(*desc->index, &ikey, HASH_REMOVE, NULL);
	}
	key->in_use = false;
}

/*
 * shared_array_usage: the entries of desc's array in use, its size and
 * the entries evicted since server start; false, with all 0, when
 * lancelsm is not preloaded.  Never raises an error.
 */
bool
shared_array_usage(const SharedArrayDesc *desc, int *used, int *max,
				   uint64 *evicted)
{
	SharedArray *array = (SharedArray *) *desc->header;
	const char *entries = (const char *) *desc->entries;

	*used = *max = 0;
	*evicted = 0;
	if (array == NULL)
		return false;
	LWLockAcquire(array->lock, LW_SHARED);
	if (desc->index != NULL && *desc->index != NULL)
		*used = (int) hash_get_num_entries(*desc->index);	/* no scan */
	else
		for (int i = 0; i < array->n; i++)
			if (((const SharedKey *) (entries + desc->entry_size * i))->in_use)
				(*used)++;
	LWLockRelease(array->lock);
	*max = array->n;
	*evicted = pg_atomic_read_u64(&array->evicted);
	return true;
}
