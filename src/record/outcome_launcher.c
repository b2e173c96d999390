/*-------------------------------------------------------------------------
 *
 * outcome_launcher.c
 *		The background worker that starts the outcome writers: one
 *		"lancelsm outcome launcher" per server, connected to no database
 *		(but seen in pg_stat_activity),
 *		which starts a writer (src/functions/outcome_writer.c) in each
 *		database that has outcomes waiting in the queue of
 *		src/record/outcome_queue.c and none running, as TimescaleDB's
 *		launcher starts a scheduler per database.
 *
 * A background worker is bound to one database for life, so a writer
 * serves one database and exits when its queue is empty; the launcher
 * starts another when more arrive.  It sleeps on its latch, which a
 * backend sets when it hands outcomes over and the postmaster when a
 * writer it started stops (bgw_notify_pid), and looks again every
 * LAUNCHER_NAP_MS in case a writer could not be started (no free
 * background worker slot: max_worker_processes).  It runs only once
 * recovery has finished: a standby writes nothing.  It is registered when
 * lancelsm is preloaded with lancelsm.max_pending_outcomes above 0.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "record/record.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/memutils.h"

/* How long the launcher sleeps when nothing wakes it, in milliseconds. */
#define LAUNCHER_NAP_MS 5000

/* The most databases the launcher serves at once. */
#define LAUNCHER_MAX_WRITERS 64

/* A writer the launcher started. */
typedef struct LauncherWriter
{
	Oid			dbid;
	BackgroundWorkerHandle *handle;
} LauncherWriter;

PGDLLEXPORT void lsm_outcome_launcher_main(Datum main_arg);

/*
 * launcher_set_names: the library and the name of a worker's entry point.
 */
static void
launcher_set_names(BackgroundWorker *worker, const char *type,
				   const char *function)
{
	strlcpy(worker->bgw_library_name, "lancelsm", BGW_MAXLEN);
	strlcpy(worker->bgw_function_name, function, BGW_MAXLEN);
	strlcpy(worker->bgw_type, type, BGW_MAXLEN);
	strlcpy(worker->bgw_name, type, BGW_MAXLEN);
}

/*
 * lsm_outcome_launcher_register: register the launcher (from _PG_init,
 * while lancelsm is loaded by shared_preload_libraries and the queue has
 * room); otherwise do nothing.
 */
void
lsm_outcome_launcher_register(void)
{
	BackgroundWorker worker = {0};

	if (!process_shared_preload_libraries_in_progress ||
		lsm_max_pending_outcomes == 0)
		return;
	launcher_set_names(&worker, "lancelsm outcome launcher",
					   "lsm_outcome_launcher_main");
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 10;
	RegisterBackgroundWorker(&worker);
}

/*
 * launcher_start_writer: start the writer of database dbid; NULL when no
 * background worker slot is free.
 */
static BackgroundWorkerHandle *
launcher_start_writer(Oid dbid)
{
	BackgroundWorker worker = {0};
	BackgroundWorkerHandle *handle;

	launcher_set_names(&worker, "lancelsm outcome writer",
					   "lsm_outcome_writer_main");
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	worker.bgw_main_arg = ObjectIdGetDatum(dbid);
	worker.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		return NULL;
	return handle;
}

/*
 * launcher_running: whether the writer of database dbid among writers[0
 * .. n) is still starting or running.
 */
static bool
launcher_running(LauncherWriter *writers, int n, Oid dbid)
{
	pid_t		pid;

	for (int i = 0; i < n; i++)
		if (writers[i].dbid == dbid &&
			GetBackgroundWorkerPid(writers[i].handle, &pid) != BGWH_STOPPED)
			return true;
	return false;
}

/*
 * launcher_prune: forget the writers that have stopped; returns how many
 * remain.
 */
static int
launcher_prune(LauncherWriter *writers, int n)
{
	int			kept = 0;
	pid_t		pid;

	for (int i = 0; i < n; i++)
	{
		if (GetBackgroundWorkerPid(writers[i].handle, &pid) == BGWH_STOPPED)
		{
			pfree(writers[i].handle);
			continue;
		}
		writers[kept++] = writers[i];
	}
	return kept;
}

/*
 * launcher_round: start a writer in each database with outcomes waiting
 * and none running; returns the writers now known.
 */
static int
launcher_round(LauncherWriter *writers, int n)
{
	Oid			dbids[LAUNCHER_MAX_WRITERS];
	int			ndb = lsm_outcome_queue_databases(dbids, lengthof(dbids));

	n = launcher_prune(writers, n);
	for (int d = 0; d < ndb && n < LAUNCHER_MAX_WRITERS; d++)
	{
		BackgroundWorkerHandle *handle;

		if (launcher_running(writers, n, dbids[d]))
			continue;
		handle = launcher_start_writer(dbids[d]);
		if (handle == NULL)
			break;				/* no free slot: try again after a nap */
		writers[n].dbid = dbids[d];
		writers[n++].handle = handle;
	}
	return n;
}

/*
 * launcher_exit: no longer take wake-ups (before_shmem_exit).
 */
static void
launcher_exit(int code, Datum arg)
{
	lsm_outcome_queue_set_launcher(false);
}

/*
 * lsm_outcome_launcher_main: the launcher's body (bgw_function_name).
 * Exits on SIGTERM; the writers it started drain their databases'
 * queues on their own.
 */
void
lsm_outcome_launcher_main(Datum main_arg)
{
	LauncherWriter *writers;
	int			n = 0;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	/* no database: only to be seen in pg_stat_activity */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	writers = MemoryContextAlloc(TopMemoryContext,
								 LAUNCHER_MAX_WRITERS * sizeof(LauncherWriter));
	before_shmem_exit(launcher_exit, (Datum) 0);
	lsm_outcome_queue_set_launcher(true);
	while (!ShutdownRequestPending)
	{
		n = launcher_round(writers, n);
		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 LAUNCHER_NAP_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}
	proc_exit(0);
}
