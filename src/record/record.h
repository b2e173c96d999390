/*-------------------------------------------------------------------------
 *
 * record.h
 *		The face of src/record/: what lancelsm remembers and reports, kept
 *		in shared memory.  Progress of running checkpoints, the last
 *		outcome of each table's checkpoint, the run history, the table
 *		counters and the stats last read, the pace memory; the copies the
 *		views' SQL functions turn into rows; the folder's set-up.
 *
 * The engine (src/task/) reports events here as plain structs (an
 * LsmTaskSnapshot, an LsmPace, an LsmStatsRead); the record never calls
 * the engine.  The other headers of src/record/ are private to it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_RECORD_H
#define LANCELSM_RECORD_H

#include "datatype/timestamp.h"

#include "protocol/protocol.h"

/* What an operation on a table is: the kind of a task (src/task/). */
typedef enum LsmTaskKind
{
	LSM_TASK_FLUSH,
	LSM_TASK_COMPACT,
	LSM_TASK_STATS,
	LSM_TASK_CHECKPOINT,
	LSM_TASK_SET_SPEC,			/* install the LSM write spec */
	LSM_TASK_UNSET_SPEC,		/* remove it */
	LSM_TASK_GET_SPEC			/* read it */
} LsmTaskKind;

/* Who started a task that acts on a table, as the run history shows it. */
typedef enum LsmRunSource
{
	LSM_RUN_DIRECT,				/* lancelsm_flush, _compact, _checkpoint */
	LSM_RUN_CHECKPOINT_ALL,		/* lancelsm_checkpoint_all() */
	LSM_RUN_CHECKPOINT_DUE		/* lancelsm_checkpoint_due() */
} LsmRunSource;

/* Longest bucket name or status kept for messages, with its NUL. */
#define LSM_WATERMARK_NAME_LEN 64

/*
 * What is known of a table's pass duration, in milliseconds from the
 * answer to the compact trigger to the poll that saw the pass over: the
 * last pass was still running at lo_ms and was over at hi_ms.
 * hi_ms == 0: nothing is known.  agreed: how many checkpoints in a row,
 * the last of them the one that learnt it, found their passes where the
 * one before had left them (lsm_pace_check_agreed); from two on, the
 * bracket is steady (src/task/pace.c).
 */
typedef struct LsmPace
{
	int32		lo_ms;
	int32		hi_ms;
	int16		agreed;
	int16		at_once;		/* passes in a row seen over at their first
								 * poll since the bracket last widened */
} LsmPace;

/* The counters of a task as lancelsm_progress shows them. */
typedef struct LsmTaskCounters
{
	int64		target;			/* -1: no watermark yet */
	int64		outstanding;	/* -1: not evaluated yet */
	int32		passes;
	int32		polls;
	int32		retries;		/* over the whole task */
	int32		reissues;
	int32		stalled_passes; /* passes ended in a row without a drop in
								 * the outstanding count */
} LsmTaskCounters;

/*
 * Passes that end in a row (the latch goes from held to free, or a compact
 * answered 2xx is followed by a poll with the latch free) without the
 * outstanding count dropping, from which the checkpoint's diagnosis names
 * what may keep them listed: retention while an index catches up, garbage
 * collection, or passes that merged nothing (docs/protocol.md,
 * "The checkpoint loop").  Three: a pass always merges a non-empty prefix
 * of the oldest generations, so one that ends without a drop is already
 * unexpected; two in a row still allow a pass the server failed and a
 * stats read that saw the latch released before the merged generations
 * left the list.  The checkpoint waits on all the same, as the SDK's does:
 * only lancelsm.max_idle_polls ends it early.
 */
#define LSM_STALL_SUSPECT_PASSES 3

/*
 * What progress reporting needs of a task, copied out of it by
 * lsm_task_snapshot; the strings and the failure belong to the task.
 */
typedef struct LsmTaskSnapshot
{
	LsmTaskKind kind;
	bool		trigger_only;
	const char *server_name;	/* NULL: no server resolved */
	Oid			serverid;		/* InvalidOid: no server resolved */
	const char *table_name;
	const char *wire_table_name;	/* table_name in UTF-8, as sent */
	const char *phase;			/* as lancelsm_progress shows it */
	const char *waiting_bucket; /* a bucket that is not Active holding
								 * outstanding L0, else once a pass ended
								 * without a drop one holding outstanding
								 * L0 (lsm_watermark_waiting), UTF-8; "":
								 * none */
	const char *waiting_status; /* its status, as the server sent it */
	bool		finished;		/* its phase is done */
	const LsmFailure *failure;	/* once finished: NULL on success */
	bool		answered;		/* the server knew the table (a 2xx) */
	LsmRunSource source;		/* who started it */
	bool		declared;		/* its table is declared */
	bool		records;		/* its caller may record (a declared
								 * table's counters and last stats) */
	int32		requests;		/* requests sent, retries included */
	LsmTaskCounters counters;
	TimestampTz started_at;		/* 0: never started */
	TimestampTz finished_at;
	int			progress_slot;	/* shared progress entry; -1: none */
} LsmTaskSnapshot;

/* in progress.c */
/* The longest strings progress and history keep, in bytes with the
 * terminator (longer ones are clipped at a character boundary). */
#define LSM_PROGRESS_NAME_LEN 256	/* a table name */
#define LSM_HISTORY_MESSAGE_LEN 512 /* a history message */
#define LSM_PROGRESS_PHASE_LEN 16	/* a phase */

/*
 * A copy of one running checkpoint's progress entry, as lancelsm_progress
 * shows it.  The names are UTF-8, as shared memory keeps them whatever the
 * encoding of the database that wrote them: a reader converts them to its
 * own (wire_text.h).
 */
typedef struct LsmProgressCopy
{
	int			pid;
	Oid			dbid;			/* the checkpoint's database */
	Oid			roleid;			/* its backend's session user, as
								 * pg_stat_activity's usesysid */
	TimestampTz started_at;
	char		server[NAMEDATALEN];
	char		table_name[LSM_PROGRESS_NAME_LEN];
	char		phase[LSM_PROGRESS_PHASE_LEN];	/* ASCII */
	char		waiting_bucket[LSM_WATERMARK_NAME_LEN]; /* "": none */
	char		waiting_status[LSM_WATERMARK_NAME_LEN];
	LsmTaskCounters counts;
} LsmProgressCopy;

/*
 * A copy of one history entry: the last outcome of one table's
 * checkpoint.  Strings are UTF-8, as in LsmProgressCopy; sqlstate and
 * message are "" for a success.
 */
typedef struct LsmHistoryCopy
{
	Oid			dbid;			/* the database that wrote it */
	bool		ok;
	char		sqlstate[6];
	char		server[NAMEDATALEN];	/* its name when written */
	char		table_name[LSM_PROGRESS_NAME_LEN];
	char		message[LSM_HISTORY_MESSAGE_LEN];
	TimestampTz started_at;
	TimestampTz finished_at;
	int32		passes;
	TimestampTz removed_at;		/* when lancelsm_remove_table removed its
								 * table; 0: not removed */
} LsmHistoryCopy;

/*
 * A copy of one run-history entry: one flush, compact or checkpoint that
 * ended, its outcome as a history entry's copy.
 */
typedef struct LsmRunCopy
{
	LsmHistoryCopy outcome;
	uint64		seq;			/* the order runs were recorded in */
	LsmTaskKind kind;			/* flush, compact or checkpoint */
	LsmRunSource source;
	int32		polls;
	int32		requests;
	int32		reads_sent;		/* kind LSM_TASK_STATS: a due run's entry */
	int32		reads_skipped;	/* its stats reads, as LsmDueReads counts */
} LsmRunCopy;

/*
 * The stats reads of one lancelsm_checkpoint_due() call, for its entry in
 * the run history (lsm_run_record_due).
 */
typedef struct LsmDueReads
{
	int32		sent;			/* tables whose stats read sent a request */
	int32		requests;		/* the stats requests, retries included */
	int32		skipped;		/* tables not read: next read not due */
	TimestampTz started_at;		/* when the call started */
} LsmDueReads;

/* The actions the table counters count, in their rows' order. */
typedef enum LsmCountedAction
{
	LSM_COUNTED_FLUSH,
	LSM_COUNTED_COMPACT,
	LSM_COUNTED_CHECKPOINT,
	LSM_COUNTED_ACTIONS			/* their number */
} LsmCountedAction;

/* What the table counters add up for one action on one table. */
typedef struct LsmActionCounts
{
	int64		runs;
	int64		failures;		/* runs that failed or were interrupted */
	int64		passes;
	int64		polls;
	int64		requests;		/* retries included */
	int64		retries;
	int64		usecs;			/* time in the runs, microseconds */
} LsmActionCounts;

/*
 * What lancelsm last read of a table's stats, its totals over the
 * buckets as lancelsm_table_stats shows them, kept with the table's
 * counters (lancelsm_last_stats).
 */
typedef struct LsmStatsRead
{
	TimestampTz read_at;		/* 0: never read */
	bool		ok;				/* false: the read failed, numbers 0 */
	char		sqlstate[6];	/* of the failure; "" for a success */
	bool		lsm_enabled;
	int32		buckets;
	int64		l0_generations;
	int64		l0_bytes;
	int64		memtable_rows;
	int64		wal_lag_total;
	int64		wal_lag_max;
	int32		compacting_buckets;
} LsmStatsRead;

/*
 * A copy of one table's counters entry, as lancelsm_table_counters and
 * lancelsm_last_stats show it; strings UTF-8, as in LsmProgressCopy.
 */
typedef struct LsmCountersCopy
{
	Oid			dbid;
	Oid			serverid;		/* an OID of database dbid */
	char		server[NAMEDATALEN];	/* its name when last counted */
	char		table_name[LSM_PROGRESS_NAME_LEN];
	TimestampTz since;			/* when the entry was created */
	LsmActionCounts actions[LSM_COUNTED_ACTIONS];
	LsmStatsRead last_stats;
} LsmCountersCopy;

extern bool lsm_progress_available(void);
extern const char *lsm_progress_diagnosis(const LsmTaskCounters *counts);
extern LsmProgressCopy *lsm_progress_copy(int *n);
extern uint64 lsm_progress_skipped_count(void);
extern bool lsm_evicted_counts(uint64 *history, uint64 *pace);
extern LsmHistoryCopy *lsm_history_copy(int *n);
extern void lsm_history_reset(void);

/* in run.c */
extern LsmRunCopy *lsm_run_copy(int *n);
extern bool lsm_run_usage(int *used, int *max, uint64 *evicted);

/* in counters.c */
extern LsmCountersCopy *lsm_counters_copy(int *n);
extern int64 lsm_counters_reset(Oid dbid, Oid serverid,
								const char *table_name);
extern bool lsm_counters_usage(int *used, int *max, uint64 *evicted);
extern void lsm_counters_record_stats(const LsmTaskSnapshot *snap,
									  const LsmStatsRead *read);

/*
 * What the engine reports (src/task/task.c), from a task's snapshot;
 * interrupted_by: the SQLSTATE of the error that ended the call, 0: none.
 */
/* in progress.c */
extern int	lsm_progress_begin(const LsmTaskSnapshot *snap, bool listed);
extern void lsm_progress_update(const LsmTaskSnapshot *snap);
extern void lsm_progress_end(const LsmTaskSnapshot *snap,
							 int interrupted_by);
/* wire_table_name: UTF-8, as sent */
extern bool lsm_pace_recall(Oid serverid, const char *wire_table_name,
							LsmPace *pace);
extern void lsm_pace_remember(Oid serverid, const char *wire_table_name,
							  bool declared,
							  const LsmPace *pace);
/* in run.c */
extern void lsm_run_record(const LsmTaskSnapshot *snap, int interrupted_by);
extern void lsm_run_record_due(const LsmDueReads *reads,
							   const ErrorData *error);
/* in counters.c */
extern void lsm_counters_record(const LsmTaskSnapshot *snap,
								int interrupted_by);

/* in forget.c: removals applied when the transaction commits */
extern void lsm_record_forget_table(Oid serverid,
									const char *wire_table_name);
extern void lsm_record_forget_database(void);

/* in outcome_queue.c and outcome_launcher.c */

/* Room for an outcome's words, table name and message in the queue. */
#define LSM_OUTCOME_WORD_LEN 16		/* an action or a source */
#define LSM_OUTCOME_NAME_LEN 1032	/* a table name, up to 1024 bytes */
#define LSM_OUTCOME_MESSAGE_LEN 1024	/* a message, clipped */

/*
 * The outcome of one action on one declared table, as lancelsm_table's
 * last_* columns record it (src/functions/outcome.c): what the queue
 * keeps for a worker when the caller's transaction rolls back.
 */
typedef struct LsmOutcomeRecord
{
	Oid			relid;			/* lancelsm_table */
	const char *server;
	const char *table_name;
	const char *action;			/* stats, flush, compact, checkpoint */
	const char *source;			/* direct, checkpoint_all, checkpoint_due */
	bool		ok;
	const char *sqlstate;		/* NULL for a success */
	const char *message;		/* NULL: none */
	TimestampTz started_at;		/* 0: never started */
	TimestampTz finished_at;
	bool		checkpointed;	/* a successful checkpoint: moves
								 * last_checkpoint_at to started_at */
	bool		only_if_failing;	/* written only over a failed outcome */
} LsmOutcomeRecord;

extern int	lsm_max_pending_outcomes;
extern void lsm_outcome_queue_shmem_init(void);
extern bool lsm_outcome_queue_available(void);
extern void lsm_outcome_stage(const LsmOutcomeRecord *rec);
extern int	lsm_outcome_queue_take(Oid dbid, LsmOutcomeRecord *recs, int max);
extern int	lsm_outcome_queue_databases(Oid *dbids, int max);
extern void lsm_outcome_queue_set_launcher(bool running);
extern bool lsm_outcome_queue_usage(int *pending, int *max, uint64 *dropped);
extern void lsm_outcome_queue_drop(int n);
extern void lsm_outcome_launcher_register(void);

/* in shmem.c */
extern void lsm_record_init(void);
extern bool lsm_entries_max(int *progress, int *history);

#endif							/* LANCELSM_RECORD_H */
