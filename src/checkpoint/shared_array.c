/*-------------------------------------------------------------------------
 *
 * shared_array.c
 *		The set-up of lancelsm's bounded arrays of table entries in shared
 *		memory (the run history of src/checkpoint/run.c, the table
 *		counters of src/checkpoint/counters.c): each is a header starting
 *		with a SharedArray, then its entries, each starting with its
 *		SharedKey (src/checkpoint/shared_key.c finds and evicts them),
 *		sized by a server-start setting, under one LWLock.
 *
 * An owner registers its array from _PG_init while lancelsm is loaded by
 * shared_preload_libraries; this file installs one shmem_request_hook
 * and one shmem_startup_hook for all of them, which reserve, create or
 * attach each array and set the owner's pointers.  Not preloaded, no
 * array is registered and the owners' pointers stay NULL.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "checkpoint/shared_array.h"
#include "checkpoint/shared_key.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

/* The arrays lancelsm has: the run history and the table counters. */
#define SHARED_MAX_ARRAYS 4

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
		RequestAddinShmemSpace(shared_array_size(arrays[a]));
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
	for (int i = 0; i < array->n; i++)
		if (((const SharedKey *) (entries + desc->entry_size * i))->in_use)
			(*used)++;
	LWLockRelease(array->lock);
	*max = array->n;
	*evicted = pg_atomic_read_u64(&array->evicted);
	return true;
}
