/*-------------------------------------------------------------------------
 *
 * lancelsm.h
 *		Settings (GUCs) shared by the lancelsm source files, and the
 *		helpers of src/lancelsm.c that the other SQL functions share.
 *
 * The variables are defined and registered in src/lancelsm.c (_PG_init);
 * their meaning, units and defaults are documented there and in README.md.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_H
#define LANCELSM_H

#ifndef LANCELSM_VERSION
#error "LANCELSM_VERSION must come from the Makefile (lancelsm.control)"
#endif

#include "fmgr.h"
#include "task.h"

extern int	lsm_retry_budget;		/* retries per request (429, 503) */
extern int	lsm_reissue_budget;		/* checkpoint re-issues after 421 */
extern int	lsm_backoff_base_ms;	/* first backoff */
extern int	lsm_backoff_max_ms;		/* backoff cap */
extern int	lsm_poll_interval_min_ms;	/* shortest checkpoint poll interval */
extern int	lsm_poll_interval_max_ms;	/* longest checkpoint poll interval */
extern int	lsm_max_idle_polls;		/* 0: no progress bound */
extern int	lsm_max_response_size_kb;	/* response body cap */

/* src/lancelsm.c: resolve a server and run one task, raising its failure */
extern LsmTask *lsm_run_on_table(LsmTaskKind kind, text *server,
								 text *table, bool include_generation_rows);
extern LsmTask *lsm_run_with_body(LsmTaskKind kind, text *server,
								  text *table, const char *body);

/* src/lancelsm.c: table names and result rows shared by the SQL functions */
extern LsmFailure *lsm_table_name_problem(const char *name);
extern bool *lsm_duplicate_flags(char **names, int n);
extern int	lsm_failure_columns(const LsmFailure *f, Datum *values,
								bool *nulls, int i);
extern int	lsm_checkpoint_row_values(const LsmTask *task, Datum *values,
									  bool *nulls, int i);

#endif							/* LANCELSM_H */
