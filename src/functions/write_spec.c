/*-------------------------------------------------------------------------
 *
 * write_spec.c
 *		The SQL functions over a table's LSM write spec, the setting that
 *		turns its LSM write path on: lancelsm_set_write_spec,
 *		lancelsm_unset_write_spec and lancelsm_write_spec.
 *
 * Arguments are checked here, before any request: a spec the server would
 * refuse for its shape (an unrecognized sharding, a missing or superfluous
 * column or bucket count, a bucket count out of range, defaults that are
 * not an object of strings, an empty or repeated index name) is a 22023
 * error that costs no round trip.  The request body is built by
 * src/protocol/lsm_json.c (jansson), the answer of a read decoded strictly there;
 * this file sees only the plain C LsmWriteSpec.  Requests run as tasks
 * (src/task/step_spec.c) under the per-request retry policy of
 * src/task/retry.c.
 *
 * Strings cross the wire in UTF-8 and are converted from and to the
 * server encoding here.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "functions/entry.h"
#include "functions/functions.h"
#include "settings.h"
#include "protocol/protocol.h"
#include "mb/pg_wchar.h"
#include "task/task.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"
#include "wire_text.h"

/* Bucket counts the protocol accepts. */
#define WRITE_SPEC_MIN_BUCKETS 1
#define WRITE_SPEC_MAX_BUCKETS 1024

/*
 * spec_to_utf8: a server-encoded string as UTF-8 for the wire (raises
 * PostgreSQL's conversion error: 22P05, or 22021 for bytes of a
 * SQL_ASCII database that are not UTF-8).
 */
static char *
spec_to_utf8(const char *s)
{
	return lsm_text_to_wire(s);
}

/*
 * spec_from_utf8: a UTF-8 string from the wire in the server encoding,
 * shown as column column (raises 22P05 naming it when it has no
 * equivalent there).
 */
static char *
spec_from_utf8(const char *s, const char *column)
{
	return lsm_text_from_wire(s, column);
}

/*
 * spec_reject_null: raise 22004 for a NULL argument that means nothing.
 */
pg_noreturn static void
spec_reject_null(const char *argument)
{
	ereport(ERROR,
			(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
			 errmsg("argument \"%s\" of the LSM write spec must not be null",
					argument)));
}

/*
 * spec_check_shape: the sharding and its column and bucket count.
 * mode is the sharding argument; column and num_buckets may be NULL /
 * absent (has_buckets false).  Raises 22023 naming what is wrong.
 */
static void
spec_check_shape(const char *mode, const char *column, bool has_buckets,
				 int32 num_buckets)
{
	bool		wants_column;
	bool		wants_buckets;

	if (strcmp(mode, "bucket") != 0 && strcmp(mode, "identity") != 0 &&
		strcmp(mode, "unsharded") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sharding \"%s\" is not recognized", mode),
				 errhint("The shardings are \"bucket\", \"identity\" and \"unsharded\".")));
	wants_column = (strcmp(mode, "unsharded") != 0);
	wants_buckets = (strcmp(mode, "bucket") == 0);
	if (wants_column && column == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sharding \"%s\" needs a sharding_column", mode)));
	if (!wants_column && column != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sharding \"%s\" takes no sharding_column", mode)));
	if (column != NULL && column[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sharding_column must not be empty")));
	if (wants_buckets && !has_buckets)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sharding \"%s\" needs num_buckets", mode)));
	if (!wants_buckets && has_buckets)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sharding \"%s\" takes no num_buckets", mode)));
	if (has_buckets && (num_buckets < WRITE_SPEC_MIN_BUCKETS ||
						num_buckets > WRITE_SPEC_MAX_BUCKETS))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("num_buckets %d is out of range", num_buckets),
				 errdetail("The number of buckets must be between %d and %d.",
						   WRITE_SPEC_MIN_BUCKETS, WRITE_SPEC_MAX_BUCKETS)));
}

/*
 * spec_indexes: the index names of the maintained_indexes array into
 * spec (UTF-8).  Raises 22023 for a NULL or empty name, a name given
 * twice, or an array of more than one dimension.
 */
static void
spec_indexes(ArrayType *array, LsmWriteSpec *spec)
{
	Datum	   *elems;
	bool	   *elem_nulls;
	int			n;
	bool	   *dup;

	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("maintained_indexes must be a one-dimensional array")));
	deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, &elem_nulls, &n);
	spec->indexes = palloc(Max(n, 1) * sizeof(char *));
	for (int i = 0; i < n; i++)
	{
		if (elem_nulls[i] || VARSIZE_ANY_EXHDR(DatumGetPointer(elems[i])) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("maintained_indexes must not contain an empty or null index name")));
		spec->indexes[i] = TextDatumGetCString(elems[i]);
	}
	dup = lsm_duplicate_flags(spec->indexes, n);
	for (int i = 0; i < n; i++)
		if (dup[i])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("maintained_indexes names index \"%s\" more than once",
							spec->indexes[i])));
	for (int i = 0; i < n; i++)
		spec->indexes[i] = spec_to_utf8(spec->indexes[i]);
	spec->nindexes = n;
}

/*
 * spec_defaults: the members of writer_config_defaults into spec (UTF-8).
 * Raises 22023 unless it is a JSON object whose values are all strings.
 */
static void
spec_defaults(Jsonb *jb, LsmWriteSpec *spec)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			n = 0;

	if (!JB_ROOT_IS_OBJECT(jb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("writer_config_defaults must be a JSON object of strings"),
				 errdetail("It is not a JSON object.")));
	spec->default_keys = palloc((JB_ROOT_COUNT(jb) + 1) * sizeof(char *));
	spec->default_values = palloc((JB_ROOT_COUNT(jb) + 1) * sizeof(char *));
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			spec->default_keys[n] = pnstrdup(v.val.string.val,
											 v.val.string.len);
		else if (tok == WJB_VALUE && v.type != jbvString)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("writer_config_defaults must be a JSON object of strings"),
					 errdetail("The value of \"%s\" is not a string.",
							   spec->default_keys[n])));
		else if (tok == WJB_VALUE)
		{
			spec->default_keys[n] = spec_to_utf8(spec->default_keys[n]);
			spec->default_values[n++] =
				spec_to_utf8(pnstrdup(v.val.string.val, v.val.string.len));
		}
	}
	spec->ndefaults = n;
}

/*
 * spec_from_args: the spec of lancelsm_set_write_spec's arguments 2..6,
 * checked; raises 22004 for a NULL that means nothing, 22023 otherwise.
 */
static LsmWriteSpec *
spec_from_args(FunctionCallInfo fcinfo)
{
	LsmWriteSpec *spec = palloc0(sizeof(LsmWriteSpec));
	char	   *mode;
	char	   *column = NULL;

	if (PG_ARGISNULL(2))
		spec_reject_null("sharding");
	if (PG_ARGISNULL(6))
		spec_reject_null("writer_config_defaults");
	mode = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (!PG_ARGISNULL(3))
		column = text_to_cstring(PG_GETARG_TEXT_PP(3));
	spec_check_shape(mode, column, !PG_ARGISNULL(4),
					 PG_ARGISNULL(4) ? 0 : PG_GETARG_INT32(4));
	spec->enabled = true;
	spec->mode = mode;
	spec->column = column ? spec_to_utf8(column) : NULL;
	spec->num_buckets = PG_ARGISNULL(4) ? 0 : PG_GETARG_INT32(4);
	spec->all_indexes = PG_ARGISNULL(5);
	if (!spec->all_indexes)
		spec_indexes(PG_GETARG_ARRAYTYPE_P(5), spec);
	spec_defaults(PG_GETARG_JSONB_P(6), spec);
	return spec;
}

/*
 * spec_check_target: raise 22004 when the server or table name is NULL.
 */
static void
spec_check_target(FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(0))
		spec_reject_null("server");
	if (PG_ARGISNULL(1))
		spec_reject_null("table_name");
}

/*
 * lancelsm_set_write_spec(server text, table_name text, sharding text,
 *   sharding_column text DEFAULT NULL, num_buckets integer DEFAULT NULL,
 *   maintained_indexes text[] DEFAULT NULL,
 *   writer_config_defaults jsonb DEFAULT '{}') RETURNS void
 *
 * Installs the table's LSM write spec, which turns its LSM write path on
 * (POST /v1/table/{id}/set_lsm_write_spec/, any 2xx succeeds; its body is
 * ignored).  sharding is 'bucket' (with sharding_column, the table's
 * unenforced primary key, and num_buckets, 1 to 1024), 'identity' (with
 * sharding_column) or 'unsharded' (neither).  maintained_indexes NULL
 * asks the server to maintain every maintainable index; '{}' none.
 * writer_config_defaults is a JSON object of strings.
 *
 * Errors before any request: 22004 a NULL server, table_name, sharding
 * or writer_config_defaults; 22023 any argument of the wrong shape (the
 * message says which); 22P05 a string UTF-8 cannot hold, 22021 one of a
 * SQL_ASCII database that is not UTF-8.  From the server: 400 as 55000 (no unenforced
 * primary key, bucketed column not the key, a spec already set), and
 * every error of lancelsm_flush.  Retries 429 and 503 within
 * lancelsm.retry_budget, nothing else.  Not executable by PUBLIC.
 */
PG_FUNCTION_INFO_V1(lancelsm_set_write_spec);
Datum
lancelsm_set_write_spec(PG_FUNCTION_ARGS)
{
	LsmWriteSpec *spec;
	char	   *body;

	spec_check_target(fcinfo);
	spec = spec_from_args(fcinfo);
	body = lsm_json_write_spec_body(spec);
	if (body == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Could not build the write spec request body.")));
	lsm_run_with_body(LSM_TASK_SET_SPEC, PG_GETARG_TEXT_PP(0),
					  PG_GETARG_TEXT_PP(1), body);
	PG_RETURN_VOID();
}

/*
 * lancelsm_unset_write_spec(server text, table_name text) RETURNS void
 *
 * Removes the table's LSM write spec, which turns its LSM write path off
 * (POST /v1/table/{id}/unset_lsm_write_spec/, no body; any 2xx
 * succeeds).  The server refuses when no spec is set: 400, raised as 55000.  Retries 429
 * and 503 (answered before the server acted) within
 * lancelsm.retry_budget, on a fresh connection; nothing else, since a
 * second unset after one that worked would fail.  Other errors as
 * lancelsm_flush.  Not executable by PUBLIC.
 */
PG_FUNCTION_INFO_V1(lancelsm_unset_write_spec);
Datum
lancelsm_unset_write_spec(PG_FUNCTION_ARGS)
{
	lsm_run_with_body(LSM_TASK_UNSET_SPEC, PG_GETARG_TEXT_PP(0),
					  PG_GETARG_TEXT_PP(1), NULL);
	PG_RETURN_VOID();
}

/*
 * spec_defaults_jsonb: writer_config_defaults of a decoded spec as jsonb.
 */
static Datum
spec_defaults_jsonb(const LsmWriteSpec *spec)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int i = 0; i < spec->ndefaults; i++)
	{
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		escape_json(&buf, spec_from_utf8(spec->default_keys[i],
										 "writer_config_defaults"));
		appendStringInfoString(&buf, ": ");
		escape_json(&buf, spec_from_utf8(spec->default_values[i],
										 "writer_config_defaults"));
	}
	appendStringInfoChar(&buf, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

/*
 * lancelsm_write_spec(server text, table_name text)
 * RETURNS TABLE (sharding text, sharding_column text, num_buckets integer,
 *   maintained_indexes text[], writer_config_defaults jsonb)
 *
 * Reads the table's LSM write spec (POST
 * /v1/table/{id}/get_lsm_write_spec/, any 2xx): one row, or none when
 * the LSM write path is off ("lsm_write_spec": null).  sharding_column is
 * NULL for 'unsharded', num_buckets NULL unless 'bucket';
 * maintained_indexes is the concrete list the server resolved, or NULL
 * when the server answers null: every index the table has.  The
 * answer is decoded strictly: a missing or mistyped field is 08P01.
 * Retries 429 and 503 within lancelsm.retry_budget.  A string of the
 * answer the database encoding cannot hold is 22P05 naming its column.
 * Other errors as lancelsm_flush.
 */
PG_FUNCTION_INFO_V1(lancelsm_write_spec);
Datum
lancelsm_write_spec(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lsm_materialize(fcinfo, LSM_WRITE_SPEC_COLS);
	const LsmWriteSpec *spec;
	Datum		values[LSM_WRITE_SPEC_COLS];
	bool		nulls[LSM_WRITE_SPEC_COLS] = {0};
	int			i = 0;

	spec = lsm_run_with_body(LSM_TASK_GET_SPEC, PG_GETARG_TEXT_PP(0),
							 PG_GETARG_TEXT_PP(1), NULL)->spec;
	if (!spec->enabled)
		return (Datum) 0;
	values[i++] = CStringGetTextDatum(spec_from_utf8(spec->mode, "sharding"));
	nulls[i] = (spec->column == NULL);
	values[i++] = spec->column ?
		CStringGetTextDatum(spec_from_utf8(spec->column, "sharding_column")) :
		(Datum) 0;
	nulls[i] = (strcmp(spec->mode, "bucket") != 0);
	values[i++] = Int32GetDatum((int32) spec->num_buckets);
	nulls[i] = spec->all_indexes;
	values[i++] = spec->all_indexes ? (Datum) 0 :
		lsm_text_array(spec->indexes, spec->nindexes, "maintained_indexes");
	values[i++] = spec_defaults_jsonb(spec);
	lsm_put_row(rsinfo, values, nulls, i);
	return (Datum) 0;
}
