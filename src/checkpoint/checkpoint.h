/*-------------------------------------------------------------------------
 *
 * checkpoint.h
 *		The face of src/checkpoint/: running operations.  Tasks: one
 *		SQL-level operation on one table (flush, compact, read stats,
 *		checkpoint, the write spec), run as a state machine so that any
 *		number of them progress concurrently on the shared HTTP client;
 *		herds of sessions checkpointing one table; copies of the progress
 *		and history kept in shared memory; the folder's set-up.
 *
 * The other headers of src/checkpoint/ are private to it; this one
 * includes checkpoint/watermark.h for the LsmWatermark a task embeds.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_CHECKPOINT_H
#define LANCELSM_CHECKPOINT_H

#include "datatype/timestamp.h"
#include "lib/ilist.h"
#include "lib/pairingheap.h"

#include "checkpoint/watermark.h"
#include "protocol/protocol.h"

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

/* Where a task stands. */
typedef enum LsmPhase
{
	LSM_PHASE_FLUSH,			/* issuing flush */
	LSM_PHASE_WATERMARK,		/* issuing the stats read that sets targets */
	LSM_PHASE_COMPACT,			/* issuing compact */
	LSM_PHASE_POLL,				/* issuing a stats poll */
	LSM_PHASE_SPEC,				/* issuing the one write spec request */
	LSM_PHASE_DONE
} LsmPhase;

typedef struct LsmTask
{
	/* what to do */
	LsmTaskKind kind;
	const LsmConfig *config;
	const char *table_name;
	const char *wire_table_name;	/* table_name in UTF-8, as sent */
	bool		include_generation_rows;
	bool		trigger_only;	/* compact, checkpoint: return once compaction
								 * is triggered, without waiting for it */
	bool		row_deadline;	/* one of many tables of a call: stop
								 * waiting at lsm_statement_row_deadline,
								 * failing with 57014 */
	const char *stats_body;		/* the get_lsm_stats request body */
	LsmKeySpelling sent_keys;	/* the spelling stats_body asks in */
	bool		keys_resent;	/* asked again in the server's spelling */
	const char *spec_body;		/* the set_lsm_write_spec request body */
	LsmRunSource source;		/* who started it (the run history) */
	bool		declared;		/* its table is declared in lancelsm_table:
								 * its shared entries are evicted last */

	/* where it stands */
	LsmPhase	phase;
	struct LsmRequest *req;	/* src/net/http.c; NULL: none issued yet */
	bool		in_flight;
	TimestampTz wake_at;		/* sleeping until then; 0: not sleeping */
	int			retries;		/* of the current request */
	int			reissues;		/* of the checkpoint, after 421 */
	LsmWatermark watermark;		/* checkpoint targets and poll state */
	bool		backing_off;	/* sleeping before a retry or re-issue */
	int			total_retries;	/* over the whole task */
	int			progress_slot;	/* shared progress entry; -1: none */
	double		rate_tokens;	/* checkpoint request budget (task.c) */
	TimestampTz rate_at;		/* when rate_tokens was last refilled */

	/* the driver's bookkeeping (task.c), so that no event scans the call */
	int			run_index;		/* position in the driver's array */
	bool		ready;			/* its request is due, not yet sent */
	bool		asleep;			/* in the driver's heap of timers */
	TimestampTz asleep_until;	/* its key there */
	pairingheap_node sleep_node;
	bool		ranked;			/* in its drain's queue, by rank, instead */
	pairingheap_node rank_node;
	bool		straggling;		/* asleep on a poll its drain may move */
	dlist_node	straggler_node;
	struct LsmTask *queue_next; /* next ready task waiting for its pool */
	struct TaskGate *gate;		/* its server's requests in flight */
	uint64		window_seq;		/* its request's number in the gate's window */

	/* outcome */
	LsmFailure *failure;		/* NULL: succeeded (once phase is DONE) */
	LsmStats   *stats;			/* LSM_TASK_STATS: the decoded answer */
	LsmWriteSpec *spec;			/* LSM_TASK_GET_SPEC: the decoded answer */
	int			passes;			/* compact calls answered 2xx */
	int			polls;			/* stats reads */
	int			requests;		/* requests sent, retries included */
	const char *note;			/* src/checkpoint/herd.c: how a run of another backend
								 * ended it ("joined ...", "skipped ..."); NULL
								 * otherwise */
	bool		skipped;		/* src/checkpoint/herd.c: a run of its table was going */
	bool		answered;		/* a request got its expected answer: the
								 * server knows the table */
	TimestampTz started_at;
	TimestampTz finished_at;
} LsmTask;

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
								 * outstanding L0, UTF-8; "": none */
	const char *waiting_status; /* its status, as the server sent it */
	bool		finished;		/* its phase is done */
	const LsmFailure *failure;	/* once finished: NULL on success */
	bool		answered;		/* the server knew the table (a 2xx) */
	LsmRunSource source;		/* who started it */
	bool		declared;		/* its table is declared */
	int32		requests;		/* requests sent, retries included */
	LsmTaskCounters counters;
	TimestampTz started_at;		/* 0: never started */
	TimestampTz finished_at;
	int			progress_slot;	/* shared progress entry; -1: none */
} LsmTaskSnapshot;

/* in task.c */
extern void lsm_task_init(LsmTask *task, LsmTaskKind kind,
						  const LsmConfig *config, const char *table_name,
						  bool include_generation_rows);
extern void lsm_task_set_config(LsmTask *task, const LsmConfig *config);
extern void lsm_task_set_body(LsmTask *task, const char *body);
extern void lsm_task_set_trigger_only(LsmTask *task);
extern void lsm_task_set_row_deadline(LsmTask *task);
extern void lsm_task_set_source(LsmTask *task, LsmRunSource source,
								bool declared);
extern void lsm_task_set_failure(LsmTask *task, LsmFailure *failure);
extern void lsm_task_snapshot(const LsmTask *task, LsmTaskSnapshot *snap);
/*
 * The most herd entries and progress entries one call claims: a call over
 * more tables runs the rest unshared and unlisted, so that no call fills
 * a registry.  32 is also the most connections a call opens to one
 * server (src/net/pool.c), so it covers every table a call can have
 * requests in flight for at once over HTTP/1.1; with the registries'
 * default 256 entries, eight such calls fit at once.
 */
#define LSM_CALL_MAX_CLAIMS 32

/*
 * Told of a task by lsm_task_run_all_notify the moment it finishes; index
 * is the task's position in the array the driver was given.
 */
typedef void (*LsmTaskDone) (LsmTask *task, int index, void *arg);

extern void lsm_task_run_all(LsmTask **tasks, int ntasks);
extern void lsm_task_run_all_notify(LsmTask **tasks, int ntasks,
									LsmTaskDone done, void *arg);

/* in herd.c */
/* What a task does about a checkpoint of its table already running. */
typedef enum LsmHerdMode
{
	LSM_HERD_JOIN,				/* join it, or wait for it and lead the next */
	LSM_HERD_SKIP				/* skip the table, with a note */
} LsmHerdMode;

extern void lsm_herd_shmem_init(void);
extern void lsm_herd_run_all(LsmTask **tasks, int ntasks, LsmHerdMode mode);
extern bool lsm_herd_skipped(const LsmTask *task);
extern bool lsm_herd_usage(int *running, int *max);

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
} LsmRunCopy;

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
extern void lsm_counters_record_stats(const LsmTask *task,
									  const LsmStatsRead *read);

/* in shmem.c */
extern void lsm_checkpoint_init(void);
extern bool lsm_entries_max(int *progress, int *history);

#endif							/* LANCELSM_CHECKPOINT_H */
