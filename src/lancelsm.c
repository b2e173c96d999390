/*-------------------------------------------------------------------------
 *
 * lancelsm.c
 *		Module entry: _PG_init with the lancelsm.* settings, and the SQL
 *		functions lancelsm_flush, lancelsm_compact and lancelsm_checkpoint.
 *
 * The set-returning stats functions are in src/stats.c, option handling
 * in src/option.c, the checkpoint loop in src/checkpoint.c and src/task.c,
 * the HTTP client in src/http.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <curl/curl.h>

#include "fmgr.h"
#include "lancelsm.h"
#include "option.h"
#include "task.h"
#include "utils/builtins.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

extern PGDLLEXPORT void _PG_init(void);

/* Longest table identifier accepted, in bytes. */
#define LSM_MAX_TABLE_NAME 1024

int			lsm_retry_budget = 8;
int			lsm_reissue_budget = 3;
int			lsm_backoff_base_ms = 100;
int			lsm_backoff_max_ms = 5000;
int			lsm_poll_interval_min_ms = 50;
int			lsm_poll_interval_max_ms = 5000;
int			lsm_max_idle_polls = 0;
int			lsm_max_response_size_kb = 64 * 1024;

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
 * _PG_init: initialise libcurl once per process and define the settings.
 * Installs no signal handler.
 */
void
_PG_init(void)
{
	if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not initialize libcurl")));

	define_int_setting("lancelsm.retry_budget",
					   "Sets how many times one request is retried after 429 or a 503 from a node that is not draining.",
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
					   "Sets how many consecutive checkpoint polls without progress and without a running compaction pass fail the checkpoint; 0 disables the bound.",
					   &lsm_max_idle_polls, 0, 0, INT_MAX, 0);
	define_int_setting("lancelsm.max_response_size",
					   "Sets the largest response body accepted from a LanceDB server.",
					   &lsm_max_response_size_kb, 64 * 1024, 1, 1024 * 1024,
					   GUC_UNIT_KB);
	MarkGUCPrefixReserved("lancelsm");
}

/*
 * lsm_table_name_arg: the table identifier argument, checked: not empty,
 * at most LSM_MAX_TABLE_NAME bytes.  Raises 22023 otherwise.
 */
static char *
lsm_table_name_arg(text *arg)
{
	char	   *name = text_to_cstring(arg);
	size_t		len = strlen(name);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("LanceDB table name must not be empty")));
	if (len > LSM_MAX_TABLE_NAME)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("LanceDB table name is too long"),
				 errdetail("The name is %zu bytes long; the limit is %d bytes.",
						   len, LSM_MAX_TABLE_NAME)));
	return name;
}

/*
 * lsm_run_on_table: resolve the server, run one task of the given kind on
 * the table and raise its failure, wiping the API key on every path.
 * Returns the finished task (its stats for LSM_TASK_STATS).
 */
LsmTask *
lsm_run_on_table(LsmTaskKind kind, text *server, text *table,
				 bool include_generation_rows)
{
	char	   *table_name = lsm_table_name_arg(table);
	LsmConfig  *config = lsm_config_resolve(text_to_cstring(server));
	LsmTask    *task = palloc(sizeof(LsmTask));

	PG_TRY();
	{
		lsm_task_init(task, kind, config, table_name, include_generation_rows);
		lsm_task_run(task);
	}
	PG_FINALLY();
	{
		lsm_config_wipe(config);
	}
	PG_END_TRY();
	return task;
}

/*
 * lancelsm_flush(server text, table_name text) RETURNS void
 *
 * Seals every bucket's active memtable of the table into a new L0
 * generation (POST /v1/table/{id}/flush_lsm/, expects 202).  Retries 429
 * and 503 within lancelsm.retry_budget.  Errors: see README.md "Errors"
 * (HV00R no such table, HV00N unreachable, 28000/42501 key refused,
 * 53000 contention past the budget, 57P03 draining, 57014 timeout/cancel).
 * Protocol: shared/docs/lsm-protocol.md, "Routes".
 */
PG_FUNCTION_INFO_V1(lancelsm_flush);
Datum
lancelsm_flush(PG_FUNCTION_ARGS)
{
	lsm_run_on_table(LSM_TASK_FLUSH, PG_GETARG_TEXT_PP(0),
					 PG_GETARG_TEXT_PP(1), false);
	PG_RETURN_VOID();
}

/*
 * lancelsm_compact(server text, table_name text) RETURNS void
 *
 * Dispatches one background compaction pass per bucket the server can
 * latch (POST /v1/table/{id}/compact_lsm/, expects 202) and returns at
 * once, without waiting for the merge.  429 (no bucket could be latched)
 * is retried within lancelsm.retry_budget, then raised as 53000; 421 (no
 * claim) raises 55P03.  Other errors as lancelsm_flush.
 */
PG_FUNCTION_INFO_V1(lancelsm_compact);
Datum
lancelsm_compact(PG_FUNCTION_ARGS)
{
	lsm_run_on_table(LSM_TASK_COMPACT, PG_GETARG_TEXT_PP(0),
					 PG_GETARG_TEXT_PP(1), false);
	PG_RETURN_VOID();
}

/*
 * lancelsm_checkpoint(server text, table_name text) RETURNS void
 *
 * Converges the table's fresh tier into the base table as of the call:
 * flush, read the target watermark, then trigger compaction and poll
 * (adaptively, lancelsm.poll_interval_min..max) until no L0 generation at
 * or below the watermark remains.  Bounded by statement_timeout and query
 * cancel (57014).  421 re-issues from flush within lancelsm.reissue_budget,
 * then raises 55P03; lancelsm.max_idle_polls, when set, raises 53400.
 * Other errors as lancelsm_flush.  Protocol: shared/docs/lsm-protocol.md,
 * "The checkpoint loop".
 */
PG_FUNCTION_INFO_V1(lancelsm_checkpoint);
Datum
lancelsm_checkpoint(PG_FUNCTION_ARGS)
{
	lsm_run_on_table(LSM_TASK_CHECKPOINT, PG_GETARG_TEXT_PP(0),
					 PG_GETARG_TEXT_PP(1), false);
	PG_RETURN_VOID();
}
