/*-------------------------------------------------------------------------
 *
 * lancelsm.c
 *		Module entry: PG_MODULE_MAGIC and _PG_init, which defines the
 *		lancelsm.* settings and calls the set-up of the folders that have one.
 *
 * The SQL functions are in src/functions/ (flush, compact and checkpoint
 * in maintenance.c), running operations in src/task/, what lancelsm
 * remembers and reports in src/record/, the meaning of answers in
 * src/protocol/ and the HTTP client in src/net/;
 * docs/development.md, "Layout", draws the folders and what each may call.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "task/task.h"
#include "fmgr.h"
#include "functions/functions.h"
#include "net/net.h"
#include "settings.h"
#include "utils/guc.h"

#include "pg_compat.h"

PG_MODULE_MAGIC_EXT(.name = "lancelsm", .version = LANCELSM_RELEASE);

/*
 * define_int_setting: one integer GUC of lancelsm, settable by any user.
 */
static void
define_int_setting(const char *name, const char *description, int *var,
				   int boot, int min, int max, int flags)
{
	DefineCustomIntVariable(name, description, NULL, var, boot, min, max,
							PGC_USERSET, flags, NULL, NULL, NULL);
}

/*
 * _PG_init: initialise libcurl once per process (src/net/pool.c) and define
 * the settings (their variables are in src/settings.c).  Installs no
 * signal handler.  Loaded by shared_preload_libraries, it also has the
 * checkpoint folder define lancelsm.max_progress_entries,
 * lancelsm.max_history_entries, lancelsm.max_run_history and
 * lancelsm.max_table_counters and install the shared memory hooks of
 * progress, history, pace, runs, table counters and herds
 * (src/record/shmem.c).  Raises XX000 when libcurl
 * cannot be initialised.
 */
void
_PG_init(void)
{
	lsm_net_init();
	define_int_setting("lancelsm.retry_budget",
					   "Sets how many times one request is retried after 429 or 503 (a draining node's included).",
					   &lsm_retry_budget, 8, 0, 1000, 0);
	define_int_setting("lancelsm.reissue_budget",
					   "Sets how many times a checkpoint starts again from flush after the server node lost its claim (421).",
					   &lsm_reissue_budget, 3, 0, 1000, 0);
	define_int_setting("lancelsm.backoff_base",
					   "Sets the backoff before the first retry or re-issue; it doubles with each further one.",
					   &lsm_backoff_base_ms, 100, 1, 3600 * 1000, GUC_UNIT_MS);
	define_int_setting("lancelsm.backoff_max",
					   "Sets the longest backoff between retries or re-issues.",
					   &lsm_backoff_max_ms, 5000, 1, 3600 * 1000, GUC_UNIT_MS);
	define_int_setting("lancelsm.poll_interval_min",
					   "Sets the shortest wait between checkpoint polls, used right after a compaction trigger or progress.",
					   &lsm_poll_interval_min_ms, 50, 1, 3600 * 1000, GUC_UNIT_MS);
	define_int_setting("lancelsm.poll_interval_max",
					   "Sets the longest wait between checkpoint polls, reached while nothing changes.",
					   &lsm_poll_interval_max_ms, 5000, 1, 3600 * 1000, GUC_UNIT_MS);
	define_int_setting("lancelsm.max_idle_polls",
					   "Sets how many consecutive checkpoint polls without progress and without a running compaction pass, or compaction passes that end without draining anything, fail the checkpoint; 0 disables the bound.",
					   &lsm_max_idle_polls, 0, 0, INT_MAX, 0);
	define_int_setting("lancelsm.max_response_size",
					   "Sets the largest response body accepted from a LanceDB server.",
					   &lsm_max_response_size_kb, 64 * 1024, 1, 1024 * 1024,
					   GUC_UNIT_KB);
	DefineCustomBoolVariable("lancelsm.share_checkpoints",
							 "Sets whether a checkpoint joins a checkpoint of the same table already running on this server, and whether lancelsm_checkpoint_all and lancelsm_checkpoint_due skip such a table; off, every checkpoint runs alone.",
							 NULL, &lsm_share_checkpoints, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomStringVariable("lancelsm.allowed_endpoints",
							   "Sets the endpoints lancelsm may connect to, as a comma-separated list of host names with an optional port and of address ranges such as 10.0.0.0/8; empty, any endpoint is allowed.",
							   "A host name allows the servers and proxies it names, whatever it resolves to; an address range allows the addresses actually connected to.",
							   &lsm_allowed_endpoints, "", PGC_SUSET,
							   GUC_LIST_INPUT, lsm_endpoints_check,
							   lsm_endpoints_assign, NULL);
	DefineCustomIntVariable("lancelsm.log_min_duration",
							"Sets the minimum duration of a flush, compaction or checkpoint above which it is logged, with its server, table, outcome and times.",
							"Zero logs every action; -1 logs none.",
							&lsm_log_min_duration_ms, -1, -1, INT_MAX,
							PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("lancelsm.max_name_lookups",
							"Sets the most host name lookups one backend may have pending, those a canceled statement left behind included.",
							"Each pending lookup is a thread and up to three file descriptors; at the bound a new connection waits for a slot.",
							&lsm_max_name_lookups, 16, 1, 1024,
							PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("lancelsm.max_cluster_name_lookups",
							"Sets the most host name lookups the backends of the cluster may have pending together; needs lancelsm in shared_preload_libraries.",
							"At the bound a new connection waits for a slot, as at lancelsm.max_name_lookups.",
							&lsm_max_cluster_name_lookups, 256, 1, 100000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("lancelsm.due_plan",
							 "Sets whether lancelsm_checkpoint_due reads the stats of a declared table only when its planned next read is due; off, it reads every table at every run.",
							 NULL, &lsm_due_plan, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("lancelsm.max_read_interval",
							"Sets the longest time lancelsm_checkpoint_due goes without reading the stats of a declared table, whatever its plan, for the tables declared without max_read_interval.",
							"It is also how long a quiet table that starts being written may go unnoticed.",
							&lsm_max_read_interval_s, 900, 1, INT_MAX / 1000,
							PGC_USERSET, GUC_UNIT_S, NULL, NULL, NULL);
	lsm_mapping_init();
	lsm_recording_init();
	lsm_record_init();
	lsm_herd_shmem_init();
	lsm_fresh_init();
	lsm_lookup_shmem_init();
	MarkGUCPrefixReserved("lancelsm");
}
