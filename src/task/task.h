/*-------------------------------------------------------------------------
 *
 * task.h
 *		The face of src/task/: the engine that runs operations.  Tasks: one
 *		SQL-level operation on one table (flush, compact, read stats,
 *		checkpoint, the write spec), run as a state machine so that any
 *		number of them progress concurrently on the shared HTTP client;
 *		herds of sessions checkpointing one table.
 *
 * The other headers of src/task/ are private to it; this one includes
 * task/watermark.h for the LsmWatermark a task embeds, and record/record.h
 * for the kinds and snapshots the engine reports to the record.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_TASK_H
#define LANCELSM_TASK_H

#include "datatype/timestamp.h"
#include "lib/ilist.h"
#include "lib/pairingheap.h"

#include "protocol/protocol.h"
#include "record/record.h"
#include "task/watermark.h"

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
	bool		records;		/* its caller may record: it counts in a
								 * declared table's counters and last
								 * stats */

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
	char		request_id[LSM_REQUEST_ID_LEN + 1]; /* of its last request:
													 * a write spec retry
													 * sends it again */

	/* fresh reads (docs/protocol.md, "Fresh reads") */
	uint64		floor_version;	/* a checkpoint's reads demand at least
								 * this: its flush's answer's version */
	bool		time_floor;		/* its flush answered no version: its reads
								 * carry x-lancedb-min-timestamp until one
								 * answers a version */
	bool		version_forgotten;	/* a read was refused for its kept
									 * version, forgotten, and sent again */

	/* the driver's bookkeeping (driver.c), so that no event scans the call */
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
	const char *note;			/* src/task/herd.c: how a run of another backend
								 * ended it ("joined ...", "skipped ..."); NULL
								 * otherwise */
	bool		skipped;		/* src/task/herd.c: a run of its table was going */
	bool		answered;		/* a request got its expected answer: the
								 * server knows the table */
	TimestampTz started_at;
	TimestampTz finished_at;
} LsmTask;

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
extern void lsm_task_set_records(LsmTask *task, bool records);
extern void lsm_task_set_failure(LsmTask *task, LsmFailure *failure);
extern void lsm_task_snapshot(const LsmTask *task, LsmTaskSnapshot *snap);

/* in driver.c */
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

#endif							/* LANCELSM_TASK_H */
