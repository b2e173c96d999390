/*-------------------------------------------------------------------------
 *
 * stats.c
 *		The set-returning functions over get_lsm_stats: lancelsm_stats
 *		(a row per bucket), lancelsm_generations (a row per L0 generation)
 *		and lancelsm_memtables (a row per memtable).
 *
 * Each reads the stats with one request (retried on 429/503 like any
 * request), decodes them strictly (src/lsm_json.c) and materializes every
 * row at once (InitMaterializedSRF), so that no curl handle is held across
 * calls.  "lsm_stats": null yields zero rows.
 *
 * Protocol: docs/protocol.md, "The stats answer".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "task.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#define GENERATION_COLS 4
#define MEMTABLE_COLS 6

/*
 * stats_read: resolve, request and decode the stats of the function's
 * (server, table_name) arguments.
 */
static const LsmStats *
stats_read(FunctionCallInfo fcinfo, bool include_generation_rows)
{
	return lsm_run_on_table(LSM_TASK_STATS, PG_GETARG_TEXT_PP(0),
							PG_GETARG_TEXT_PP(1),
							include_generation_rows)->stats;
}

/*
 * stats_int8: a uint64 from the decoder as a bigint Datum, raising 22003
 * above INT64_MAX (the decoder admits the protocol's whole 0..UINT64_MAX).
 */
static Datum
stats_int8(uint64 v)
{
	if (v > (uint64) PG_INT64_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("statistic %llu from LanceDB is out of range for type bigint",
						(unsigned long long) v)));
	return Int64GetDatum((int64) v);
}

/*
 * stats_add: a + b, raising 22003 when the sum leaves the bigint range.
 */
static uint64
stats_add(uint64 a, uint64 b)
{
	if (b > (uint64) PG_INT64_MAX - a)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("bucket totals from LanceDB are out of range for type bigint")));
	return a + b;
}

/*
 * stats_l0_columns: the L0 summary columns of a bucket, into
 * values/nulls[9..13]: wal_lag is not L0 but is filled by the caller.
 */
static void
stats_l0_columns(const LsmBucket *b, bool with_rows, Datum *values,
				 bool *nulls)
{
	uint64		bytes = 0;
	uint64		rows = 0;
	uint64		oldest = PG_UINT64_MAX;
	uint64		newest = 0;

	for (int g = 0; g < b->ngenerations; g++)
	{
		const LsmGeneration *gen = &b->generations[g];

		bytes = stats_add(bytes, gen->bytes);
		if (gen->has_rows)
			rows = stats_add(rows, gen->rows);
		oldest = Min(oldest, gen->generation);
		newest = Max(newest, gen->generation);
	}
	values[9] = Int64GetDatum(b->ngenerations);
	values[10] = stats_int8(bytes);
	nulls[11] = nulls[12] = (b->ngenerations == 0);
	if (b->ngenerations > 0)
	{
		values[11] = stats_int8(oldest);
		values[12] = stats_int8(newest);
	}
	values[13] = stats_int8(rows);
	nulls[13] = !with_rows;
}

/*
 * stats_memtable_columns: memtable count, rows and bytes of a bucket into
 * values/nulls[14..16]; NULL for a Sealed bucket that reports none.
 */
static void
stats_memtable_columns(const LsmBucket *b, Datum *values, bool *nulls)
{
	uint64		rows = 0;
	uint64		bytes = 0;

	for (int m = 0; m < b->nmemtables; m++)
	{
		rows = stats_add(rows, b->memtables[m].rows);
		bytes = stats_add(bytes, b->memtables[m].bytes);
	}
	values[14] = Int64GetDatum(b->nmemtables);
	values[15] = stats_int8(rows);
	values[16] = stats_int8(bytes);
	nulls[14] = nulls[15] = nulls[16] = !b->has_memtables;
}

/*
 * lsm_stats_bucket_values: the LSM_STATS_ROW_COLS columns of lancelsm_stats
 * for bucket b into values/nulls[0..16] (see lancelsm_stats).  Raises 22003
 * when a bucket's totals leave the bigint range.
 */
void
lsm_stats_bucket_values(const LsmBucket *b, bool with_rows, Datum *values,
						bool *nulls)
{
	memset(nulls, 0, LSM_STATS_ROW_COLS * sizeof(bool));
	values[0] = CStringGetTextDatum(b->shard_id);
	values[1] = CStringGetTextDatum(b->status);
	values[2] = stats_int8(b->writer_epoch);
	values[3] = stats_int8(b->manifest_version);
	values[4] = stats_int8(b->current_generation);
	values[5] = stats_int8(b->replay_after_wal_entry_position);
	values[6] = stats_int8(b->wal_entry_position_last_seen);
	values[7] = BoolGetDatum(b->compacting);
	values[8] = Int64GetDatum((int64) b->wal_entry_position_last_seen -
							  (int64) b->replay_after_wal_entry_position);
	stats_l0_columns(b, with_rows, values, nulls);
	stats_memtable_columns(b, values, nulls);
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
 * the server open every L0 dataset: slower); memtable columns are NULL for
 * a Sealed bucket.  Zero rows when the table has no LSM write path.
 * Errors as lancelsm_flush, plus 08P01 when the answer cannot be decoded
 * (the detail names the field and the request id).
 */
PG_FUNCTION_INFO_V1(lancelsm_stats);
Datum
lancelsm_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		with_rows = PG_GETARG_BOOL(2);
	const LsmStats *stats;

	InitMaterializedSRF(fcinfo, 0);
	stats = stats_read(fcinfo, with_rows);
	for (int i = 0; i < stats->nbuckets; i++)
	{
		Datum		values[LSM_STATS_ROW_COLS];
		bool		nulls[LSM_STATS_ROW_COLS];

		lsm_stats_bucket_values(&stats->buckets[i], with_rows, values, nulls);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
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
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const LsmStats *stats;

	InitMaterializedSRF(fcinfo, 0);
	stats = stats_read(fcinfo, PG_GETARG_BOOL(2));
	for (int i = 0; i < stats->nbuckets; i++)
	{
		const LsmBucket *b = &stats->buckets[i];
		Datum		shard_id = CStringGetTextDatum(b->shard_id);

		for (int g = 0; g < b->ngenerations; g++)
		{
			const LsmGeneration *gen = &b->generations[g];
			Datum		values[GENERATION_COLS];
			bool		nulls[GENERATION_COLS] = {0};

			values[0] = shard_id;
			values[1] = stats_int8(gen->generation);
			values[2] = stats_int8(gen->bytes);
			values[3] = stats_int8(gen->rows);
			nulls[3] = !gen->has_rows;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
		}
	}
	return (Datum) 0;
}

/*
 * stats_indexes_array: a memtable's index names as a text[].
 */
static Datum
stats_indexes_array(const LsmMemtable *m)
{
	Datum	   *elems = palloc(Max(m->nindexes, 1) * sizeof(Datum));

	for (int i = 0; i < m->nindexes; i++)
		elems[i] = CStringGetTextDatum(m->indexes[i]);
	return PointerGetDatum(construct_array(elems, m->nindexes, TEXTOID,
										   -1, false, TYPALIGN_INT));
}

/*
 * lancelsm_memtables(server text, table_name text)
 * RETURNS TABLE (shard_id text, generation bigint, rows bigint,
 *   bytes bigint, batches bigint, indexes text[])
 *
 * One row per memtable (oldest first, the active one last), bucket by
 * bucket.  indexes names the indexes the memtable maintains: a column
 * whose index is missing there is searched by brute force in the fresh
 * tier.  Sealed buckets report no memtables.  Errors as lancelsm_stats.
 */
PG_FUNCTION_INFO_V1(lancelsm_memtables);
Datum
lancelsm_memtables(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const LsmStats *stats;

	InitMaterializedSRF(fcinfo, 0);
	stats = stats_read(fcinfo, false);
	for (int i = 0; i < stats->nbuckets; i++)
	{
		const LsmBucket *b = &stats->buckets[i];

		for (int m = 0; m < b->nmemtables; m++)
		{
			const LsmMemtable *mt = &b->memtables[m];
			Datum		values[MEMTABLE_COLS];
			bool		nulls[MEMTABLE_COLS] = {0};

			values[0] = CStringGetTextDatum(b->shard_id);
			values[1] = stats_int8(mt->generation);
			values[2] = stats_int8(mt->rows);
			values[3] = stats_int8(mt->bytes);
			values[4] = stats_int8(mt->batches);
			values[5] = stats_indexes_array(mt);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
		}
	}
	return (Datum) 0;
}
