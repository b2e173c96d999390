/*-------------------------------------------------------------------------
 *
 * shmem.c
 *		What the record sets up when lancelsm is loaded: the four
 *		server-start settings that size its shared memory, and the
 *		shared-memory hooks of progress, history, runs and table counters.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "record/counters.h"
#include "record/progress.h"
#include "record/record.h"
#include "record/run.h"
#include "miscadmin.h"
#include "utils/guc.h"

/*
 * lsm_record_init: loaded by shared_preload_libraries, define
 * lancelsm.max_progress_entries and lancelsm.max_history_entries
 * (variables of src/record/progress.c) and lancelsm.max_run_history
 * (of src/record/run.c), lancelsm.max_table_counters (of
 * src/record/counters.c) and lancelsm.max_pending_outcomes (of
 * src/record/outcome_queue.c); in any case have progress.c, run.c,
 * counters.c and outcome_queue.c install their shared-memory hooks and
 * register the outcome launcher (src/record/outcome_launcher.c; no-ops
 * when not preloaded).
 * Called once per process by _PG_init, before lsm_herd_shmem_init; raises
 * nothing of its own.
 */
void
lsm_record_init(void)
{
	/* PGC_POSTMASTER settings can only exist when loaded at server start */
	if (process_shared_preload_libraries_in_progress)
	{
		DefineCustomIntVariable("lancelsm.max_progress_entries",
								"Sets how many running checkpoints lancelsm_progress can show at once; a checkpoint started when all are in use runs without an entry.",
								NULL, &lsm_max_progress_entries, 256, 0, 100000,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);
		DefineCustomIntVariable("lancelsm.max_history_entries",
								"Sets how many tables' last checkpoint outcome lancelsm_checkpoint_history keeps; when all are in use a new table evicts an outcome of the database and role that hold the most.",
								NULL, &lsm_max_history_entries, 1000, 0, 100000,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);
		DefineCustomIntVariable("lancelsm.max_run_history",
								"Sets how many flush, compact and checkpoint runs lancelsm_run_history keeps; when all are in use a run evicts one of the database and role that hold the most.",
								NULL, &lsm_max_run_history, 1000, 0, 100000,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);
		DefineCustomIntVariable("lancelsm.max_table_counters",
								"Sets how many tables lancelsm_table_counters counts runs for; when all are in use a new table evicts the entry of the database and role that hold the most.",
								NULL, &lsm_max_table_counters, 1000, 0, 100000,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);
		DefineCustomIntVariable("lancelsm.max_pending_outcomes",
								"Sets how many outcomes of declared tables whose caller's transaction rolled back can wait for their background worker; when all are in use a new one is dropped. 0 lets outcomes roll back with the caller's transaction.",
								NULL, &lsm_max_pending_outcomes, 1000, 0, 100000,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);
	}
	lsm_progress_shmem_init();
	lsm_run_shmem_init();
	lsm_counters_shmem_init();
	lsm_outcome_queue_shmem_init();
	lsm_outcome_launcher_register();
}

/*
 * lsm_entries_max: the sizes of the progress and history registries
 * (lancelsm.max_progress_entries and lancelsm.max_history_entries, fixed
 * at server start); false, with both 0, when lancelsm was not preloaded.
 */
bool
lsm_entries_max(int *progress, int *history)
{
	bool		preloaded = lsm_progress_available();

	*progress = preloaded ? lsm_max_progress_entries : 0;
	*history = preloaded ? lsm_max_history_entries : 0;
	return preloaded;
}
