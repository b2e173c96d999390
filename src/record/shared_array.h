/*-------------------------------------------------------------------------
 *
 * shared_array.h
 *		A bounded array of table entries in shared memory, after a header
 *		that starts with a SharedArray, under one LWLock: how the run
 *		history and the table counters are set up, sized and measured,
 *		and how an indexed array's entries are found, claimed and
 *		released (src/record/shared_array.c).  Private to
 *		src/record/.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_SHARED_ARRAY_H
#define LANCELSM_SHARED_ARRAY_H

#include "record/shared_key.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "utils/hsearch.h"

/* The first member of an array's shared header. */
typedef struct SharedArray
{
	LWLock	   *lock;			/* protects the entries */
	int			n;				/* entries, fixed at server start */
	pg_atomic_uint64 evicted;	/* entries evicted since server start */
	int			next_free;		/* indexed: where a free entry is sought */
} SharedArray;

/*
 * What an array is: its name (of its shared memory and its LWLock
 * tranche), the sizes of its header and of an entry (each starting with
 * its SharedKey), the setting that counts its entries, and where its
 * owner keeps the pointers to the header and the entries once attached
 * (NULL until then: not preloaded).  init, when set, fills the owner's
 * part of a new header (after the SharedArray, which is set already).
 * index, when set, is where the owner keeps the hash table that finds an
 * entry by its key (shared_array_find): an array of one entry per table
 * that may hold tens of thousands of them, looked up at every run.
 */
typedef struct SharedArrayDesc
{
	const char *name;
	Size		header_size;
	Size		entry_size;
	const int  *max_entries;
	void	  **header;
	void	  **entries;
	void		(*init) (void *header);
	HTAB	  **index;
} SharedArrayDesc;

extern void shared_array_register(const SharedArrayDesc *desc);
extern int	shared_array_find(const SharedArrayDesc *desc,
							  const SharedKey *key);
extern int	shared_array_claim(const SharedArrayDesc *desc,
							   const SharedKey *key, bool *evicts);
extern void shared_array_release(const SharedArrayDesc *desc, int slot);
extern bool shared_array_usage(const SharedArrayDesc *desc, int *used,
							   int *max, uint64 *evicted);

#endif							/* LANCELSM_SHARED_ARRAY_H */
