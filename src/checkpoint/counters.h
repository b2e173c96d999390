/*-------------------------------------------------------------------------
 *
 * counters.h
 *		The table counters in shared memory (src/checkpoint/counters.c):
 *		per table, the runs lancelsm ran on it and what they cost.
 *		Private to src/checkpoint/; the view's copies are in checkpoint.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_COUNTERS_H
#define LANCELSM_COUNTERS_H

#include "checkpoint/checkpoint.h"

/* Setting read at server start (PGC_POSTMASTER), defined in _PG_init. */
extern int	lsm_max_table_counters; /* tables counted */

extern void lsm_counters_shmem_init(void);
extern void lsm_counters_record(const LsmTaskSnapshot *snap,
								int interrupted_by);

#endif							/* LANCELSM_COUNTERS_H */
