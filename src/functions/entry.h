/*-------------------------------------------------------------------------
 *
 * entry.h
 *		The helpers of src/functions/entry.c that the SQL functions
 *		(maintenance.c, stats.c, write_spec.c, declared.c, due.c) share:
 *		running one task on a named server and table, table-name checks,
 *		and the columns of failure and checkpoint rows.
 *
 * This is the top layer's header: the transport, protocol and task layers
 * never include it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_ENTRY_H
#define LANCELSM_ENTRY_H

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "task/task.h"

/* What a direct call's run counts as in the record (src/record/). */
typedef struct LsmRunRole
{
	bool		declared;		/* its table is declared */
	bool		records;		/* its role may record */
} LsmRunRole;

/* entry.c: resolve a server and run one task, raising its failure */
extern LsmTask *lsm_run_on_table(LsmTaskKind kind, text *server,
								 text *table, bool include_generation_rows,
								 const LsmRunRole *role);
extern LsmTask *lsm_run_with_body(LsmTaskKind kind, text *server,
								  text *table, const char *body);

/* entry.c: table names and result rows shared by the SQL functions */
extern LsmFailure *lsm_table_name_problem(const char *name);
extern bool *lsm_duplicate_flags(char **names, int n);
extern const char *lsm_failure_message(const LsmFailure *f);
extern int	lsm_failure_columns(const LsmFailure *f, Datum *values,
								bool *nulls, int i);
extern int	lsm_checkpoint_row_values(const LsmTask *task, Datum *values,
									  bool *nulls, int i);

/* entry.c: server log lines */
/* The most failed rows one call over the declared tables logs. */
#define LSM_LOG_FAILED_ROWS 10

/* The most failed tables the error of a strict call names. */
#define LSM_STRICT_NAMED_ROWS 5

/*
 * The failed rows of one call, as lsm_log_failed_row counts them, and the
 * first LSM_STRICT_NAMED_ROWS of them named for lsm_failed_rows_raise.
 */
typedef struct LsmFailedRows
{
	int			failed;
	StringInfoData named;		/* "table" of server "s" (SQLSTATE), ... */
} LsmFailedRows;

extern void lsm_log_action(const char *server, const LsmTask *task);
extern void lsm_log_failed_row(LsmFailedRows *log, const char *server,
							   const char *table_name,
							   const LsmFailure *failure);
extern void lsm_log_failed_summary(const LsmFailedRows *log, int ntables);
extern bool lsm_strict_arg(FunctionCallInfo fcinfo, int argno);
extern void lsm_no_null_args(FunctionCallInfo fcinfo,
							 const char *const *names);
extern void lsm_failed_rows_raise(const LsmFailedRows *log, int ntables);

#endif							/* LANCELSM_ENTRY_H */
