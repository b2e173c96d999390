/*-------------------------------------------------------------------------
 *
 * progress.h
 *		Checkpoint progress in shared memory (the lancelsm_progress view)
 *		and the last outcome of each table's checkpoint (the history view).
 *
 * Both need lancelsm in shared_preload_libraries; without it every call
 * here is a cheap no-op and the views say what is missing.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_PROGRESS_H
#define LANCELSM_PROGRESS_H

#include "record/record.h"
#include "record/shared_key.h"

/* Settings read at server start (PGC_POSTMASTER), defined in _PG_init. */
extern int	lsm_max_progress_entries;	/* running checkpoints shown */
extern int	lsm_max_history_entries;	/* tables whose last outcome is kept */

extern void lsm_progress_shmem_init(void);
extern void lsm_history_forget(Oid serverid, const SharedKey *named,
							   TimestampTz removed_at);

#endif							/* LANCELSM_PROGRESS_H */
