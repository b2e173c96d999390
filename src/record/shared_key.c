/*-------------------------------------------------------------------------
 *
 * shared_key.c
 *		The key of a table's entry in lancelsm's shared arrays (the
 *		history and pace of src/record/progress.c, the run history of
 *		src/record/run.c), the copy of text into them, and the fair
 *		eviction rule they share.
 *
 * An entry is found by (database, server, table_name): the database's and
 * the foreign server's OIDs, never a name another database could choose.
 * It is held by (database, role): the database and the role
 * (GetUserId()) that wrote it.  When an array is full, a new entry
 * evicts an entry of the holder that holds the most -- its own holder's
 * when that holds at least as many as any other -- so that no database
 * and no role evicts the entries of a holder that holds fewer than it
 * does, however many servers and table names it spreads its entries
 * over: once it holds the largest share, it evicts only its own.  Within
 * the chosen holder, the oldest entry of a table not declared in
 * lancelsm_table goes first, and its declared tables' entries only when
 * it holds no other.  A declared table's entry is never evicted for a
 * table that is not declared, whichever role sends it: such a new entry
 * evicts from the largest holder that holds an undeclared table's entry,
 * and is not kept when every entry is a declared table's (1.5).
 *
 * Text in shared memory (names, messages) is UTF-8, whatever the encoding
 * of the database that wrote it; each reader converts it to its own
 * (src/wire_text.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "record/shared_key.h"
#include "utils/timestamp.h"
#include "wire_text.h"

/* Distinct (database, role) holders counted when choosing whom to evict. */
#define SHARED_MAX_HOLDERS 256

/*
 * shared_key_clip_utf8: copy utf8 (UTF-8 already, such as a task's
 * wire_table_name) into dst of size bytes, clipped at a character
 * boundary so that it fits with its terminator.  Never raises an error.
 */
void
shared_key_clip_utf8(char *dst, const char *utf8, int size)
{
	int			len = strlen(utf8);

	if (len >= size)
		len = pg_encoding_mbcliplen(PG_UTF8, utf8, len, size - 1);
	memcpy(dst, utf8, len);
	dst[len] = '\0';
}

/*
 * shared_key_clip_copy: copy src (database encoding) into dst of size
 * bytes as UTF-8, clipped at a character boundary so that it fits with
 * its terminator.  What UTF-8 cannot hold is escaped.  Never raises an
 * error but out of memory.
 */
void
shared_key_clip_copy(char *dst, const char *src, int size)
{
	bool		lossless;
	char	   *utf8 = lsm_text_to_wire_quiet(src, &lossless);

	shared_key_clip_utf8(dst, utf8, size);
	pfree(utf8);
}

/*
 * shared_key_clip_append: append src (database encoding) to the string in
 * dst (size bytes), clipped at a character boundary.  Never raises an
 * error but out of memory.
 */
void
shared_key_clip_append(char *dst, const char *src, int size)
{
	int			used = strlen(dst);

	if (used < size - 1)
		shared_key_clip_copy(dst + used, src, size - used);
}

/*
 * shared_key_set: the key (not in use yet, age 0) of wire_table_name
 * (UTF-8, as sent; clipped, the whole name's hash tells clipped ones
 * apart) on serverid in this database, held by the current role;
 * declared: the caller knows the table is declared in lancelsm_table.
 * The hash is of the UTF-8 name, so that the same table named from
 * databases of different encodings has one key.
 */
void
shared_key_set(SharedKey *key, Oid serverid, const char *wire_table_name,
			   bool declared)
{
	memset(key, 0, sizeof(SharedKey));
	key->declared = declared;
	key->dbid = MyDatabaseId;
	key->serverid = serverid;
	key->roleid = GetUserId();
	key->name_hash = hash_bytes_extended((const unsigned char *) wire_table_name,
										 strlen(wire_table_name), 0);
	shared_key_clip_utf8(key->table_name, wire_table_name,
						 LSM_PROGRESS_NAME_LEN);
}

/*
 * shared_key_at: entry i of an array of entries of stride bytes, each
 * starting with its SharedKey.
 */
static inline SharedKey *
shared_key_at(void *base, Size stride, int i)
{
	return (SharedKey *) ((char *) base + stride * i);
}

/*
 * shared_key_same: whether two keys name the same table.
 */
static bool
shared_key_same(const SharedKey *a, const SharedKey *b)
{
	return a->dbid == b->dbid && a->serverid == b->serverid &&
		a->name_hash == b->name_hash &&
		strcmp(a->table_name, b->table_name) == 0;
}

/*
 * shared_key_of: whether the entry key k is in use and of database dbid,
 * foreign server serverid and the table of named (a key made by
 * shared_key_set); InvalidOid or NULL matches any.  Never raises an
 * error.
 */
bool
shared_key_of(const SharedKey *k, Oid dbid, Oid serverid,
			  const SharedKey *named)
{
	return k->in_use &&
		(!OidIsValid(dbid) || k->dbid == dbid) &&
		(!OidIsValid(serverid) || k->serverid == serverid) &&
		(named == NULL || (k->name_hash == named->name_hash &&
						   strcmp(k->table_name, named->table_name) == 0));
}

/*
 * shared_same_holder: whether two keys were written by the same
 * (database, role).
 */
static bool
shared_same_holder(const SharedKey *a, const SharedKey *b)
{
	return a->dbid == b->dbid && a->roleid == b->roleid;
}

/*
 * shared_before: whether entry a goes before entry b within a holder:
 * an undeclared table's before a declared one's, then the older.
 */
static bool
shared_before(const SharedKey *a, const SharedKey *b)
{
	if (a->declared != b->declared)
		return !a->declared;
	return a->age < b->age;
}

/*
 * shared_victim: the entry a new key evicts from a full array of n
 * entries, as the head of this file says; -1 when the new key is of a
 * table not declared and every entry is a declared table's.  Holders past
 * the first SHARED_MAX_HOLDERS distinct ones are not counted.  Never
 * raises an error; n > 0.
 */
static int
shared_victim(void *base, Size stride, int n, const SharedKey *key)
{
	int			holder_of[SHARED_MAX_HOLDERS];	/* an entry of each holder */
	int			count[SHARED_MAX_HOLDERS];
	int			first[SHARED_MAX_HOLDERS];	/* its entry to evict first */
	int			nholders = 0;
	int			best = -1;
	int			own = -1;

	for (int i = 0; i < n; i++)
	{
		SharedKey  *k = shared_key_at(base, stride, i);
		int			h = 0;

		while (h < nholders &&
			   !shared_same_holder(shared_key_at(base, stride, holder_of[h]), k))
			h++;
		if (h == nholders)
		{
			if (nholders == SHARED_MAX_HOLDERS)
				continue;
			holder_of[nholders] = i;
			count[nholders] = 0;
			first[nholders] = -1;
			nholders++;
		}
		count[h]++;
		if (k->declared && !key->declared)
			continue;			/* never evicted for an undeclared name */
		if (first[h] < 0 ||
			shared_before(k, shared_key_at(base, stride, first[h])))
			first[h] = i;
	}
	for (int h = 0; h < nholders; h++)
	{
		if (first[h] < 0)
			continue;			/* holds nothing the key may evict */
		if (shared_same_holder(shared_key_at(base, stride, holder_of[h]), key))
			own = h;
		else if (best < 0 || count[h] > count[best])
			best = h;
	}
	if (own >= 0 && (best < 0 || count[own] >= count[best]))
		return first[own];
	return best >= 0 ? first[best] : -1;
}

/*
 * shared_key_slot_new: the slot of a new entry of key in an array of n
 * entries of stride bytes: a free one, else the one the fair rule evicts
 * (*evicts set true then, false otherwise); -1 when n is 0, or when the
 * array holds declared tables' entries only and key's table is not
 * declared (the new entry is then not kept).  The caller holds the
 * array's lock exclusively.  Never raises an error.
 */
int
shared_key_slot_new(void *base, Size stride, int n, const SharedKey *key,
					bool *evicts)
{
	int			i;

	*evicts = false;
	for (i = 0; i < n; i++)
		if (!shared_key_at(base, stride, i)->in_use)
			return i;
	if (n == 0)
		return -1;
	i = shared_victim(base, stride, n, key);
	*evicts = (i >= 0);
	return i;
}

/*
 * shared_key_find: the entry of key in an array of n entries of stride
 * bytes; with for_store and none kept, the slot of a new one
 * (shared_key_slot_new, which sets *evicts); -1 when there is none.
 * *evicts is false unless an entry of another table is to be evicted.
 * The caller holds the array's lock (exclusively for_store).  Never
 * raises an error.
 */
int
shared_key_find(void *base, Size stride, int n, const SharedKey *key,
				bool for_store, bool *evicts)
{
	*evicts = false;
	for (int i = 0; i < n; i++)
	{
		SharedKey  *k = shared_key_at(base, stride, i);

		if (k->in_use && shared_key_same(k, key))
			return i;
	}
	if (!for_store)
		return -1;
	return shared_key_slot_new(base, stride, n, key, evicts);
}

/*
 * shared_outcome_failed: a failure into an outcome cleared before: ok
 * false, the SQLSTATE sqlerrcode, and "message: detail" (database
 * encoding; detail may be NULL) as the outcome's message, clipped, in
 * UTF-8.  Never raises an error but out of memory.
 */
void
shared_outcome_failed(SharedOutcome *outcome, int sqlerrcode,
					  const char *message, const char *detail)
{
	outcome->ok = false;
	strlcpy(outcome->sqlstate, unpack_sql_state(sqlerrcode),
			sizeof(outcome->sqlstate));
	if (message)
		shared_key_clip_append(outcome->message, message,
							   sizeof(outcome->message));
	if (detail)
	{
		shared_key_clip_append(outcome->message, ": ",
							   sizeof(outcome->message));
		shared_key_clip_append(outcome->message, detail,
							   sizeof(outcome->message));
	}
}

/*
 * shared_outcome_text: how a task (its snapshot) that is over ended, into
 * outcome (cleared by the caller): ok, or its failure (SQLSTATE and
 * "errmsg: errdetail", shared_outcome_failed).  A task not finished was
 * ended by its statement's interruption, whose SQLSTATE is
 * interrupted_by.  Never raises an error but out of memory.
 */
static void
shared_outcome_text(const LsmTaskSnapshot *snap, int interrupted_by,
					SharedOutcome *outcome)
{
	const LsmFailure *f = snap->finished ? snap->failure : NULL;

	outcome->ok = snap->finished && f == NULL;
	if (f)
		shared_outcome_failed(outcome, f->sqlerrcode, f->message, f->detail);
	else if (!snap->finished)
	{
		strlcpy(outcome->sqlstate, unpack_sql_state(interrupted_by),
				sizeof(outcome->sqlstate));
		strlcpy(outcome->message, snap->kind == LSM_TASK_CHECKPOINT ?
				"the statement was interrupted (canceled, timed out or failed) before the checkpoint finished" :
				"the statement was interrupted (canceled, timed out or failed) before the action finished",
				sizeof(outcome->message));
	}
}

/*
 * shared_outcome_fill: the key (in use, aged by its end) and the outcome
 * of a task that is over, from its snapshot (a resolved server, started);
 * both are cleared first.  A task not finished yet was ended by its
 * statement's interruption, whose SQLSTATE is interrupted_by.  Never
 * raises an error but out of memory (it runs in an error handler).
 */
void
shared_outcome_fill(SharedKey *key, SharedOutcome *outcome,
					const LsmTaskSnapshot *snap, int interrupted_by)
{
	memset(outcome, 0, sizeof(SharedOutcome));
	shared_key_set(key, snap->serverid, snap->wire_table_name,
				   snap->declared);
	shared_key_clip_copy(outcome->server, snap->server_name,
						 sizeof(outcome->server));
	outcome->started_at = snap->started_at;
	outcome->finished_at = snap->finished ? snap->finished_at :
		GetCurrentTimestamp();
	outcome->passes = snap->counters.passes;
	shared_outcome_text(snap, interrupted_by, outcome);
	key->age = outcome->finished_at;
	key->in_use = true;
}

/*
 * shared_outcome_copy: the copy of a kept entry (its key and outcome)
 * that the views read.  Never raises an error.
 */
void
shared_outcome_copy(const SharedKey *key, const SharedOutcome *outcome,
					LsmHistoryCopy *copy)
{
	copy->dbid = key->dbid;
	copy->ok = outcome->ok;
	memcpy(copy->sqlstate, outcome->sqlstate, sizeof(copy->sqlstate));
	memcpy(copy->server, outcome->server, sizeof(copy->server));
	memcpy(copy->table_name, key->table_name, sizeof(copy->table_name));
	memcpy(copy->message, outcome->message, sizeof(copy->message));
	copy->started_at = outcome->started_at;
	copy->finished_at = outcome->finished_at;
	copy->passes = outcome->passes;
}
