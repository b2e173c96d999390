/*-------------------------------------------------------------------------
 *
 * lsm_types.h
 *		Plain C types shared by the JSON decoder and the PostgreSQL side.
 *
 * This header must stay free of jansson and of fmgr/builtins includes: it is
 * the boundary between src/protocol/lsm_json.c (jansson) and every other file
 * (PostgreSQL's SQL-function prototypes), which cannot share a translation
 * unit: jansson.h and utils/fmgrprotos.h both declare json_object and json_typeof.
 * Numbers are unsigned 64-bit, as the protocol says (docs/protocol.md,
 * "The stats answer").
 *
 *-------------------------------------------------------------------------
 */
#ifndef LSM_TYPES_H
#define LSM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One L0 generation: flushed, not yet compacted. */
typedef struct LsmGeneration
{
	uint64_t	generation;
	uint64_t	bytes;
	uint64_t	rows;			/* valid only when has_rows (sent, not null) */
	bool		has_rows;
} LsmGeneration;

/* One memtable of a bucket (oldest first, active last). */
typedef struct LsmMemtable
{
	uint64_t	generation;
	uint64_t	rows;
	uint64_t	bytes;
	uint64_t	batches;
	int			nindexes;
	char	  **indexes;		/* nindexes NUL-terminated names */
} LsmMemtable;

/* One bucket (shard) of an LSM table. */
typedef struct LsmBucket
{
	char	   *shard_id;
	char	   *status;			/* as sent: "Active", "Sealed", ... */
	uint64_t	writer_epoch;
	uint64_t	manifest_version;
	uint64_t	current_generation;
	uint64_t	replay_after_wal_entry_position;
	uint64_t	wal_entry_position_last_seen;
	bool		compacting;		/* the compaction latch */
	int			ngenerations;
	LsmGeneration *generations; /* L0, in the order the server sent them */
	bool		has_memtables;	/* false: absent or null (a Sealed
								 * bucket, a WAL-only writer) */
	int			nmemtables;
	LsmMemtable *memtables;
} LsmBucket;

/*
 * How an answer spells the stats keys that a pending upstream rename
 * changes: buckets / generations / include_generation_rows, or
 * table_shards / sstables / include_sstable_rows.
 */
typedef enum LsmKeySpelling
{
	LSM_KEYS_UNSEEN = 0,		/* no renamed key in the answer */
	LSM_KEYS_GENERATION,		/* the released names */
	LSM_KEYS_SSTABLE			/* the new names */
} LsmKeySpelling;

/* A decoded get_lsm_stats answer. */
typedef struct LsmStats
{
	bool		enabled;		/* false: "lsm_stats" null or absent */
	LsmKeySpelling keys;		/* the spelling the answer used */
	int			nbuckets;
	LsmBucket  *buckets;
} LsmStats;

/*
 * An LSM write spec: what set_lsm_write_spec sends and get_lsm_write_spec
 * answers (docs/reference.md, "The LSM write spec").  Strings are
 * NUL-terminated; writer_config_defaults is ndefaults key/value pairs.
 */
typedef struct LsmWriteSpec
{
	bool		enabled;		/* false: "lsm_write_spec": null */
	const char *mode;			/* "bucket", "identity" or "unsharded" */
	const char *column;			/* NULL for unsharded */
	int64_t		num_buckets;	/* bucket only; 0 otherwise */
	bool		all_indexes;	/* maintained_indexes null: every index */
	int			nindexes;
	char	  **indexes;
	int			ndefaults;
	char	  **default_keys;
	char	  **default_values;
} LsmWriteSpec;

/* A decoded error body {"code": N, "error": "..."}; fields may be absent. */
typedef struct LsmErrorBody
{
	bool		has_code;
	int64_t		code;
	char	   *message;		/* NULL when absent */
} LsmErrorBody;

#endif							/* LSM_TYPES_H */
