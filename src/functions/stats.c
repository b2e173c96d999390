/*-------------------------------------------------------------------------
 *
 * stats.c
 *		The set-returning functions over get_lsm_stats: lancelsm_stats
 *		(a row per bucket), lancelsm_generations (a row per L0 generation)
 *		and lancelsm_memtables (a row per memtable).
 *
 * Each reads the stats with one request (retried on 429/503 like any
 * request), decodes them strictly (src/protocol/lsm_stats_json.c) and materializes every
 * row at once (InitMaterializedSRF), so that no curl handle is held across
 * calls.  "lsm_stats": null yields zero rows.
 *
 * Protocol: docs/protocol.md, "The stats answer".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "functions/entry.h"
#include "settings.h"
#include "functions/stats.h"
#include "task/task.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
#include "wire_text.h"

/*
 * stats_read: resolve, request and decode the stats of the function's
 * (server, table_name) arguments.
 */
static const LsmStats *
stats_read(FunctionCallInfo fcinfo, bool include_generation_rows)
{
	return lsm_run_on_table(LSM_TASK_STATS, PG_GETARG_TEXT_PP(0),
							PG_GETARG_TEXT_PP(1),
							include_generation_rows, NULL)->stats;
}

/*
 * stats_int8: a uint64 from the decoder as a bigint Datum.  Raises 22003
 * above INT64_MAX (the decoder admits the protocol's whole
 * 0..UINT64_MAX).
 */
static Datum
stats_int8(uint64 v)
{
	int64		result;

	if (!lsm_int8_from_uint64(v, &result))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("statistic %llu from LanceDB is out of range for type bigint",
						(unsigned long long) v)));
	return Int64GetDatum(result);
}

/*
 * stats_raise_range: raise a range problem of a bucket's summary as
 * 22003: the value, or the sum, and a detail naming the statistic and its
 * bucket.
 */
pg_noreturn static void
stats_raise_range(const LsmRangeProblem *problem)
{
	if (problem->sum)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("bucket totals from LanceDB are out of range for type bigint"),
				 errdetail_internal("%s", lsm_range_detail(problem))));
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("statistic %llu from LanceDB is out of range for type bigint",
					(unsigned long long) problem->value),
			 errdetail_internal("%s", lsm_range_detail(problem))));
}

/*
 * stats_text: a server string (UTF-8) shown as column column, in the
 * database encoding; 22P05 naming the column when it cannot be held.
 */
static Datum
stats_text(const char *utf8, const char *column)
{
	return CStringGetTextDatum(lsm_text_from_wire(utf8, column));
}

/*
 * lsm_stats_bucket_values: the LSM_STATS_COLS columns of a lancelsm_stats
 * row (see lancelsm_stats) of bucket b, summarized as s, into
 * values/nulls from column i on.  Returns the column after the last one
 * written.
 */
int
lsm_stats_bucket_values(const LsmBucket *b, const LsmBucketSummary *s,
						Datum *values, bool *nulls, int i)
{
	bool		empty_l0 = (s->l0_generations == 0);

	memset(nulls + i, false, LSM_STATS_COLS * sizeof(bool));
	values[i++] = stats_text(b->shard_id, "shard_id");
	values[i++] = stats_text(b->status, "status");
	values[i++] = Int64GetDatum(s->writer_epoch);
	values[i++] = Int64GetDatum(s->manifest_version);
	values[i++] = Int64GetDatum(s->current_generation);
	values[i++] = Int64GetDatum(s->replay_after_wal_entry_position);
	values[i++] = Int64GetDatum(s->wal_entry_position_last_seen);
	values[i++] = BoolGetDatum(s->compacting);
	values[i++] = Int64GetDatum(s->wal_lag);
	values[i++] = Int64GetDatum(s->l0_generations);
	values[i++] = Int64GetDatum(s->l0_bytes);
	nulls[i] = empty_l0;
	values[i++] = Int64GetDatum(s->oldest_l0_generation);
	nulls[i] = empty_l0;
	values[i++] = Int64GetDatum(s->newest_l0_generation);
	nulls[i] = !s->has_l0_rows;
	values[i++] = Int64GetDatum(s->l0_rows);
	nulls[i] = !s->has_memtables;
	values[i++] = Int64GetDatum(s->memtables);
	nulls[i] = !s->has_memtables;
	values[i++] = Int64GetDatum(s->memtable_rows);
	nulls[i] = !s->has_memtables;
	values[i++] = Int64GetDatum(s->memtable_bytes);
	return i;
}

/*
 * lancelsm_stats(server text, table_name text,
 *                include_generation_rows boolean DEFAULT false)
 * RETURNS TABLE (shard_id text, status text, writer_epoch bigint,
 *   manifest_version bigint, current_generation bigint,
 *   replay_after_wal_entry_position bigint,
 *   wal_entry_position_last_seen bigint, compacting boolean,
 *   wal_lag bigint, l0_generations bigint, l0_bytes bigint,
 *   oldest_l0_generation bigint, newest_l0_generation bigint,
 *   l0_rows bigint, memtables bigint, memtable_rows bigint,
 *   memtable_bytes bigint)
 *
 * One row per bucket, in the server's order.  wal_lag is
 * wal_entry_position_last_seen - replay_after_wal_entry_position (WAL
 * entries not yet covered by a flush).  oldest/newest are NULL with an
 * empty L0; l0_rows is NULL unless include_generation_rows (which makes
 * the server open every L0 dataset: slower), and NULL when any generation
 * of the bucket came without rows; memtable columns are NULL when the
 * answer has no memtables for the bucket (a Sealed bucket, a WAL-only
 * writer).  status is shown as the server sent it.  Zero rows when the
 * table has no LSM write path ("lsm_stats" null or absent).
 * Errors as lancelsm_flush, plus 08P01 when the answer cannot be decoded
 * (the detail names the field and the request id), and 22P05 naming the
 * column when a shard id, status or index name has no equivalent in the
 * database encoding.
 */
PG_FUNCTION_INFO_V1(lancelsm_stats);
Datum
lancelsm_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lsm_materialize(fcinfo, LSM_STATS_COLS);
	bool		with_rows = PG_GETARG_BOOL(2);
	const LsmStats *stats = stats_read(fcinfo, with_rows);

	for (int b = 0; b < stats->nbuckets; b++)
	{
		Datum		values[LSM_STATS_COLS];
		bool		nulls[LSM_STATS_COLS];
		LsmBucketSummary s;
		LsmRangeProblem problem;

		if (!lsm_bucket_summarize(&stats->buckets[b], with_rows, &s,
								  &problem))
			stats_raise_range(&problem);
		lsm_put_row(rsinfo, values, nulls,
					lsm_stats_bucket_values(&stats->buckets[b], &s,
											values, nulls, 0));
	}
	return (Datum) 0;
}

/*
 * lancelsm_generations(server text, table_name text,
 *                      include_generation_rows boolean DEFAULT false)
 * RETURNS TABLE (shard_id text, generation bigint, bytes bigint,
 *   rows bigint)
 *
 * One row per L0 generation (flushed, not yet compacted), bucket by
 * bucket in the server's order.  rows is NULL unless
 * include_generation_rows.  Errors as lancelsm_stats.
 */
PG_FUNCTION_INFO_V1(lancelsm_generations);
Datum
lancelsm_generations(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lsm_materialize(fcinfo, LSM_GENERATIONS_COLS);
	const LsmStats *stats = stats_read(fcinfo, PG_GETARG_BOOL(2));

	for (int b = 0; b < stats->nbuckets; b++)
	{
		const LsmBucket *bucket = &stats->buckets[b];
		Datum		shard_id = stats_text(bucket->shard_id, "shard_id");

		for (int g = 0; g < bucket->ngenerations; g++)
		{
			const LsmGeneration *gen = &bucket->generations[g];
			Datum		values[LSM_GENERATIONS_COLS];
			bool		nulls[LSM_GENERATIONS_COLS] = {0};
			int			i = 0;

			values[i++] = shard_id;
			values[i++] = stats_int8(gen->generation);
			values[i++] = stats_int8(gen->bytes);
			nulls[i] = !gen->has_rows;
			values[i++] = gen->has_rows ? stats_int8(gen->rows) : (Datum) 0;
			lsm_put_row(rsinfo, values, nulls, i);
		}
	}
	return (Datum) 0;
}

/*
 * lancelsm_memtables(server text, table_name text)
 * RETURNS TABLE (shard_id text, generation bigint, rows bigint,
 *   bytes bigint, batches bigint, indexes text[])
 *
 * One row per memtable (oldest first, the active one last), bucket by
 * bucket.  indexes names the indexes the memtable maintains: a column
 * whose index is missing there is searched by brute force in the fresh
 * tier.  A bucket the answer gives no memtables (Sealed, or a WAL-only
 * writer) has no rows.  Errors as lancelsm_stats.
 */
PG_FUNCTION_INFO_V1(lancelsm_memtables);
Datum
lancelsm_memtables(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lsm_materialize(fcinfo, LSM_MEMTABLES_COLS);
	const LsmStats *stats = stats_read(fcinfo, false);

	for (int b = 0; b < stats->nbuckets; b++)
	{
		const LsmBucket *bucket = &stats->buckets[b];

		for (int m = 0; m < bucket->nmemtables; m++)
		{
			const LsmMemtable *mt = &bucket->memtables[m];
			Datum		values[LSM_MEMTABLES_COLS];
			bool		nulls[LSM_MEMTABLES_COLS] = {0};
			int			i = 0;

			values[i++] = stats_text(bucket->shard_id, "shard_id");
			values[i++] = stats_int8(mt->generation);
			values[i++] = stats_int8(mt->rows);
			values[i++] = stats_int8(mt->bytes);
			values[i++] = stats_int8(mt->batches);
			values[i++] = lsm_text_array(mt->indexes, mt->nindexes, "indexes");
			lsm_put_row(rsinfo, values, nulls, i);
		}
	}
	return (Datum) 0;
}
