/*-------------------------------------------------------------------------
 *
 * shape.c
 *		The summary of a table's buckets, computed once from a decoded
 *		stats answer, and the checked materialization of result rows.
 *
 * A result shape that matches neither this library's nor an older
 * catalog's is a mismatch between the library and the installed SQL
 * objects; the error's hint says which of the two is behind, from the
 * extension's version in pg_extension against the library's.
 *
 * The decoder admits the protocol's whole 0..UINT64_MAX; SQL shows
 * bigint.  Summarizing reports a number or a sum outside the bigint range
 * as an LsmRangeProblem instead of raising, so that a function over many
 * tables can turn it into that table's failure row, while a function over
 * one table raises it (22003).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "functions/functions.h"
#include "settings.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"
#include "wire_text.h"

/*
 * lsm_int8_from_uint64: *result = v when v fits a bigint; returns false
 * (and leaves *result alone) when v is above INT64_MAX.
 */
bool
lsm_int8_from_uint64(uint64 v, int64 *result)
{
	if (v > (uint64) PG_INT64_MAX)
		return false;
	*result = (int64) v;
	return true;
}

/*
 * shape_problem: set *problem to the statistic what of the bucket named
 * shard_id (NULL: a total over the buckets), whose value v (when not sum)
 * or sum left the bigint range.  Returns false, for the caller to return.
 */
static bool
shape_problem(LsmRangeProblem *problem, const char *what,
			  const char *shard_id, bool sum, uint64 v)
{
	problem->what = what;
	problem->shard_id = shard_id;
	problem->sum = sum;
	problem->value = v;
	return false;
}

/*
 * shape_value: one statistic what of bucket b into *result; false with
 * *problem naming the value when it is above INT64_MAX.
 */
static bool
shape_value(uint64 v, const char *what, const LsmBucket *b, int64 *result,
			LsmRangeProblem *problem)
{
	if (lsm_int8_from_uint64(v, result))
		return true;
	return shape_problem(problem, what, b->shard_id, false, v);
}

/*
 * shape_add: *sum += v, v being one statistic what of bucket b; false
 * with *problem set when v or the sum leaves the bigint range.
 */
static bool
shape_add(int64 *sum, uint64 v, const char *what, const LsmBucket *b,
		  LsmRangeProblem *problem)
{
	int64		addend;

	if (!shape_value(v, what, b, &addend, problem))
		return false;
	if (!pg_add_s64_overflow(*sum, addend, sum))
		return true;
	return shape_problem(problem, what, b->shard_id, true, v);
}

/*
 * shape_l0: the L0 numbers of bucket b (count, bytes, oldest and newest
 * generation, rows when with_rows) into s; false with *problem set when
 * one leaves the bigint range.
 */
static bool
shape_l0(const LsmBucket *b, bool with_rows, LsmBucketSummary *s,
		 LsmRangeProblem *problem)
{
	for (int g = 0; g < b->ngenerations; g++)
	{
		const LsmGeneration *gen = &b->generations[g];
		int64		generation;

		if (!shape_value(gen->generation, "L0 generation", b, &generation,
						 problem) ||
			!shape_add(&s->l0_bytes, gen->bytes, "L0 generation bytes", b,
					   problem) ||
			(gen->has_rows &&
			 !shape_add(&s->l0_rows, gen->rows, "L0 generation rows", b,
						problem)))
			return false;
		s->oldest_l0_generation = (g == 0) ? generation :
			Min(s->oldest_l0_generation, generation);
		s->newest_l0_generation = Max(s->newest_l0_generation, generation);
	}
	s->l0_generations = b->ngenerations;
	/* a sum that misses a generation's rows would be wrong: NULL instead */
	s->has_l0_rows = with_rows;
	for (int g = 0; g < b->ngenerations; g++)
		s->has_l0_rows &= b->generations[g].has_rows;
	return true;
}

/*
 * shape_memtables: the memtable count, rows and bytes of bucket b into s;
 * false with *problem set when one leaves the bigint range.
 */
static bool
shape_memtables(const LsmBucket *b, LsmBucketSummary *s,
				LsmRangeProblem *problem)
{
	for (int m = 0; m < b->nmemtables; m++)
	{
		if (!shape_add(&s->memtable_rows, b->memtables[m].rows,
					   "memtable rows", b, problem) ||
			!shape_add(&s->memtable_bytes, b->memtables[m].bytes,
					   "memtable bytes", b, problem))
			return false;
	}
	s->memtables = b->nmemtables;
	s->has_memtables = b->has_memtables;
	return true;
}

/*
 * lsm_bucket_summarize: the numbers of bucket b into *s (l0_rows only
 * when with_rows: the answer then carries generation rows).  Returns
 * false, with *problem naming the value, when a number or a sum of the
 * bucket leaves the bigint range; *s is then incomplete.  Never raises.
 */
bool
lsm_bucket_summarize(const LsmBucket *b, bool with_rows, LsmBucketSummary *s,
					 LsmRangeProblem *problem)
{
	memset(s, 0, sizeof(LsmBucketSummary));
	if (!shape_value(b->writer_epoch, "writer_epoch", b,
					 &s->writer_epoch, problem) ||
		!shape_value(b->manifest_version, "manifest_version", b,
					 &s->manifest_version, problem) ||
		!shape_value(b->current_generation, "current_generation", b,
					 &s->current_generation, problem) ||
		!shape_value(b->replay_after_wal_entry_position,
					 "replay_after_wal_entry_position", b,
					 &s->replay_after_wal_entry_position, problem) ||
		!shape_value(b->wal_entry_position_last_seen,
					 "wal_entry_position_last_seen", b,
					 &s->wal_entry_position_last_seen, problem))
		return false;
	s->compacting = b->compacting;
	/* two values in 0..INT64_MAX: the difference cannot overflow */
	s->wal_lag = s->wal_entry_position_last_seen -
		s->replay_after_wal_entry_position;
	return shape_l0(b, with_rows, s, problem) &&
		shape_memtables(b, s, problem);
}

/*
 * shape_total: *total += v, for the total what over a table's buckets;
 * false with *problem set when it leaves the bigint range.
 */
static bool
shape_total(int64 *total, int64 v, const char *what,
			LsmRangeProblem *problem)
{
	if (!pg_add_s64_overflow(*total, v, total))
		return true;
	return shape_problem(problem, what, NULL, true, 0);
}

/*
 * lsm_table_summarize: the summary of every bucket of stats (palloc'd in
 * CurrentMemoryContext) and their totals into *t.  Returns false, with
 * *problem naming the value or the total, when a number leaves the bigint
 * range.  Never raises but for out of memory.
 */
bool
lsm_table_summarize(const LsmStats *stats, bool with_rows,
					LsmTableSummary *t, LsmRangeProblem *problem)
{
	memset(t, 0, sizeof(LsmTableSummary));
	t->nbuckets = stats->nbuckets;
	t->buckets = palloc0(Max(stats->nbuckets, 1) * sizeof(LsmBucketSummary));
	for (int i = 0; i < stats->nbuckets; i++)
	{
		LsmBucketSummary *s = &t->buckets[i];

		if (!lsm_bucket_summarize(&stats->buckets[i], with_rows, s, problem) ||
			!shape_total(&t->l0_generations, s->l0_generations,
						 "l0_generations", problem) ||
			!shape_total(&t->l0_bytes, s->l0_bytes, "l0_bytes", problem) ||
			!shape_total(&t->memtable_rows, s->memtable_rows,
						 "memtable_rows", problem) ||
			!shape_total(&t->wal_lag_total, s->wal_lag, "wal_lag", problem))
			return false;
		t->wal_lag_max = (i == 0) ? s->wal_lag : Max(t->wal_lag_max,
													 s->wal_lag);
		if (s->compacting)
			t->compacting_buckets++;
	}
	return true;
}

/*
 * lsm_range_detail: the errdetail of a range problem, a full sentence
 * naming the statistic, its bucket and the value, in the database
 * encoding (what it cannot hold escaped); palloc'd.
 */
char *
lsm_range_detail(const LsmRangeProblem *problem)
{
	char	   *detail;
	bool		lossless;

	if (problem->shard_id == NULL)
		detail = psprintf("The sum of %s over the buckets is out of range for type bigint.",
						  problem->what);
	else if (problem->sum)
		detail = psprintf("The sum of the %s of bucket \"%s\" is out of range for type bigint.",
						  problem->what, problem->shard_id);
	else
		detail = psprintf("The %s %llu of bucket \"%s\" is out of range for type bigint.",
						  problem->what, (unsigned long long) problem->value,
						  problem->shard_id);
	/* the shard id is the server's UTF-8 */
	return lsm_text_from_wire_quiet(detail, &lossless);
}

/*
 * lsm_catalog_version: the installed version of the lancelsm extension
 * in this database (pg_extension.extversion), palloc'd; NULL when it is
 * not installed.
 */
char *
lsm_catalog_version(void)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	char	   *version = NULL;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("lancelsm"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		bool		isnull;
		Datum		d = heap_getattr(tuple, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		if (!isnull)
			version = TextDatumGetCString(d);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

/*
 * shape_version_cmp: the order of two versions "MAJOR.MINOR...", compared
 * number by number (1.10 after 1.9): <0, 0 or >0.
 */
static int
shape_version_cmp(const char *a, const char *b)
{
	while (*a != '\0' || *b != '\0')
	{
		long		x = strtol(a, (char **) &a, 10);
		long		y = strtol(b, (char **) &b, 10);

		if (x != y)
			return x < y ? -1 : 1;
		if (*a == '.')
			a++;
		if (*b == '.')
			b++;
		if ((*a != '\0' && !isdigit((unsigned char) *a)) ||
			(*b != '\0' && !isdigit((unsigned char) *b)))
			return strcmp(a, b);
	}
	return 0;
}

/*
 * lsm_mismatch_hint: the errhint of an error raised because the loaded
 * library and the extension's SQL objects do not match: which side is
 * behind, and what brings it up to date.  The side is the older version
 * of the two (pg_extension's against the library's); with equal or
 * unknown versions, declared_newer says whether the object's declaration
 * is newer than any this library knows.
 */
int
lsm_mismatch_hint(bool declared_newer)
{
	char	   *catalog = lsm_catalog_version();
	int			cmp = catalog ? shape_version_cmp(catalog, LANCELSM_VERSION) : 0;

	if (catalog == NULL || cmp == 0)
		return declared_newer ?
			errhint("The function's declaration is newer than the loaded lancelsm library (version %s): install the library matching the extension's SQL objects, and restart the server if lancelsm is in shared_preload_libraries.",
					LANCELSM_VERSION) :
			errhint("The function's declaration is older than the loaded lancelsm library (version %s): run ALTER EXTENSION lancelsm UPDATE.",
					LANCELSM_VERSION);
	if (cmp > 0)
		return errhint("The loaded lancelsm library (version %s) is older than the extension's SQL objects (version %s): install the lancelsm library of version %s, and restart the server if lancelsm is in shared_preload_libraries.",
					   LANCELSM_VERSION, catalog, catalog);
	return errhint("The extension's SQL objects (version %s) are older than the loaded lancelsm library (version %s): run ALTER EXTENSION lancelsm UPDATE.",
				   catalog, LANCELSM_VERSION);
}

/*
 * lsm_materialize: InitMaterializedSRF for a function returning ncols
 * columns.  A function declared with another count is a mismatch between
 * the library and the installed SQL objects: raises 0A000 with a hint
 * saying which side is behind (lsm_mismatch_hint).
 */
ReturnSetInfo *
lsm_materialize(FunctionCallInfo fcinfo, int ncols)
{
	bool		is_new;

	return lsm_materialize_versions(fcinfo, ncols, ncols, &is_new);
}

/*
 * lsm_materialize_versions: lsm_materialize for a function whose older
 * extension version declares ncols_old columns and the current one
 * ncols_new, so that the library serves a catalog not updated yet
 * (between a package upgrade and ALTER EXTENSION UPDATE); *is_new says
 * which one the caller fills.  Any other count raises 0A000 as
 * lsm_materialize does.
 */
ReturnSetInfo *
lsm_materialize_versions(FunctionCallInfo fcinfo, int ncols_old,
						 int ncols_new, bool *is_new)
{
	int			ncols[2] = {ncols_old, ncols_new};
	int			shape;
	ReturnSetInfo *rsinfo = lsm_materialize_shapes(fcinfo, ncols, 2, &shape);

	*is_new = (shape == 1);
	return rsinfo;
}

/*
 * lsm_materialize_shapes: lsm_materialize for a function whose extension
 * versions declare ncols[0..nshapes) columns, oldest first, so that the
 * library serves every catalog not updated yet; *shape is the index of
 * the count the installed declaration has (the newest one when counts
 * repeat).  Any other count raises 0A000 with a hint saying which side
 * is behind, as lsm_materialize does.
 */
ReturnSetInfo *
lsm_materialize_shapes(FunctionCallInfo fcinfo, const int *ncols,
					   int nshapes, int *shape)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	for (*shape = nshapes - 1; *shape >= 0; (*shape)--)
		if (rsinfo->setDesc->natts == ncols[*shape])
			return rsinfo;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("lancelsm library does not match the installed extension objects"),
			 errdetail("The function returns %d columns but is declared with %d.",
					   ncols[nshapes - 1], rsinfo->setDesc->natts),
			 lsm_mismatch_hint(rsinfo->setDesc->natts > ncols[nshapes - 1])));
	pg_unreachable();
}

/*
 * lsm_put_row: append one row of ncols columns (the count the caller
 * wrote with values[i++]) to the function's materialized result.  Raises
 * XX000 (elog) when ncols differs from the tuple descriptor's natts.
 */
void
lsm_put_row(ReturnSetInfo *rsinfo, Datum *values, bool *nulls, int ncols)
{
	if (ncols != rsinfo->setDesc->natts)
		elog(ERROR, "row of %d columns does not match its %d result columns",
			 ncols, rsinfo->setDesc->natts);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * lsm_text_array: strings[0..n) (UTF-8, as the server sent them) as a
 * text[] Datum in the database encoding (empty for n = 0).  Allocates in
 * the current memory context; raises 22P05 naming column for a string the
 * database encoding cannot hold.
 */
Datum
lsm_text_array(char *const *strings, int n, const char *column)
{
	Datum	   *elems = palloc(Max(n, 1) * sizeof(Datum));

	for (int i = 0; i < n; i++)
		elems[i] = CStringGetTextDatum(lsm_text_from_wire(strings[i], column));
	return PointerGetDatum(construct_array(elems, n, TEXTOID,
										   -1, false, TYPALIGN_INT));
}
