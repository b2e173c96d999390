/*-------------------------------------------------------------------------
 *
 * shared_key.h
 *		The key of a table's entry in lancelsm's shared arrays (history,
 *		pace, runs) and the fair eviction rule they share
 *		(src/record/shared_key.c).  Private to src/record/.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_SHARED_KEY_H
#define LANCELSM_SHARED_KEY_H

#include "record/record.h"

/*
 * What an entry is found by (database, server, table) and evicted by
 * (its holder, the database and role that wrote it; whether its table is
 * declared; its age): the first member of every entry of the arrays.
 * Protected by the lock of its array.
 */
typedef struct SharedKey
{
	bool		in_use;
	bool		declared;		/* the table is declared: evicted last */
	Oid			dbid;			/* the database that wrote it */
	Oid			serverid;		/* the foreign server, in that database */
	Oid			roleid;			/* the role that wrote it; InvalidOid:
								 * read from a file of lancelsm 1.3 */
	uint64		name_hash;		/* of the whole name: clipped ones differ */
	char		table_name[LSM_PROGRESS_NAME_LEN];
	TimestampTz age;			/* evicted oldest first */
} SharedKey;

/*
 * How one action on a table ended, as the history and the run history
 * keep it after its key; protected by the lock of its array.  Its layout
 * is part of the history file's (formats 3 and 4).
 */
typedef struct SharedOutcome
{
	bool		ok;
	char		sqlstate[6];	/* "" for a success */
	char		server[NAMEDATALEN];	/* its name when written */
	char		message[LSM_HISTORY_MESSAGE_LEN];	/* "" for a success */
	TimestampTz started_at;
	TimestampTz finished_at;
	int32		passes;
} SharedOutcome;

extern void shared_key_clip_utf8(char *dst, const char *utf8, int size);
extern void shared_key_clip_copy(char *dst, const char *src, int size);
extern void shared_key_clip_append(char *dst, const char *src, int size);
extern void shared_key_set(SharedKey *key, Oid serverid,
						   const char *wire_table_name, bool declared);
extern void shared_outcome_fill(SharedKey *key, SharedOutcome *outcome,
								const LsmTaskSnapshot *snap,
								int interrupted_by);
extern void shared_outcome_failed(SharedOutcome *outcome, int sqlerrcode,
								  const char *message, const char *detail);
extern void shared_outcome_copy(const SharedKey *key,
								const SharedOutcome *outcome,
								LsmHistoryCopy *copy);
extern bool shared_key_of(const SharedKey *k, Oid dbid, Oid serverid,
						  const SharedKey *named);
extern int	shared_key_find(void *base, Size stride, int n,
							const SharedKey *key, bool for_store,
							bool *evicts);
extern int	shared_key_slot_new(void *base, Size stride, int n,
								const SharedKey *key, bool *evicts);

#endif							/* LANCELSM_SHARED_KEY_H */
