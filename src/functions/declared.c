/*-------------------------------------------------------------------------
 *
 * declared.c
 *		The declared tables: the catalog of LanceDB tables a DBA manages
 *		(the extension's table lancelsm_table) with their thresholds, the
 *		functions that add, alter and remove entries, and the set-returning
 *		functions over all of them behind the views lancelsm_bucket_stats
 *		and lancelsm_table_stats and behind lancelsm_checkpoint_all();
 *		the reading, running and recording that lancelsm_checkpoint_due()
 *		(src/functions/due.c) shares with them.
 *
 * The set-returning functions read the declared tables with SPI, resolve
 * each distinct server once without raising (lsm_config_try_resolve), run
 * one task per table concurrently (lsm_task_run_all: one stats read, or one
 * checkpoint, per table) and turn every failure into a row carrying its
 * SQLSTATE and message.  A table that cannot be reached, or whose server is
 * unusable for the current role, never hides the other tables' rows; only
 * PostgreSQL's own errors (cancel, statement_timeout, out of memory) raise.
 * Rows come out in the order of (server, table_name) under the "C"
 * collation.
 *
 * The numbers come from one summary per table (src/functions/shape.c), made once
 * after the stats reads; the row builders are those of lancelsm_stats
 * (src/functions/stats.c) and of the multi-table lancelsm_checkpoint
 * (src/functions/entry.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "functions/declared.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "functions/entry.h"
#include "functions/recording.h"
#include "mb/pg_wchar.h"
#include "task/task.h"
#include "settings.h"
#include "functions/stats.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

/* Arguments of lancelsm_add_table up to 1.4, and of lancelsm_alter_table in 1.2. */
#define DECLARE_ARGS 7
/* Arguments of lancelsm_add_table since 1.5: validate, max_read_interval. */
#define ADD_ARGS 9
#define VALIDATE_ARG 7
/* Arguments of lancelsm_alter_table in 1.4: the thresholds to clear. */
#define ALTER_ARGS_V1_4 8
#define CLEAR_ARG 7
/* Arguments of lancelsm_alter_table since 1.5: max_read_interval. */
#define ALTER_ARGS 9
/* max_read_interval, the last argument of both since 1.5 */
#define READ_INTERVAL_ARG 8
/* The five thresholds, arguments 2 .. 6 of both. */
#define DECLARED_LIMIT_ARGS 5

/* The argument types of lancelsm_add_table and lancelsm_alter_table. */
static const Oid declared_add_types[ADD_ARGS] = {TEXTOID, TEXTOID, INT8OID,
	INT8OID, INT8OID, INT8OID, INTERVALOID, BOOLOID, INTERVALOID};
static const Oid declared_alter_types[ALTER_ARGS] = {TEXTOID, TEXTOID,
	INT8OID, INT8OID, INT8OID, INT8OID, INTERVALOID, TEXTARRAYOID,
INTERVALOID};

/*
 * The thresholds lancelsm_alter_table's clear argument may name, in the
 * order of their arguments from the third; since 1.5 max_read_interval
 * too (the last argument).
 */
static const char *const declared_thresholds[] = {
	"max_l0_generations", "max_l0_bytes", "max_wal_lag", "max_memtable_rows",
	"max_checkpoint_age", "max_read_interval"
};

static bool declared_has_column(FunctionCallInfo fcinfo, const char *column);

/*
 * declared_relation: the schema-qualified, quoted name of lancelsm_table,
 * which lives in the schema of the calling function (the extension's).
 */
static char *
declared_relation(FunctionCallInfo fcinfo)
{
	Oid			nspid = get_func_namespace(fcinfo->flinfo->fn_oid);

	return psprintf("%s.lancelsm_table",
					quote_identifier(get_namespace_name(nspid)));
}

/*
 * declared_spi_connect
 *		Connect to SPI and run what follows under search_path =
 *		pg_catalog, pg_temp, in a GUC nest level of its own, as
 *		PostgreSQL's own internal queries do: the caller's search_path can
 *		then change neither the functions, operators and types the
 *		internal SQL names (now, date_trunc, =, -, text, unnest) nor the
 *		tables it reads (it names them schema-qualified anyway).  Returns
 *		the nest level to hand to declared_spi_finish.  On error, the
 *		transaction's (or subtransaction's) abort restores search_path.
 */
static int
declared_spi_connect(void)
{
	int			nestlevel;

	SPI_connect();
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	return nestlevel;
}

/*
 * declared_spi_finish
 *		Restore the caller's search_path (nestlevel from
 *		declared_spi_connect) and disconnect from SPI.
 */
static void
declared_spi_finish(int nestlevel)
{
	AtEOXact_GUC(true, nestlevel);
	SPI_finish();
}

/*
 * declared_modify: run one INSERT, UPDATE or DELETE on lancelsm_table
 * with the query template (%s: the table) and the function's first nargs
 * arguments, of argtypes, as parameters $1..$nargs (server, table_name,
 * then the five thresholds and the function's own), as the current role.
 * Returns the number of rows it changed.  Errors: 42501 without the
 * privilege on lancelsm_table, 23514 for a threshold its CHECK constraint
 * refuses.
 */
static uint64
declared_modify(FunctionCallInfo fcinfo, const char *template, int nargs,
				const Oid *argtypes)
{
	Datum		args[ALTER_ARGS];
	char		nulls[ALTER_ARGS];
	uint64		processed;
	int			nestlevel;
	int			rc;

	Assert(nargs <= ALTER_ARGS && nargs <= ADD_ARGS);
	for (int i = 0; i < nargs; i++)
	{
		args[i] = PG_GETARG_DATUM(i);
		nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
	}
	nestlevel = declared_spi_connect();
	rc = SPI_execute_with_args(psprintf(template, declared_relation(fcinfo)),
							   nargs, (Oid *) argtypes, args, nulls, false, 0);
	if (rc != SPI_OK_INSERT && rc != SPI_OK_UPDATE && rc != SPI_OK_DELETE)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg_internal("SPI_execute_with_args failed: %s",
								 SPI_result_code_string(rc))));
	processed = SPI_processed;
	declared_spi_finish(nestlevel);
	return processed;
}

/*
 * lsm_declared_query
 *		Run one statement on lancelsm_table: template (%s: the table,
 *		schema-qualified) with nargs parameters $1..$nargs of argtypes
 *		(none NULL), under search_path = pg_catalog, pg_temp, as the
 *		current role.  With rows non-NULL, the statement returns two text
 *		columns (server, table_name): every row's are copied into
 *		rows[0][i] and rows[1][i], in the caller's memory context.
 *		Returns the number of rows it returned or changed.  Errors: the
 *		statement's own (42501 without the privilege on lancelsm_table).
 */
uint64
lsm_declared_query(FunctionCallInfo fcinfo, const char *template, int nargs,
				   Oid *argtypes, Datum *args, char **rows[2])
{
	MemoryContext outer = CurrentMemoryContext;
	uint64		processed;
	int			nestlevel;
	int			rc;

	nestlevel = declared_spi_connect();
	rc = SPI_execute_with_args(psprintf(template, declared_relation(fcinfo)),
							   nargs, argtypes, args, NULL, false, 0);
	if (rc < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg_internal("SPI_execute_with_args failed: %s",
								 SPI_result_code_string(rc))));
	processed = SPI_processed;
	for (int c = 0; rows != NULL && c < 2; c++)
	{
		rows[c] = MemoryContextAlloc(outer, Max(processed, 1) * sizeof(char *));
		for (uint64 r = 0; r < processed; r++)
		{
			char	   *v = SPI_getvalue(SPI_tuptable->vals[r],
										 SPI_tuptable->tupdesc, c + 1);

			rows[c][r] = MemoryContextStrdup(outer, v);
		}
	}
	declared_spi_finish(nestlevel);
	return processed;
}

/*
 * declared_check_clear: the clear argument of lancelsm_alter_table (the
 * eighth, NULL: none) names only thresholds (and, since 1.5,
 * max_read_interval), none of them also given a value.  Errors: 22023
 * otherwise, listing them.
 */
static void
declared_check_clear(FunctionCallInfo fcinfo)
{
	Datum	   *elems;
	bool	   *elem_nulls;
	int			n;

	int			nnames = lengthof(declared_thresholds) -
		(PG_NARGS() < ALTER_ARGS ? 1 : 0);

	if (PG_ARGISNULL(CLEAR_ARG))
		return;
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(CLEAR_ARG), TEXTOID, -1,
					  false, TYPALIGN_INT, &elems, &elem_nulls, &n);
	for (int i = 0; i < n; i++)
	{
		char	   *name = elem_nulls[i] ? NULL : TextDatumGetCString(elems[i]);
		int			k;

		for (k = 0; k < nnames; k++)
			if (name != NULL && strcmp(name, declared_thresholds[k]) == 0)
				break;
		if (k == nnames)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot clear \"%s\": it is not a threshold",
							name ? name : "NULL"),
					 errhint("The thresholds are max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows and max_checkpoint_age; max_read_interval may be cleared too.")));
		if (!PG_ARGISNULL(k < DECLARED_LIMIT_ARGS ? 2 + k : READ_INTERVAL_ARG))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("threshold \"%s\" cannot be both set and cleared",
							name)));
	}
}

/* A table being checked before it is declared. */
typedef struct DeclaredName
{
	const char *server;
	const char *table_name;
} DeclaredName;

/*
 * declared_validate_context: the error context of the stats read that
 * checks a table before it is declared (arg: its DeclaredName).
 */
static void
declared_validate_context(void *arg)
{
	DeclaredName *name = (DeclaredName *) arg;

	errcontext("checking LanceDB table \"%s\" of server \"%s\" before declaring it (validate => false declares it without a request)",
			   name->table_name, name->server);
}

/*
 * declared_validate: read the stats of the function's (server,
 * table_name) once, as lancelsm_stats does, and raise what that read
 * raises, with an error context naming the declaration.
 */
static void
declared_validate(FunctionCallInfo fcinfo, const char *server,
				  const char *table_name)
{
	DeclaredName name = {server, table_name};
	ErrorContextCallback callback;

	callback.callback = declared_validate_context;
	callback.arg = &name;
	callback.previous = error_context_stack;
	error_context_stack = &callback;
	(void) lsm_run_on_table(LSM_TASK_STATS, PG_GETARG_TEXT_PP(0),
							PG_GETARG_TEXT_PP(1), false, NULL);
	error_context_stack = callback.previous;
}

/*
 * lancelsm_add_table(server text, table_name text,
 *   max_l0_generations bigint DEFAULT NULL, max_l0_bytes bigint DEFAULT NULL,
 *   max_wal_lag bigint DEFAULT NULL, max_memtable_rows bigint DEFAULT NULL,
 *   max_checkpoint_age interval DEFAULT NULL, validate boolean DEFAULT true,
 *   max_read_interval interval DEFAULT NULL)
 *   RETURNS void
 *
 * Declares a LanceDB table of a lancelsm server: inserts (server,
 * table_name) and its thresholds (NULL: not used; counts of generations,
 * bytes, WAL entries and rows, and an age) into lancelsm_table, with
 * max_read_interval, the longest time lancelsm_checkpoint_due() goes
 * without reading its stats (NULL: lancelsm.max_read_interval).  The
 * server must exist and belong to the lancelsm wrapper.  With validate,
 * the table's stats are then read once (one request, with USAGE on the
 * server and a user mapping, as lancelsm_stats), and a table the read
 * fails for is not declared: HV00R when the server has no such table,
 * else the read's own error (HV00N unreachable, 28000 key refused, ...).
 * validate => false contacts nothing and needs neither USAGE nor a user
 * mapping.  Returns NULL and does nothing when server or table_name is
 * NULL.  Errors: 22004 validate NULL, 42710 a table already declared
 * (nothing changes, nothing is read; the hint names
 * lancelsm_alter_table), 42704 unknown server, 42809 a server of another
 * wrapper, 22023 an empty or over-long table name, 23514 a negative
 * threshold or an age not above zero, 42501 without INSERT on
 * lancelsm_table (EXECUTE is revoked from PUBLIC), 23514 also for a
 * max_read_interval not above zero.  Declared by 1.1 with
 * two arguments only, it stores no thresholds; declared by 1.2 to 1.4
 * without validate, it contacts nothing, as those versions documented.
 */
PG_FUNCTION_INFO_V1(lancelsm_add_table);
Datum
lancelsm_add_table(PG_FUNCTION_ARGS)
{
	char	   *server;
	char	   *table_name;
	LsmFailure *problem;
	bool		limits = PG_NARGS() >= DECLARE_ARGS;
	bool		validate = PG_NARGS() > VALIDATE_ARG;
	bool		bound = PG_NARGS() >= ADD_ARGS;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	if (validate && PG_ARGISNULL(VALIDATE_ARG))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("validate must not be null")));
	validate = validate && PG_GETARG_BOOL(VALIDATE_ARG);
	server = text_to_cstring(PG_GETARG_TEXT_PP(0));
	table_name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	problem = lsm_server_problem(server);
	if (problem == NULL)
		problem = lsm_table_name_problem(table_name);
	if (problem != NULL)
		lsm_fault_raise(problem);
	if (declared_modify(fcinfo, bound ?
						"INSERT INTO %s (server, table_name, max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows, max_checkpoint_age, max_read_interval) VALUES ($1, $2, $3, $4, $5, $6, $7, $9) ON CONFLICT DO NOTHING" :
						limits ?
						"INSERT INTO %s (server, table_name, max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows, max_checkpoint_age) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING" :
						"INSERT INTO %s (server, table_name) VALUES ($1, $2) ON CONFLICT DO NOTHING",
						bound ? ADD_ARGS : limits ? DECLARE_ARGS : 2,
						declared_add_types) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("table \"%s\" of server \"%s\" is already declared",
						table_name, server),
				 errhint("Use lancelsm_alter_table to change its thresholds.")));
	if (validate)
		declared_validate(fcinfo, server, table_name);
	PG_RETURN_VOID();
}

/*
 * The SET list of lancelsm_alter_table since 1.4: each threshold named in
 * clear ($8) is set to NULL, a threshold given ($3 .. $7) is set, and one
 * omitted keeps its value.
 */
#define ALTER_KEEP_SET \
	"max_l0_generations = CASE WHEN 'max_l0_generations' = ANY ($8) THEN NULL ELSE coalesce($3, max_l0_generations) END, " \
	"max_l0_bytes = CASE WHEN 'max_l0_bytes' = ANY ($8) THEN NULL ELSE coalesce($4, max_l0_bytes) END, " \
	"max_wal_lag = CASE WHEN 'max_wal_lag' = ANY ($8) THEN NULL ELSE coalesce($5, max_wal_lag) END, " \
	"max_memtable_rows = CASE WHEN 'max_memtable_rows' = ANY ($8) THEN NULL ELSE coalesce($6, max_memtable_rows) END, " \
	"max_checkpoint_age = CASE WHEN 'max_checkpoint_age' = ANY ($8) THEN NULL ELSE coalesce($7, max_checkpoint_age) END"

/*
 * lancelsm_alter_table(server text, table_name text,
 *   max_l0_generations bigint DEFAULT NULL, max_l0_bytes bigint DEFAULT NULL,
 *   max_wal_lag bigint DEFAULT NULL, max_memtable_rows bigint DEFAULT NULL,
 *   max_checkpoint_age interval DEFAULT NULL, clear text[] DEFAULT NULL,
 *   max_read_interval interval DEFAULT NULL)
 *   RETURNS void
 *
 * Changes the thresholds of a declared table as cron.alter_job changes a
 * job: a threshold given (not NULL) is set, one omitted or NULL keeps its
 * value, and one named in clear (by its argument name) is set to NULL,
 * that is, no longer used; max_read_interval likewise (cleared: the
 * setting lancelsm.max_read_interval).  The table's read plan is
 * forgotten: lancelsm_checkpoint_due() reads it at its next run
 * (next_read_reason 'altered').  Nothing is contacted.  Returns NULL and does
 * nothing when server or table_name is NULL.  Errors: 42704 when the
 * table is not declared, 22023 a name in clear that is no threshold, or
 * a threshold both given and cleared, 23514 a negative threshold or an
 * age not above zero, 42501 without UPDATE on lancelsm_table (EXECUTE is
 * revoked from PUBLIC).  Declared by 1.2 and 1.3 without clear, it sets
 * the five thresholds to exactly the arguments (NULL: not used), as those
 * versions documented; declared by 1.4 without max_read_interval, it
 * leaves the plan alone.
 */
PG_FUNCTION_INFO_V1(lancelsm_alter_table);
Datum
lancelsm_alter_table(PG_FUNCTION_ARGS)
{
	bool		keeps = PG_NARGS() >= ALTER_ARGS_V1_4;
	bool		plans = PG_NARGS() >= ALTER_ARGS;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	if (keeps)
		declared_check_clear(fcinfo);
	if (declared_modify(fcinfo, plans ?
						"UPDATE %s SET " ALTER_KEEP_SET ", "
						"max_read_interval = CASE WHEN 'max_read_interval' = ANY ($8) THEN NULL ELSE coalesce($9, max_read_interval) END, "
						"next_read_at = NULL, next_read_reason = 'altered' "
						"WHERE server = $1 AND table_name = $2" :
						keeps ?
						"UPDATE %s SET " ALTER_KEEP_SET " "
						"WHERE server = $1 AND table_name = $2" :
						"UPDATE %s SET max_l0_generations = $3, max_l0_bytes = $4, max_wal_lag = $5, max_memtable_rows = $6, max_checkpoint_age = $7 WHERE server = $1 AND table_name = $2",
						plans ? ALTER_ARGS : keeps ? ALTER_ARGS_V1_4 : DECLARE_ARGS,
						declared_alter_types) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("table \"%s\" of server \"%s\" is not declared",
						text_to_cstring(PG_GETARG_TEXT_PP(1)),
						text_to_cstring(PG_GETARG_TEXT_PP(0)))));
	PG_RETURN_VOID();
}

/*
 * lancelsm_remove_table(server text, table_name text) RETURNS boolean
 *
 * Removes a declared table; true if it was declared, false otherwise.
 * Its row goes from lancelsm_table (and so from lancelsm_status), with
 * its message (1.5); when the transaction commits, its table counters
 * and last stats go too, and its entries in the checkpoint and run
 * histories are marked removed_at (src/record/forget.c).  The server need
 * not exist any more.  Errors: 42501 without DELETE on lancelsm_table
 * (EXECUTE is revoked from PUBLIC).
 */
PG_FUNCTION_INFO_V1(lancelsm_remove_table);
Datum
lancelsm_remove_table(PG_FUNCTION_ARGS)
{
	if (declared_modify(fcinfo,
						"DELETE FROM %s WHERE server = $1 AND table_name = $2",
						2, declared_add_types) == 0)
		PG_RETURN_BOOL(false);
	lsm_record_forget_removed(text_to_cstring(PG_GETARG_TEXT_PP(0)),
							  text_to_cstring(PG_GETARG_TEXT_PP(1)));
	PG_RETURN_BOOL(true);
}

/*
 * lsm_declared_among: which of names[0 .. n) (a NULL name: none) are
 * declared tables of the server named server, read from lancelsm_table
 * of the calling function's schema as its owner (the caller need not
 * SELECT it), as a palloc'd array of n flags; all false before the 1.1
 * catalog.  So that a direct call's runs count as a declared table's
 * (src/record/counters.c: then only for a role that may record).  Raises
 * only PostgreSQL's own errors.
 */
bool *
lsm_declared_among(FunctionCallInfo fcinfo, const char *server,
				   char **names, int n)
{
	bool	   *declared = palloc0(Max(n, 1) * sizeof(bool));
	Oid			nspid = get_func_namespace(fcinfo->flinfo->fn_oid);
	Oid			argtypes[2] = {TEXTOID, TEXTARRAYOID};
	Datum	   *elems = palloc(Max(n, 1) * sizeof(Datum));
	Datum		args[2];
	LsmRecordUser caller;
	int			m = 0;
	int			nestlevel;

	if (!OidIsValid(get_relname_relid("lancelsm_table", nspid)))
		return declared;
	for (int i = 0; i < n; i++)
		if (names[i] != NULL)
			elems[m++] = CStringGetTextDatum(names[i]);
	args[0] = CStringGetTextDatum(server);
	args[1] = PointerGetDatum(construct_array(elems, m, TEXTOID, -1, false,
											  TYPALIGN_INT));
	nestlevel = declared_spi_connect();
	lsm_record_as_owner(fcinfo, &caller);
	if (SPI_execute_with_args(psprintf("SELECT table_name FROM %s WHERE server = $1 AND table_name = ANY ($2)",
									   declared_relation(fcinfo)),
							  2, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args did not select");
	lsm_record_as_caller(&caller);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		char	   *name = SPI_getvalue(SPI_tuptable->vals[r],
										SPI_tuptable->tupdesc, 1);

		for (int i = 0; i < n; i++)
			declared[i] |= (names[i] != NULL && strcmp(names[i], name) == 0);
	}
	declared_spi_finish(nestlevel);
	return declared;
}

/*
 * declared_read_limits: the thresholds of row r of the SPI result of
 * declared_read's query with limits (columns 3..11) into table i of the
 * set, allocated in outer.
 */
static void
declared_read_limits(DeclaredSet *set, uint64 r, int i, MemoryContext outer)
{
	HeapTuple	tuple = SPI_tuptable->vals[r];
	TupleDesc	desc = SPI_tuptable->tupdesc;
	LsmLimits  *limits = &set->limits[i];
	MemoryContext old = MemoryContextSwitchTo(outer);
	bool		isnull;

	for (int c = 0; c < LSM_LIMIT_COLS; c++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, 2 + c);
		Datum		d = SPI_getbinval(tuple, desc, 3 + c, &isnull);
		int			k = i * LSM_LIMIT_COLS + c;

		set->limit_nulls[k] = isnull;
		set->limit_values[k] = isnull ? (Datum) 0 :
			datumCopy(d, attr->attbyval, attr->attlen);
		if (c < LSM_MEASURES)
		{
			limits->has_max[c] = !isnull;
			limits->max[c] = isnull ? 0 : DatumGetInt64(d);
		}
	}
	limits->age_over = DatumGetBool(SPI_getbinval(tuple, desc, 9, &isnull));
	limits->age = SPI_getvalue(tuple, desc, 10);
	limits->max_age = SPI_getvalue(tuple, desc, 11);
	MemoryContextSwitchTo(old);
}

/*
 * The columns of declared_read's query that read the plan (1.5), after
 * those of the thresholds: whether the next read is due (%d: the setting
 * lancelsm.max_read_interval in seconds), the last planned read and its
 * values, when the age expires, the bound in microseconds, the reason of
 * the plan.  The table is read when its plan says so, and also when its
 * bound or age says so now (a setting or a checkpoint changed since the
 * plan was made).
 */
static const char declared_plan_columns[] =
", (next_read_at IS NULL OR next_read_at <= now() OR plan_read_at IS NULL "
"OR plan_read_at + coalesce(max_read_interval, make_interval(secs => %d)) <= now() "
"OR coalesce(now() - coalesce(last_checkpoint_at, added_at) > max_checkpoint_age, false)), "
"plan_read_at, plan_read_values, coalesce(last_checkpoint_at, added_at) + max_checkpoint_age, "
"(extract(epoch FROM coalesce(max_read_interval, make_interval(secs => %d))) * 1000000)::int8, "
"next_read_reason";

/* The places a table's phase takes in [0, 1) (declared_read_plan). */
#define DECLARED_PHASES (1 << 20)

static int	declared_slice_of(const char *server, const char *table_name,
							  int32 slices);

/*
 * declared_read_plan: the plan of row r of the SPI result of
 * declared_read's query with the plan (columns 12..17) into table i of
 * the set, allocated in outer; with lancelsm.due_plan off every table is
 * to be read.
 */
static void
declared_read_plan(DeclaredSet *set, uint64 r, int i, MemoryContext outer)
{
	HeapTuple	tuple = SPI_tuptable->vals[r];
	TupleDesc	desc = SPI_tuptable->tupdesc;
	LsmReadPlanInput *in = &set->plan_in[i];
	bool		isnull;
	Datum		d;

	set->to_read[i] = !lsm_due_plan ||
		DatumGetBool(SPI_getbinval(tuple, desc, 12, &isnull));
	in->limits = &set->limits[i];
	d = SPI_getbinval(tuple, desc, 13, &isnull);
	in->prev_at = isnull ? 0 : DatumGetTimestampTz(d);
	d = SPI_getbinval(tuple, desc, 14, &isnull);
	in->has_prev = !isnull && in->prev_at != 0;
	if (in->has_prev)
	{
		ArrayType  *a = DatumGetArrayTypeP(d);
		Datum	   *elems;
		bool	   *elem_nulls;
		int			n;

		deconstruct_array(a, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
						  TYPALIGN_DOUBLE,
						  &elems, &elem_nulls, &n);
		in->has_prev = (n >= LSM_MEASURES);
		for (int m = 0; m < n && m < LSM_MEASURES; m++)
		{
			in->has_prev &= !elem_nulls[m];
			in->prev_values[m] = elem_nulls[m] ? 0 : DatumGetInt64(elems[m]);
		}
		in->has_prev_written = (n > LSM_MEASURES && !elem_nulls[LSM_MEASURES]);
		if (in->has_prev_written)
			in->prev_written = DatumGetInt64(elems[LSM_MEASURES]);
	}
	d = SPI_getbinval(tuple, desc, 15, &isnull);
	in->age_expiry = isnull ? 0 : DatumGetTimestampTz(d);
	in->bound_us = DatumGetInt64(SPI_getbinval(tuple, desc, 16, &isnull));
	set->plan_reasons[i] = SPI_getvalue(tuple, desc, 17);
	if (set->plan_reasons[i] != NULL)
		set->plan_reasons[i] = MemoryContextStrdup(outer, set->plan_reasons[i]);
	in->prev_rate_known = lsm_read_plan_rate_known(set->plan_reasons[i]);
	in->prev_bound = set->plan_reasons[i] != NULL &&
		strcmp(set->plan_reasons[i], "bound") == 0;
	in->phase = (double) declared_slice_of(set->servers[i], set->names[i],
										   DECLARED_PHASES) / DECLARED_PHASES;
}

/*
 * FNV-1a, 64 bits (offset basis and prime), over the bytes of a slice key.
 */
#define DECLARED_FNV_BASIS UINT64CONST(0xcbf29ce484222325)
#define DECLARED_FNV_PRIME UINT64CONST(0x100000001b3)

static uint64
declared_fnv1a(uint64 h, const char *bytes, size_t len)
{
	for (size_t i = 0; i < len; i++)
	{
		h ^= (unsigned char) bytes[i];
		h *= DECLARED_FNV_PRIME;
	}
	return h;
}

/*
 * declared_slice_of
 *		The slice (0 .. slices - 1) of a declared table, the same on every
 *		machine, PostgreSQL version and database encoding, so that slices
 *		run on several PostgreSQL servers over the same declarations need
 *		no coordination: h is the 64-bit FNV-1a hash of the server name in
 *		UTF-8, one zero byte, then the table name in UTF-8; h goes through
 *		MurmurHash3's 64-bit finalizer (fmix64: FNV's last byte barely
 *		reaches the high bits), and the slice is the result modulo slices.
 *		slices must be at least 1.  Raises 22021 for a name with a
 *		character UTF-8 cannot hold (never in a UTF-8 database).
 */
static int
declared_slice_of(const char *server, const char *table_name, int32 slices)
{
	const char *s = pg_server_to_any(server, strlen(server), PG_UTF8);
	const char *t = pg_server_to_any(table_name, strlen(table_name),
									 PG_UTF8);
	uint64		h;

	Assert(slices >= 1);
	h = declared_fnv1a(DECLARED_FNV_BASIS, s, strlen(s) + 1);
	h = declared_fnv1a(h, t, strlen(t));
	h ^= h >> 33;
	h *= UINT64CONST(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64CONST(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return (int) (h % (uint64) slices);
}

/*
 * declared_slice_rows: which rows of the SPI result of declared_read's
 * query (server, table_name first) are in slice slice of slices, and
 * their count into *count; NULL, all of them, with one slice.  Allocated
 * in the SPI context.
 */
static bool *
declared_slice_rows(int32 slice, int32 slices, int *count)
{
	bool	   *mine;

	*count = (int) SPI_processed;
	if (slices <= 1)
		return NULL;
	mine = palloc(Max(SPI_processed, 1) * sizeof(bool));
	*count = 0;
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *server = SPI_getvalue(tuple, desc, 1);
		char	   *name = SPI_getvalue(tuple, desc, 2);

		mine[r] = declared_slice_of(server, name, slices) == slice;
		*count += mine[r];
		pfree(server);
		pfree(name);
	}
	return mine;
}

/*
 * declared_read: the declared tables of slice slice of slices
 * (declared_slice_of; 0 of 1: all of them), ordered by server and
 * table_name under the "C" collation, into set->servers and set->names
 * and, with limits, their thresholds and, with the plan as well (from
 * the 1.5 catalog on; without it the plan's arrays are NULL), their
 * read plans, allocated in the caller's memory context.  The checkpoint
 * age runs from last_checkpoint_at, or from added_at for a table never
 * checkpointed, to the start of the transaction.  Errors: 42501 without
 * SELECT on lancelsm_table.
 */
static void
declared_read(FunctionCallInfo fcinfo, bool with_limits, bool with_plan,
			  int32 slice, int32 slices, DeclaredSet *set)
{
	MemoryContext outer = CurrentMemoryContext;
	bool	   *mine;
	int			n;
	int			i;
	int			nestlevel;
	int			rc;
	char	   *plan_columns = "";

	with_plan = with_limits && with_plan &&
		declared_has_column(fcinfo, "next_read_at");
	if (with_plan)
		plan_columns = psprintf(declared_plan_columns,
								lsm_max_read_interval_s,
								lsm_max_read_interval_s);
	nestlevel = declared_spi_connect();
	rc = SPI_execute(psprintf(with_limits ?
							  "SELECT server, table_name, max_l0_generations, max_l0_bytes, max_wal_lag, max_memtable_rows, max_checkpoint_age, last_checkpoint_at, "
							  "coalesce(now() - coalesce(last_checkpoint_at, added_at) > max_checkpoint_age, false), "
							  "date_trunc('second', now() - coalesce(last_checkpoint_at, added_at))::text, max_checkpoint_age::text%s "
							  "FROM %s ORDER BY server COLLATE \"C\", table_name COLLATE \"C\"" :
							  "SELECT server, table_name%s FROM %s ORDER BY server COLLATE \"C\", table_name COLLATE \"C\"",
							  plan_columns, declared_relation(fcinfo)), true, 0);
	if (rc != SPI_OK_SELECT)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg_internal("SPI_execute failed: %s",
								 SPI_result_code_string(rc))));
	mine = declared_slice_rows(slice, slices, &set->ntables);
	n = Max(set->ntables, 1);
	set->servers = MemoryContextAlloc(outer, n * sizeof(char *));
	set->names = MemoryContextAlloc(outer, n * sizeof(char *));
	set->limits = NULL;
	set->limit_values = NULL;
	set->limit_nulls = NULL;
	set->to_read = NULL;
	set->plan_in = NULL;
	set->plan_reasons = NULL;
	if (with_plan)
	{
		set->to_read = MemoryContextAlloc(outer, n * sizeof(bool));
		set->plan_in = MemoryContextAllocZero(outer,
											  n * sizeof(LsmReadPlanInput));
		set->plan_reasons = MemoryContextAlloc(outer, n * sizeof(char *));
	}
	if (with_limits)
	{
		set->limits = MemoryContextAllocZero(outer, n * sizeof(LsmLimits));
		set->limit_values = MemoryContextAlloc(outer,
											   n * LSM_LIMIT_COLS * sizeof(Datum));
		set->limit_nulls = MemoryContextAlloc(outer,
											  n * LSM_LIMIT_COLS * sizeof(bool));
	}
	i = 0;
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;

		if (mine != NULL && !mine[r])
			continue;
		set->servers[i] = MemoryContextStrdup(outer,
											  SPI_getvalue(tuple, desc, 1));
		set->names[i] = MemoryContextStrdup(outer,
											SPI_getvalue(tuple, desc, 2));
		if (with_limits)
			declared_read_limits(set, r, i, outer);
		if (with_plan)
			declared_read_plan(set, r, i, outer);
		i++;
	}
	declared_spi_finish(nestlevel);
}

/*
 * lsm_declared_resolve: read the declared tables of slice slice of slices
 * (0 of 1: all; see declared_slice_of, the caller checks 0 <= slice
 * < slices) with their thresholds when with_limits, and with their read
 * plans when with_plan too and the catalog has them, and resolve each
 * distinct server once, without
 * raising: set->table_configs holds each table's server (NULL where it
 * is unusable) and set->refusals the failure of a table whose server is
 * unusable (42704, 42809, 42501) or whose name is refused (22023), NULL
 * for the others.  No task is made (set->tasks is NULL): the caller makes
 * them with lsm_declared_task_init, all at once or a range at a time, and
 * must call lsm_declared_wipe on every path.  Errors: 42501 without
 * SELECT on lancelsm_table.
 */
pg_noinline void
lsm_declared_resolve(FunctionCallInfo fcinfo, bool with_limits,
					 bool with_plan, int32 slice, int32 slices,
					 DeclaredSet *set)
{
	LsmConfig  *config = NULL;
	LsmFailure *server_failure = NULL;
	int			n;

	declared_read(fcinfo, with_limits, with_plan, slice, slices, set);
	set->records = lsm_role_records(fcinfo);
	n = Max(set->ntables, 1);
	set->tasks = NULL;
	set->summaries = NULL;
	set->nconfigs = 0;
	set->configs = palloc(n * sizeof(LsmConfig *));
	set->table_configs = palloc(n * sizeof(LsmConfig *));
	set->refusals = palloc(n * sizeof(LsmFailure *));
	for (int i = 0; i < set->ntables; i++)
	{
		if (i == 0 || strcmp(set->servers[i], set->servers[i - 1]) != 0)
		{
			config = lsm_config_try_resolve(set->servers[i], &server_failure);
			if (config != NULL)
				set->configs[set->nconfigs++] = config;
		}
		set->table_configs[i] = config;
		set->refusals[i] = server_failure ? server_failure :
			lsm_table_name_problem(set->names[i]);
	}
}

/*
 * lsm_declared_task_init: initialise task as one task of the given kind
 * on table t of a resolved set (lsm_declared_resolve), declared and
 * started by lancelsm_checkpoint_all() (the run history's source of its
 * actions), counting for the table as the calling role may record; a
 * table whose server or name was refused gets a task already
 * finished with that failure.  What the task allocates goes to CurrentMemoryContext.
 */
void
lsm_declared_task_init(const DeclaredSet *set, int t, LsmTaskKind kind,
					   LsmTask *task)
{
	lsm_task_init(task, kind, set->table_configs[t], set->names[t], false);
	/* of the calls over the declared set, only checkpoint_all acts here */
	lsm_task_set_source(task, LSM_RUN_CHECKPOINT_ALL, true);
	lsm_task_set_records(task, set->records);
	if (set->refusals[t] != NULL)
		lsm_task_set_failure(task, set->refusals[t]);
}

/*
 * lsm_declared_prepare: lsm_declared_resolve, then one task of the given
 * kind per table in set->tasks.  The caller runs the tasks and must call
 * lsm_declared_wipe on every path.  Not inlined: its locals must stay out
 * of the caller's PG_TRY frame (-Wclobbered).
 */
pg_noinline void
lsm_declared_prepare(FunctionCallInfo fcinfo, LsmTaskKind kind,
					 bool with_limits, DeclaredSet *set)
{
	lsm_declared_resolve(fcinfo, with_limits, false, 0, 1, set);
	set->tasks = palloc0(Max(set->ntables, 1) * sizeof(LsmTask *));
	for (int i = 0; i < set->ntables; i++)
	{
		set->tasks[i] = palloc(sizeof(LsmTask));
		lsm_declared_task_init(set, i, kind, set->tasks[i]);
	}
}

/*
 * lsm_declared_wipe: wipe the API keys of the set's resolved servers.
 * Safe to call more than once.
 */
void
lsm_declared_wipe(DeclaredSet *set)
{
	for (int i = 0; i < set->nconfigs; i++)
		lsm_config_wipe(set->configs[i]);
}

/*
 * declared_keep_stats: keep what a finished stats task read of its table
 * (its summary, or its failure) as the table's last stats in shared
 * memory (lancelsm_last_stats), so that monitoring reads them without a
 * request.  Raises only out of memory.
 */
static void
declared_keep_stats(const LsmTask *task, const LsmTableSummary *summary)
{
	LsmTaskSnapshot snap;
	LsmStatsRead read;

	memset(&read, 0, sizeof(read));
	read.read_at = task->finished_at ? task->finished_at :
		GetCurrentTimestamp();
	read.ok = (task->failure == NULL);
	if (!read.ok)
	{
		strlcpy(read.sqlstate, unpack_sql_state(task->failure->sqlerrcode),
				sizeof(read.sqlstate));
		lsm_task_snapshot(task, &snap);
		lsm_counters_record_stats(&snap, &read);
		return;
	}
	read.lsm_enabled = task->stats->enabled;
	read.buckets = summary->nbuckets;
	read.l0_generations = summary->l0_generations;
	read.l0_bytes = summary->l0_bytes;
	read.memtable_rows = summary->memtable_rows;
	read.wal_lag_total = summary->wal_lag_total;
	read.wal_lag_max = summary->wal_lag_max;
	read.compacting_buckets = summary->compacting_buckets;
	lsm_task_snapshot(task, &snap);
	lsm_counters_record_stats(&snap, &read);
}

/*
 * lsm_declared_summarize_task: after a stats task has finished, the
 * summary of its table's buckets and totals into *summary (valid where
 * the task has no failure; what it points to is allocated in
 * CurrentMemoryContext).  A table whose numbers leave the bigint range
 * gets that as its task's failure, 22003 with a detail naming the value:
 * a row of that table, never an error of the call.  Either is kept as
 * the table's last stats (declared_keep_stats).  Raises only out of
 * memory.
 */
void
lsm_declared_summarize_task(LsmTask *task, LsmTableSummary *summary)
{
	LsmRangeProblem problem;

	if (task->failure == NULL &&
		!lsm_table_summarize(task->stats, task->include_generation_rows,
							 summary, &problem))
		lsm_task_set_failure(task,
							 lsm_fault_new(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
										   lsm_range_detail(&problem), NULL,
										   LSM_FAULT_READ_STATS,
										   task->table_name));
	declared_keep_stats(task, summary);
}

/*
 * lsm_declared_summarize: after the stats tasks of the set have finished,
 * lsm_declared_summarize_task for each into set->summaries (palloc'd, one
 * per table).  Raises only out of memory.
 */
void
lsm_declared_summarize(DeclaredSet *set)
{
	set->summaries = palloc0(Max(set->ntables, 1) * sizeof(LsmTableSummary));
	for (int t = 0; t < set->ntables; t++)
		lsm_declared_summarize_task(set->tasks[t], &set->summaries[t]);
}

/*
 * declared_collect: prepare and run one task of the given kind per
 * declared table, concurrently; every task's outcome is in the set, and
 * for stats tasks the summary of each table (lsm_declared_summarize).
 * API keys are wiped on every path.  Raises only PostgreSQL's own errors
 * (cancel, statement_timeout: 57014).
 */
static void
declared_collect(FunctionCallInfo fcinfo, LsmTaskKind kind, bool with_limits,
				 DeclaredSet *set)
{
	lsm_declared_prepare(fcinfo, kind, with_limits, set);
	if (kind == LSM_TASK_CHECKPOINT)
		for (int t = 0; t < set->ntables; t++)
			lsm_task_set_row_deadline(set->tasks[t]);
	PG_TRY();
	{
		if (kind == LSM_TASK_CHECKPOINT)
			lsm_herd_run_all(set->tasks, set->ntables, LSM_HERD_SKIP);
		else
			lsm_task_run_all(set->tasks, set->ntables);
	}
	PG_FINALLY();
	{
		lsm_declared_wipe(set);
	}
	PG_END_TRY();
	if (kind == LSM_TASK_STATS)
		lsm_declared_summarize(set);
}

/*
 * declared_names: the server and table_name columns of table t into
 * values/nulls from column i on.  Returns the column after them.
 */
static int
declared_names(const DeclaredSet *set, int t, Datum *values, bool *nulls,
			   int i)
{
	values[i] = CStringGetTextDatum(set->servers[t]);
	nulls[i++] = false;
	values[i] = CStringGetTextDatum(set->names[t]);
	nulls[i++] = false;
	return i;
}

/*
 * lancelsm_declared_bucket_stats()
 * RETURNS TABLE (server text, table_name text, <the columns of
 *   lancelsm_stats>)
 *
 * Backs the view lancelsm_bucket_stats: one row per bucket of every
 * declared table, one stats request per table, all concurrently, without
 * generation rows (l0_rows is NULL).  A table that fails (a number out of
 * range for bigint included), or has no LSM write path, has no rows here;
 * lancelsm_table_stats shows why.  Raises only on cancel or
 * statement_timeout (57014), 0A000 when the installed SQL objects are
 * older than this library (the hint names ALTER EXTENSION UPDATE), and
 * 22P05 naming the column when a shard id, status or index name of a
 * bucket has no equivalent in the database encoding
 * (docs/configuration.md, "Database encodings").
 */
PG_FUNCTION_INFO_V1(lancelsm_declared_bucket_stats);
Datum
lancelsm_declared_bucket_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lsm_materialize(fcinfo, LSM_BUCKET_STATS_COLS);
	DeclaredSet set;

	declared_collect(fcinfo, LSM_TASK_STATS, false, &set);
	for (int t = 0; t < set.ntables; t++)
	{
		const LsmTask *task = set.tasks[t];

		if (task->failure != NULL)
			continue;
		for (int b = 0; b < task->stats->nbuckets; b++)
		{
			Datum		values[LSM_BUCKET_STATS_COLS];
			bool		nulls[LSM_BUCKET_STATS_COLS];
			int			i = declared_names(&set, t, values, nulls, 0);

			i = lsm_stats_bucket_values(&task->stats->buckets[b],
										&set.summaries[t].buckets[b],
										values, nulls, i);
			lsm_put_row(rsinfo, values, nulls, i);
		}
	}
	return (Datum) 0;
}

/*
 * declared_due_columns: the 1.2 columns of lancelsm_table_stats after
 * error, into values/nulls from column i on: the thresholds of table t
 * and its last_checkpoint_at, then due, due_reason and due_action (NULL
 * when its stats failed).  Returns the column after the last one written.
 */
static int
declared_due_columns(const DeclaredSet *set, int t, Datum *values,
					 bool *nulls, int i)
{
	bool		failed = (set->tasks[t]->failure != NULL);
	LsmDueAction action = LSM_DUE_NONE;
	char	   *reason = NULL;

	for (int c = 0; c < LSM_LIMIT_COLS; c++)
	{
		values[i] = set->limit_values[t * LSM_LIMIT_COLS + c];
		nulls[i++] = set->limit_nulls[t * LSM_LIMIT_COLS + c];
	}
	if (!failed)
		action = lsm_due_evaluate(&set->limits[t], &set->summaries[t],
								  &reason);
	values[i] = BoolGetDatum(action != LSM_DUE_NONE);
	nulls[i++] = failed;
	values[i] = reason ? CStringGetTextDatum(reason) : (Datum) 0;
	nulls[i++] = (reason == NULL);
	values[i] = CStringGetTextDatum(lsm_due_action_name(action));
	nulls[i++] = failed;
	return i;
}

/*
 * declared_table_row: the lancelsm_table_stats row of table t, whose
 * stats task has finished and been summarized: the totals, or NULL
 * totals and the failure's SQLSTATE and message; with the 1.2 shape (the
 * set read with limits), then its thresholds and whether it is due.
 */
static void
declared_table_row(ReturnSetInfo *rsinfo, const DeclaredSet *set, int t)
{
	Datum		values[LSM_TABLE_STATS_COLS_V1_2];
	bool		nulls[LSM_TABLE_STATS_COLS_V1_2];
	const LsmTask *task = set->tasks[t];
	bool		ok = (task->failure == NULL);
	LsmTableSummary none = {0};
	const LsmTableSummary *sum = ok ? &set->summaries[t] : &none;
	int			i;

	memset(nulls, !ok, sizeof(nulls));	/* a failure: NULL totals */
	i = declared_names(set, t, values, nulls, 0);
	values[i++] = BoolGetDatum(ok && task->stats->enabled);
	values[i++] = Int32GetDatum(sum->nbuckets);
	values[i++] = Int64GetDatum(sum->l0_generations);
	values[i++] = Int64GetDatum(sum->l0_bytes);
	values[i++] = Int64GetDatum(sum->memtable_rows);
	values[i++] = Int64GetDatum(sum->wal_lag_total);
	nulls[i] |= (sum->nbuckets == 0);
	values[i++] = Int64GetDatum(sum->wal_lag_max);
	values[i++] = Int32GetDatum(sum->compacting_buckets);
	i = lsm_failure_columns(task->failure, values, nulls, i);
	if (set->limits != NULL)
		i = declared_due_columns(set, t, values, nulls, i);
	lsm_put_row(rsinfo, values, nulls, i);
}

/*
 * lancelsm_declared_table_stats()
 * RETURNS TABLE (server text, table_name text, lsm_enabled boolean,
 *   buckets integer, l0_generations bigint, l0_bytes bigint,
 *   memtable_rows bigint, wal_lag_total bigint, wal_lag_max bigint,
 *   compacting_buckets integer, error_sqlstate text, error text,
 *   max_l0_generations bigint, max_l0_bytes bigint, max_wal_lag bigint,
 *   max_memtable_rows bigint, max_checkpoint_age interval,
 *   last_checkpoint_at timestamptz, due boolean, due_reason text,
 *   due_action text)
 *
 * Backs the view lancelsm_table_stats: one row per declared table, one
 * stats request per table, all concurrently.  The totals are over the
 * table's buckets: wal_lag_total and wal_lag_max are the sum and the
 * maximum of wal_entry_position_last_seen - replay_after_wal_entry_position
 * (WAL entries not yet covered by a flush; wal_lag_max is NULL without
 * buckets), memtable_rows counts the buckets that report memtables.
 * lsm_enabled is false for a table without an LSM write path (no buckets,
 * zero totals).  A table that fails has NULL in every column but server,
 * table_name, error_sqlstate and error ("errmsg: errdetail") and its
 * thresholds; a number of the table out of range for bigint is such a
 * failure (22003, the detail naming the value).  The thresholds come
 * from lancelsm_table; due, due_reason and due_action say what lancelsm_checkpoint_due() would do now (see
 * src/functions/threshold.c).  Declared by 1.1, it has the first 12 columns only.
 * Raises only on cancel or statement_timeout (57014), and 0A000 when the
 * installed SQL objects are older than this library (the hint names ALTER
 * EXTENSION UPDATE).
 */
PG_FUNCTION_INFO_V1(lancelsm_declared_table_stats);
Datum
lancelsm_declared_table_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DeclaredSet set;
	int			natts;

	InitMaterializedSRF(fcinfo, 0);
	natts = rsinfo->setDesc->natts;
	if (natts != LSM_TABLE_STATS_COLS_V1_1 && natts != LSM_TABLE_STATS_COLS_V1_2)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("lancelsm_declared_table_stats is declared with %d columns, which this lancelsm library does not support",
						natts),
				 lsm_mismatch_hint(natts > LSM_TABLE_STATS_COLS_V1_2)));
	declared_collect(fcinfo, LSM_TASK_STATS,
					 natts == LSM_TABLE_STATS_COLS_V1_2, &set);
	for (int i = 0; i < set.ntables; i++)
		declared_table_row(rsinfo, &set, i);
	return (Datum) 0;
}

/*
 * declared_has_column: whether lancelsm_table has the column (not before
 * ALTER EXTENSION lancelsm UPDATE to 1.2).
 */
static bool
declared_has_column(FunctionCallInfo fcinfo, const char *column)
{
	Oid			nspid = get_func_namespace(fcinfo->flinfo->fn_oid);
	Oid			relid = get_relname_relid("lancelsm_table", nspid);

	return OidIsValid(relid) && get_attnum(relid, column) != InvalidAttrNumber;
}

/* What declared_update_safely records, for its WARNING. */
typedef enum DeclaredWrite
{
	DECLARED_WRITE_CHECKPOINT,	/* last_checkpoint_at */
	DECLARED_WRITE_OUTCOMES,	/* the last_* outcome columns (1.4) */
	DECLARED_WRITE_PLANS		/* the read plans (1.5) */
} DeclaredWrite;

/*
 * declared_update_safely: run an UPDATE of lancelsm_table (template:
 * %s is the table) with nargs parameters of the given types, never NULL,
 * in a subtransaction, as the table's owner (src/functions/recording.c:
 * the caller checked that the current role may record).  An error (a
 * read-only transaction: 25006, ...) becomes a WARNING with its
 * SQLSTATE, saying what was not recorded (what); cancel and
 * statement_timeout (57014) still raise.
 */
static void
declared_update_safely(FunctionCallInfo fcinfo, const char *template,
					   int nargs, Oid *argtypes, Datum *args,
					   DeclaredWrite what)
{
	char	   *query = psprintf(template, declared_relation(fcinfo));
	MemoryContext outer = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(outer);
	PG_TRY();
	{
		int			nestlevel = declared_spi_connect();
		LsmRecordUser caller;
		int			rc;

		lsm_record_as_owner(fcinfo, &caller);
		rc = SPI_execute_with_args(query, nargs, argtypes, args, NULL, false,
								   0);
		if (rc != SPI_OK_UPDATE && rc != SPI_OK_INSERT)
			elog(ERROR, "SPI_execute_with_args did not update");
		lsm_record_as_caller(&caller);
		declared_spi_finish(nestlevel);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(outer);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(outer);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(outer);
		CurrentResourceOwner = owner;
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
			ReThrowError(edata);
		if (what == DECLARED_WRITE_PLANS)
			ereport(WARNING,
					(errcode(edata->sqlerrcode),
					 errmsg("could not record the read plans of declared tables"),
					 errdetail_internal("%s", edata->message),
					 errhint("The tables read by this run are read again at the next run.")));
		else if (what == DECLARED_WRITE_OUTCOMES)
			ereport(WARNING,
					(errcode(edata->sqlerrcode),
					 errmsg("could not record the outcomes of declared tables"),
					 errdetail_internal("%s", edata->message),
					 errhint("The actions ran; only their outcomes in lancelsm_table were not updated.")));
		else
			ereport(WARNING,
					(errcode(edata->sqlerrcode),
					 errmsg("could not record the last checkpoint of declared tables"),
					 errdetail_internal("%s", edata->message),
					 errhint("The checkpoints ran; only last_checkpoint_at in lancelsm_table was not updated.")));
	}
	PG_END_TRY();
}

/*
 * lsm_declared_record: set last_checkpoint_at in lancelsm_table to the
 * start of each checkpoint among tasks (one per table of the set, NULL
 * where none ran) that succeeded, never moving it back.  Runs in the
 * calling transaction as the table's owner, for a caller that may record
 * (lsm_role_require_record): it is lost if that transaction rolls back,
 * and where it cannot be written (a read-only transaction) a WARNING says
 * so and nothing raises.  Does nothing before the 1.2 catalog.
 */
void
lsm_declared_record(FunctionCallInfo fcinfo, const DeclaredSet *set,
					LsmTask **tasks)
{
	Datum	   *servers = palloc(Max(set->ntables, 1) * sizeof(Datum));
	Datum	   *names = palloc(Max(set->ntables, 1) * sizeof(Datum));
	Datum	   *starts = palloc(Max(set->ntables, 1) * sizeof(Datum));
	Oid			argtypes[3] = {TEXTARRAYOID, TEXTARRAYOID,
	TIMESTAMPTZARRAYOID};
	Datum		args[3];
	int			n = 0;

	for (int i = 0; i < set->ntables; i++)
	{
		const LsmTask *task = tasks[i];

		if (task == NULL || task->kind != LSM_TASK_CHECKPOINT ||
			task->failure != NULL || task->started_at == 0)
			continue;
		servers[n] = CStringGetTextDatum(set->servers[i]);
		names[n] = CStringGetTextDatum(set->names[i]);
		starts[n++] = TimestampTzGetDatum(task->started_at);
	}
	if (n == 0 || !declared_has_column(fcinfo, "last_checkpoint_at"))
		return;
	args[0] = PointerGetDatum(construct_array(servers, n, TEXTOID, -1, false,
											  TYPALIGN_INT));
	args[1] = PointerGetDatum(construct_array(names, n, TEXTOID, -1, false,
											  TYPALIGN_INT));
	args[2] = PointerGetDatum(construct_array(starts, n, TIMESTAMPTZOID,
											  sizeof(TimestampTz), true,
											  TYPALIGN_DOUBLE));
	declared_update_safely(fcinfo,
						   "UPDATE %s t SET last_checkpoint_at = greatest(t.last_checkpoint_at, u.at) "
						   "FROM unnest($1, $2, $3) u(server, table_name, at) "
						   "WHERE t.server = u.server AND t.table_name = u.table_name",
						   3, argtypes, args, DECLARED_WRITE_CHECKPOINT);
}

/*
 * lsm_declared_record_outcomes: record the outcomes of a call in
 * lancelsm_table and, from 1.5, the messages in lancelsm_table_message
 * (src/functions/outcome.c says which), in the calling transaction as the
 * table's owner: where that fails, a WARNING says so and nothing raises
 * (as lsm_declared_record).  Does nothing before the 1.4 catalog, and for
 * a direct call by a role that may not record.
 */
void
lsm_declared_record_outcomes(FunctionCallInfo fcinfo,
							 const LsmOutcomeCall *call)
{
	LsmOutcomeUpdate update;

	if (lsm_outcome_update(fcinfo, call, &update))
		declared_update_safely(fcinfo, update.template, LSM_OUTCOME_PARAMS,
							   update.argtypes, update.args,
							   DECLARED_WRITE_OUTCOMES);
}

/*
 * declared_array: an array of n Datums of a type (int8, timestamptz or
 * text), NULL where nulls says so (nulls NULL: none).
 */
static Datum
declared_array(Datum *elems, bool *nulls, int n, Oid type)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int16		len;
	bool		byval;
	char		align;

	get_typlenbyvalalign(type, &len, &byval, &align);
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs,
											  type, len, byval, align));
}

/* The UPDATE of lsm_declared_record_plans: one row per table read. */
static const char declared_plan_update[] =
"UPDATE %s t SET next_read_at = u.next_read_at, next_read_reason = u.reason, "
"plan_read_at = CASE WHEN u.ok THEN u.read_at ELSE t.plan_read_at END, "
"plan_read_values = CASE WHEN u.ok THEN ARRAY[u.l0_generations, u.l0_bytes, u.wal_lag, u.memtable_rows, u.written] "
"ELSE t.plan_read_values END "
"FROM unnest($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
"u(server, table_name, next_read_at, reason, ok, read_at, l0_generations, l0_bytes, wal_lag, memtable_rows, written) "
"WHERE t.server = u.server AND t.table_name = u.table_name";

/* The parameters of declared_plan_update: arrays of these types. */
#define DECLARED_PLAN_PARAMS 11

/*
 * lsm_declared_record_plans: write the read plan of each table of the
 * set that rows (one per table) says was read: next_read_at and
 * next_read_reason and, for a read that succeeded, plan_read_at and
 * plan_read_values (a failed read keeps the last good one).  Written as
 * lsm_declared_record_outcomes writes: in the calling transaction, as
 * the owner of lancelsm_table, a WARNING where that fails (the tables
 * are then read again at the next run, the safe direction); lost if the
 * transaction rolls back, likewise.  Does nothing without the plan
 * (before the 1.5 catalog), nor for a role that may not record.
 */
void
lsm_declared_record_plans(FunctionCallInfo fcinfo, const DeclaredSet *set,
						  const DeclaredPlanRow *rows)
{
	int			n = 0;
	int			size = Max(set->ntables, 1);
	Datum	   *cols[DECLARED_PLAN_PARAMS];
	bool	   *next_nulls = palloc(size * sizeof(bool));
	Oid			types[DECLARED_PLAN_PARAMS] = {TEXTOID, TEXTOID, TIMESTAMPTZOID,
		TEXTOID, BOOLOID, TIMESTAMPTZOID, INT8OID, INT8OID, INT8OID, INT8OID,
	INT8OID};
	Oid			argtypes[DECLARED_PLAN_PARAMS];
	Datum		args[DECLARED_PLAN_PARAMS];

	if (set->plan_in == NULL || !set->records)
		return;
	for (int c = 0; c < DECLARED_PLAN_PARAMS; c++)
		cols[c] = palloc(size * sizeof(Datum));
	for (int t = 0; t < set->ntables; t++)
	{
		const DeclaredPlanRow *row = &rows[t];

		if (!row->read)
			continue;
		cols[0][n] = CStringGetTextDatum(set->servers[t]);
		cols[1][n] = CStringGetTextDatum(set->names[t]);
		cols[2][n] = TimestampTzGetDatum(row->next_read_at);
		next_nulls[n] = (row->next_read_at == 0);
		cols[3][n] = CStringGetTextDatum(row->reason);
		cols[4][n] = BoolGetDatum(row->read_ok);
		cols[5][n] = TimestampTzGetDatum(row->read_at);
		for (int m = 0; m < LSM_MEASURES; m++)
			cols[6 + m][n] = Int64GetDatum(row->values[m]);
		cols[6 + LSM_MEASURES][n] = Int64GetDatum(row->written);
		n++;
	}
	if (n == 0)
		return;
	for (int c = 0; c < DECLARED_PLAN_PARAMS; c++)
	{
		args[c] = declared_array(cols[c], c == 2 ? next_nulls : NULL, n,
								 types[c]);
		argtypes[c] = get_array_type(types[c]);
	}
	declared_update_safely(fcinfo, declared_plan_update, DECLARED_PLAN_PARAMS,
						   argtypes, args, DECLARED_WRITE_PLANS);
}

/*
 * declared_outcomes: the tables of a lancelsm_checkpoint_all() call and
 * what it did to each, for the record (src/functions/outcome.c); none
 * before its checkpoint tasks are made.
 */
static LsmOutcomeCall *
declared_outcomes(const DeclaredSet *set)
{
	LsmOutcomeCall *call = palloc0(sizeof(LsmOutcomeCall));

	call->source = LSM_OUTCOME_CHECKPOINT_ALL;
	call->ntables = set->tasks ? set->ntables : 0;
	call->servers = set->servers;
	call->names = set->names;
	call->acts = set->tasks;
	call->kind = LSM_TASK_CHECKPOINT;
	return call;
}

/*
 * lancelsm_checkpoint_all(strict boolean DEFAULT false)
 * RETURNS TABLE (server text, table_name text, ok boolean, sqlstate text,
 *   message text, elapsed interval, passes integer, polls integer)
 *
 * Checkpoints every declared table concurrently (one driver over the
 * tables of all servers, the statement's deadline shared), each exactly as
 * lancelsm_checkpoint(server, table_name).  One row per declared table,
 * with the columns of lancelsm_checkpoint(text, text[]) after server; a
 * table whose server is unusable (42704, 42809, 42501) or whose name is
 * refused (22023) gets its failure row with a NULL elapsed.  A table
 * whose checkpoint another backend of this cluster is running (with
 * lancelsm preloaded, and paced alike: src/task/herd.c) is skipped,
 * which is no success: ok false, sqlstate 55006, elapsed NULL, passes and
 * polls 0, message "skipped: a checkpoint of this table is running in
 * backend N", and neither its last_checkpoint_at nor its outcome is set.
 * Each checkpoint that succeeded sets its table's last_checkpoint_at (see
 * lsm_declared_record: a WARNING where it cannot), and each that ran its
 * table's outcome (src/functions/outcome.c).  A checkpoint still
 * waiting shortly before statement_timeout (the smaller of 1 s and a
 * tenth of it: lsm_statement_row_deadline) is given up: its row has ok
 * false, 57014 and what it was waiting on (passes that ended without
 * draining anything, a bucket that is not Active), and the tables that
 * converged keep their rows and their last_checkpoint_at.  Each failed
 * row is logged at LOG, naming its server and table (at most
 * LSM_LOG_FAILED_ROWS per call), and one WARNING counts them; the other
 * checkpoints are logged as lancelsm.log_min_duration says.  With strict
 * true (1.5), a call in which any table failed ends, once every outcome
 * is recorded, in the ERROR of lancelsm_checkpoint_due(strict => true)
 * (src/functions/due.c) instead of the WARNING.  Raises on cancel, or
 * statement_timeout before the rows are out (57014), 22004 for a NULL
 * strict, 42501, before any request, for a role that may not record
 * (src/functions/recording.c), and with strict as above.  Declared by 1.1 to 1.4 without
 * arguments.
 */
PG_FUNCTION_INFO_V1(lancelsm_checkpoint_all);
Datum
lancelsm_checkpoint_all(PG_FUNCTION_ARGS)
{
	static const char *const names[] = {"strict"};
	MemoryContext cxt = CurrentMemoryContext;
	ReturnSetInfo *rsinfo;
	DeclaredSet set;
	LsmFailedRows log = {0};

	lsm_no_null_args(fcinfo, names);
	rsinfo = lsm_materialize(fcinfo, LSM_CHECKPOINT_ALL_COLS);
	lsm_role_require_record(fcinfo);
	memset(&set, 0, sizeof(set));
	PG_TRY();
	{
		declared_collect(fcinfo, LSM_TASK_CHECKPOINT, false, &set);
	}
	PG_CATCH();
	{
		/* out of ErrorContext, which lsm_outcome_error flushes */
		MemoryContextSwitchTo(cxt);
		lsm_outcome_error(fcinfo, declared_outcomes(&set), cxt);
	}
	PG_END_TRY();
	lsm_declared_record(fcinfo, &set, set.tasks);
	lsm_declared_record_outcomes(fcinfo, declared_outcomes(&set));
	for (int t = 0; t < set.ntables; t++)
	{
		Datum		values[LSM_CHECKPOINT_ALL_COLS];
		bool		nulls[LSM_CHECKPOINT_ALL_COLS];
		int			i = 0;

		if (set.tasks[t]->failure != NULL)
			lsm_log_failed_row(&log, set.servers[t], set.names[t],
							   set.tasks[t]->failure);
		else
			lsm_log_action(set.servers[t], set.tasks[t]);

		values[i] = CStringGetTextDatum(set.servers[t]);
		nulls[i++] = false;
		i = lsm_checkpoint_row_values(set.tasks[t], values, nulls, i);
		lsm_put_row(rsinfo, values, nulls, i);
	}
	if (lsm_strict_arg(fcinfo, 0))
		lsm_failed_rows_raise(&log, set.ntables);
	lsm_log_failed_summary(&log, set.ntables);
	return (Datum) 0;
}
