/*-------------------------------------------------------------------------
 *
 * run.h
 *		The run history in shared memory (src/record/run.c): one entry
 *		per flush, compact or checkpoint that lancelsm ran on a table.
 *		Private to src/record/; the view's copies are in record.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_RUN_H
#define LANCELSM_RUN_H

#include "record/record.h"
#include "record/shared_key.h"

/* Setting read at server start (PGC_POSTMASTER), defined in _PG_init. */
extern int	lsm_max_run_history;	/* runs kept */

extern void lsm_run_shmem_init(void);
extern void lsm_run_forget(Oid serverid, const SharedKey *named,
						   TimestampTz removed_at);

#endif							/* LANCELSM_RUN_H */
