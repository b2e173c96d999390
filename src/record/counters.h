/*-------------------------------------------------------------------------
 *
 * counters.h
 *		The table counters in shared memory (src/record/counters.c):
 *		per table, the runs lancelsm ran on it and what they cost.
 *		Private to src/record/; the view's copies are in record.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_COUNTERS_H
#define LANCELSM_COUNTERS_H

#include "record/record.h"

/* Setting read at server start (PGC_POSTMASTER), defined in _PG_init. */
extern int	lsm_max_table_counters; /* tables counted */

extern void lsm_counters_shmem_init(void);

#endif							/* LANCELSM_COUNTERS_H */
