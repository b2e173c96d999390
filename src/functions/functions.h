/*-------------------------------------------------------------------------
 *
 * functions.h
 *		The face of src/functions/, what PostgreSQL calls by name.  The SQL
 *		functions themselves need no declaration (PG_FUNCTION_INFO_V1); the
 *		other headers of the folder are private to it.  Declared here: the
 *		result shapes of the set-returning functions, each defined
 *		once: their column counts, the checked putting of a row, and the
 *		summary of a table's buckets that the stats rows, the
 *		declared-table views and the thresholds all read.
 *
 * A row is filled with values[i++] and put with lsm_put_row, which
 * compares the count written with the tuple descriptor's natts.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_FUNCTIONS_H
#define LANCELSM_FUNCTIONS_H

#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "nodes/pg_list.h"
#include "protocol/protocol.h"

/* lancelsm_stats: one row per bucket */
#define LSM_STATS_COLS 17
/* lancelsm_generations: one row per L0 generation */
#define LSM_GENERATIONS_COLS 4
/* lancelsm_memtables: one row per memtable */
#define LSM_MEMTABLES_COLS 6
/* lancelsm_checkpoint(text, text[]): one row per table */
#define LSM_CHECKPOINT_ROW_COLS 7
/* lancelsm_declared_bucket_stats: server, table_name, lancelsm_stats */
#define LSM_BUCKET_STATS_COLS (2 + LSM_STATS_COLS)
/* lancelsm_declared_table_stats, as declared by 1.1 and by 1.2 */
#define LSM_TABLE_STATS_COLS_V1_1 12
#define LSM_TABLE_STATS_COLS_V1_2 21
/* lancelsm_checkpoint_all: server, then lancelsm_checkpoint's columns */
#define LSM_CHECKPOINT_ALL_COLS (1 + LSM_CHECKPOINT_ROW_COLS)
/* lancelsm_checkpoint_due: those of lancelsm_checkpoint_all, due, reason,
 * action */
#define LSM_DUE_COLS (LSM_CHECKPOINT_ALL_COLS + 3)
/* lancelsm_progress: one row per running checkpoint; 1.3 adds database
 * and the waiting bucket, 1.4 passes_without_drop and diagnosis */
#define LSM_PROGRESS_COLS_V1_2 11
#define LSM_PROGRESS_COLS_V1_3 14
#define LSM_PROGRESS_COLS_V1_4 16
/* lancelsm_checkpoint_history: one row per kept outcome; 1.3 adds
 * database, 1.5 removed_at */
#define LSM_HISTORY_COLS_V1_2 8
#define LSM_HISTORY_COLS_V1_3 9
#define LSM_HISTORY_COLS_V1_5 10
/* lancelsm_running: one row per checkpoint running in this database */
#define LSM_RUNNING_COLS 5
/* lancelsm_write_spec: one row, or none */
#define LSM_WRITE_SPEC_COLS 5
/* lancelsm_info (1.4); 1.5 adds the outcome queue's four columns */
#define LSM_INFO_COLS_V1_4 18
#define LSM_INFO_COLS 22
/* lancelsm_run_history (1.4); 1.5 adds removed_at */
#define LSM_RUN_HISTORY_COLS 13
#define LSM_RUN_HISTORY_COLS_V1_5 16
/* lancelsm_table_counters (1.4): one row per table and action */
#define LSM_TABLE_COUNTERS_COLS 14
/* lancelsm_last_stats (1.4): one row per table whose stats were read */
#define LSM_LAST_STATS_COLS 16
/* lancelsm_get_connections: one row per connection pool of the backend */
#define LSM_CONNECTIONS_COLS 5

/*
 * The numbers of one bucket, as its lancelsm_stats row shows them, each
 * within the bigint range.
 */
typedef struct LsmBucketSummary
{
	int64		writer_epoch;
	int64		manifest_version;
	int64		current_generation;
	int64		replay_after_wal_entry_position;
	int64		wal_entry_position_last_seen;
	bool		compacting;		/* the compaction latch is held */
	int64		wal_lag;		/* WAL entries not yet covered by a flush */
	int64		l0_generations;
	int64		l0_bytes;
	int64		oldest_l0_generation;	/* both 0 when l0_generations is 0 */
	int64		newest_l0_generation;
	bool		has_l0_rows;	/* rows asked for, and sent for every generation */
	int64		l0_rows;		/* 0 unless has_l0_rows */
	bool		has_memtables;	/* false: a Sealed bucket reports none */
	int64		memtables;
	int64		memtable_rows;
	int64		memtable_bytes;
} LsmBucketSummary;

/* A table's buckets and their totals (lancelsm_table_stats, thresholds). */
typedef struct LsmTableSummary
{
	int			nbuckets;
	LsmBucketSummary *buckets;	/* nbuckets, in the server's order */
	int64		l0_generations; /* sum over the buckets */
	int64		l0_bytes;		/* sum */
	int64		memtable_rows;	/* sum over the buckets with memtables */
	int64		wal_lag_total;	/* sum */
	int64		wal_lag_max;	/* maximum; 0 without buckets */
	int32		compacting_buckets;
} LsmTableSummary;

/* Why a summary could not be made: a number outside the bigint range. */
typedef struct LsmRangeProblem
{
	const char *what;			/* the statistic, e.g. "writer_epoch" */
	const char *shard_id;		/* its bucket; NULL: a total over buckets */
	bool		sum;			/* a sum left the range, not one value */
	uint64		value;			/* the value, when not a sum */
} LsmRangeProblem;

/* in shape.c */
extern bool lsm_int8_from_uint64(uint64 v, int64 *result);
extern bool lsm_bucket_summarize(const LsmBucket *b, bool with_rows,
								 LsmBucketSummary *s,
								 LsmRangeProblem *problem);
extern bool lsm_table_summarize(const LsmStats *stats, bool with_rows,
								LsmTableSummary *t,
								LsmRangeProblem *problem);
extern char *lsm_range_detail(const LsmRangeProblem *problem);

extern char *lsm_catalog_version(void);
extern int	lsm_mismatch_hint(bool declared_newer);
extern ReturnSetInfo *lsm_materialize(FunctionCallInfo fcinfo, int ncols);
extern ReturnSetInfo *lsm_materialize_versions(FunctionCallInfo fcinfo,
											   int ncols_old, int ncols_new,
											   bool *is_new);
extern ReturnSetInfo *lsm_materialize_shapes(FunctionCallInfo fcinfo,
											 const int *ncols, int nshapes,
											 int *shape);
extern void lsm_put_row(ReturnSetInfo *rsinfo, Datum *values, bool *nulls,
						int ncols);
extern Datum lsm_text_array(char *const *strings, int n,
							 const char *column);

/*
 * in option_check.c: the options of the foreign-data wrapper, without
 * fmgr (fuzz/ links it alone); the validator and resolution are private
 * to this folder (option.c, option.h)
 */
#define LSM_DEFAULT_REGION "us-east-1"
#define LSM_DEFAULT_ID_DELIMITER "$"
#define LSM_MAX_CONNECT_TIMEOUT 3600	/* seconds */
#define LSM_MAX_READ_TIMEOUT 86400	/* seconds */
#define LSM_DEFAULT_READ_TIMEOUT 300	/* seconds, as the SDKs */

extern void lsm_option_validate(List *options, Oid catalog);
extern char *lsm_option_find(List *options, const char *name);
extern bool lsm_option_parse_timeout(const char *value, long min, long max,
									 long *seconds);
extern char *lsm_option_parse_headers(const char *text, int *n, char ***names,
									  char ***values);
extern bool lsm_option_header_names_match(const char *a, size_t alen,
										  const char *b, size_t blen);
extern void lsm_option_wipe_strings(char **strings, int n);
extern void lsm_option_wipe_secrets(List *options);
extern void lsm_option_list_to_wire(List *options, Oid catalog);
extern char *lsm_option_base_url(const char *host_override,
								 const char *database, const char *region);

/*
 * in mapping.c: refuses user mappings that replace the headers of a
 * server with server-level credentials (an object access hook)
 */
extern void lsm_mapping_init(void);

/*
 * in recording.c: the record forgets a database's entries when its
 * lancelsm extension is dropped (an object access hook)
 */
extern void lsm_recording_init(void);

#endif							/* LANCELSM_FUNCTIONS_H */
