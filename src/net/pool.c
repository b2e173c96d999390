/*-------------------------------------------------------------------------
 *
 * pool.c
 *		Connection pools and the wait loop of the HTTP route client.
 *
 * Each backend keeps one libcurl multi handle per (server, user mapping):
 * its keep-alive connections are reused by every later call as that role
 * on that server, and any number of requests run on it at once; over
 * HTTP/2 they run as streams of one connection.  When the server's or the
 * user mapping's options change, a syscache invalidation
 * callback marks the pool stale (as postgres_fdw does for its connections);
 * a stale pool is closed, connections and all, as soon as nothing is in
 * flight on it, so the next call connects afresh with the new options.
 * A change of lancelsm.allowed_endpoints marks every pool stale the same
 * way (lsm_pool_invalidate_all): no request goes out on a connection the
 * setting in force did not check.  lancelsm_get_connections() and
 * lancelsm_disconnect() list and close the pools (lsm_pool_list,
 * lsm_pool_disconnect).
 *
 * Waiting is done on a WaitEventSet holding the session latch, postmaster
 * death and the sockets of every pool, kept from one wait to the next
 * while requests are in flight (pool_set), with the earliest curl timer
 * as the timeout: a query cancel or statement_timeout sets the latch, and
 * CHECK_FOR_INTERRUPTS() raises PostgreSQL's own error within one wakeup,
 * whatever curl is doing (resolving, connecting, TLS, sending, waiting for
 * a silent server, reading a dripping body).  Errors raised between curl
 * calls leave requests in flight: the caller's PG_CATCH must take them off
 * with lsm_pool_abort_next().  No error is raised inside a curl callback.
 *
 * The pools deal in libcurl easy handles, each with an opaque owner
 * pointer, and hand back finished handles with their CURLcode; what a
 * handle is for, and how its end is classified, is src/net/http.c's business
 * (pool.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <curl/curl.h>

#include "deadline.h"
#include "miscadmin.h"
#include "net/net.h"
#include "net/pool.h"
#include "storage/latch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "pg_compat.h"

/* The multi handle of one (server, user mapping), with its curl timer. */
typedef struct HttpPool
{
	Oid			serverid;
	Oid			umid;
	uint32		server_hash;	/* syscache hash of serverid */
	uint32		mapping_hash;	/* syscache hash of umid */
	bool		stale;			/* options changed: close when idle */
	bool		one_connection; /* HTTP/2 expected: one connection at a time */
	int			ninflight;
	CURLM	   *multi;
	TimestampTz timer_at;		/* -1: curl wants no timeout */
	struct HttpPool *next;
} HttpPool;

/*
 * One socket curl asked us to watch, for what (CURL_POLL_*), for whom, and
 * where it sits in the kept WaitEventSet (pos -1: not in it).
 */
typedef struct HttpSocket
{
	curl_socket_t fd;
	int			what;
	HttpPool   *pool;
	int			pos;
} HttpSocket;

/*
 * One socket's place in the kept WaitEventSet (pool_set), by position:
 * what curl wants of it (0: parked, curl no longer watches it), the
 * events it is registered for and, once parked, the identity of the
 * socket (its descriptor's device and inode), which its number is not.
 */
typedef struct PoolSlot
{
	curl_socket_t fd;
	int			what;
	HttpPool   *pool;
	uint32		events;
	dev_t		dev;
	ino_t		ino;
} PoolSlot;

/*
 * Connections one pool may hold, busy or idle: as many as the requests one
 * call keeps in flight on it at most (LSM_MAX_REQUESTS_IN_FLIGHT), since
 * over HTTP/1.1 each request in flight needs a connection of its own, and
 * a lower cap would bound the call at a cloud's round trip.  A checkpoint
 * of 1,500 tables still does not open 1,500 sockets, and each socket is
 * reserved with PostgreSQL's external descriptor accounting
 * (src/net/socket.c), so pools cannot use up max_files_per_process.
 * Requests past this (from several calls' tasks sharing the pool) wait in
 * libcurl's queue, still bounded by the statement's deadline.
 */
#define POOL_MAX_CONNECTIONS LSM_MAX_REQUESTS_IN_FLIGHT

static HttpPool *pools = NULL;
static bool pool_callbacks_registered = false;
static LsmPoolCloseHook pool_close_hook = NULL;

static HttpSocket *pool_sockets = NULL;
static int	pool_nsockets = 0;
static int	pool_socket_cap = 0;

/*
 * A socket src/net/socket.c opened, and the pool whose socket callback
 * first saw it (NULL before that): a pool's open connections, busy or
 * idle, are these sockets.
 */
typedef struct PoolOwned
{
	curl_socket_t fd;
	HttpPool   *pool;
} PoolOwned;

/*
 * The sockets src/net/socket.c opened and has not closed yet: the only
 * ones that may stay parked in the kept set, because only their close is
 * reported (lsm_pool_socket_closed).  libcurl hands over descriptors of
 * its own too (the threaded resolver's socketpair) and closes them
 * unseen, and the kernel gives their number to the next socket at once.
 */
static PoolOwned *pool_owned = NULL;
static int	pool_nowned = 0;
static int	pool_owned_cap = 0;

/*
 * The WaitEventSet of the latch, postmaster death and curl's sockets,
 * kept from one wait to the next while requests are in flight, with
 * pool_slots saying what each position holds.  A WaitEventSet cannot drop
 * an event, and libcurl stops watching a keep-alive connection between
 * two requests on it, so such a socket stays in the set, parked: watched
 * for its peer closing only (WL_SOCKET_CLOSED), taken up again in place
 * (ModifyWaitEvent) when curl watches the very same socket again.  Only
 * sockets lancelsm opened are parked (pool_owned).  The set is built
 * afresh (pool_set_stale) only when a new socket comes, a socket closes
 * (lsm_pool_socket_closed), curl stops watching a descriptor of its own
 * or a parked peer hangs up.  It belongs to no resource owner:
 * lsm_pool_wait frees it on every error, lsm_pool_abort_next once the
 * requests in flight are aborted, and lsm_pool_waits_over when the
 * caller's waits are over (pool_set_free), so no descriptor outlives the
 * requests and the waits for them.  pool_untrack frees it as well when
 * the last request in flight finishes; the next wait builds it once and
 * it is kept while the caller's timers alone are pending, nothing in
 * flight: a call of many tables otherwise built it afresh for most of its
 * polls (now about once per 15 requests at 3,000 tables, each with only
 * the few events then watched).
 */
static WaitEventSet *pool_set = NULL;
static bool pool_set_stale = true;
static PoolSlot *pool_slots = NULL;
static int	pool_nslots = 0;

static void pool_set_free(void);

/* One easy handle in flight, on which pool, for whom. */
typedef struct PoolEntry
{
	CURL	   *easy;
	HttpPool   *pool;
	void	   *owner;
} PoolEntry;

/* Handles in flight on any pool, so that an error can abort them all. */
static PoolEntry *pool_inflight = NULL;
static int	pool_ninflight = 0;
static int	pool_inflight_cap = 0;

/*
 * pool_grow: array (of *cap elements of elem bytes, count of them in use),
 * with room for one more: itself, or a copy twice as large in
 * TopMemoryContext (*cap updated, array freed).  Raises nothing: NULL when
 * out of memory, array then unchanged.
 */
static void *
pool_grow(void *array, int *cap, int count, Size elem)
{
	int			newcap = Max(16, *cap * 2);
	void	   *grown;

	if (count < *cap)
		return array;
	grown = MemoryContextAllocExtended(TopMemoryContext, newcap * elem,
									   MCXT_ALLOC_NO_OOM);
	if (grown == NULL)
		return NULL;
	if (array)
	{
		memcpy(grown, array, count * elem);
		pfree(array);
	}
	*cap = newcap;
	return grown;
}

/*
 * pool_parked_slot: the position where the very socket fd is parked in
 * the kept set (the same device and inode as when it was parked), or -1.
 */
static int
pool_parked_slot(curl_socket_t fd)
{
	struct stat st;

	if (pool_set == NULL || pool_set_stale)
		return -1;
	for (int pos = 2; pos < pool_nslots; pos++)
	{
		PoolSlot   *slot = &pool_slots[pos];

		if (slot->fd != fd || slot->what != 0)
			continue;
		/* the number may be another socket's by now */
		if (fstat(fd, &st) != 0 || st.st_dev != slot->dev ||
			st.st_ino != slot->ino)
			return -1;
		return pos;
	}
	return -1;
}

/*
 * pool_slot_park: curl no longer watches the socket at position pos, one
 * that src/net/socket.c opened: keep it in the set, parked, with its
 * identity; a socket that cannot be told apart makes the set stale.
 */
static void
pool_slot_park(int pos)
{
	PoolSlot   *slot = &pool_slots[pos];
	struct stat st;

	slot->what = 0;
	if (fstat(slot->fd, &st) != 0)
	{
		pool_set_stale = true;
		return;
	}
	slot->dev = st.st_dev;
	slot->ino = st.st_ino;
}

/*
 * pool_owned_index: the index of fd in pool_owned, or -1.
 */
static int
pool_owned_index(curl_socket_t fd)
{
	for (int i = 0; i < pool_nowned; i++)
		if (pool_owned[i].fd == fd)
			return i;
	return -1;
}

/*
 * lsm_pool_socket_opened: src/net/socket.c opened socket fd and will
 * report its close.  Out of memory, it is not recorded: then it is never
 * parked, which costs a rebuild of the set, never a wrong one.
 */
void
lsm_pool_socket_opened(curl_socket_t fd)
{
	PoolOwned  *grown = pool_grow(pool_owned, &pool_owned_cap,
								  pool_nowned, sizeof(PoolOwned));

	if (grown == NULL)
		return;
	pool_owned = grown;
	pool_owned[pool_nowned].fd = fd;
	pool_owned[pool_nowned].pool = NULL;
	pool_nowned++;
}

/*
 * lsm_pool_socket_closed: a socket src/net/socket.c opened is being
 * closed: the kept set may hold it, so it is built afresh at the next
 * wait (a closed descriptor leaves epoll by itself, and its number may
 * come back as another socket).
 */
void
lsm_pool_socket_closed(curl_socket_t fd)
{
	int			i = pool_owned_index(fd);

	if (i >= 0)
		pool_owned[i] = pool_owned[--pool_nowned];
	pool_set_stale = true;
}

/*
 * lsm_pool_holds_wait_set: whether the kept set exists, with its external
 * descriptor (a stale one is freed before it is built again, so it keeps
 * its descriptor's place).  Declared in pool.h.
 */
bool
lsm_pool_holds_wait_set(void)
{
	return pool_set != NULL;
}

/*
 * pool_socket_cb: curl's socket callback; keeps pool_sockets in step with
 * the sockets curl wants watched.  Returns -1 (abort) only when the table
 * cannot grow.
 */
static int
pool_socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp,
			   void *socketp)
{
	int			i;
	int			owned = pool_owned_index(fd);

	if (owned >= 0 && what != CURL_POLL_REMOVE)
		pool_owned[owned].pool = (HttpPool *) userp;
	for (i = 0; i < pool_nsockets; i++)
		if (pool_sockets[i].fd == fd)
			break;
	if (what == CURL_POLL_REMOVE)
	{
		if (i < pool_nsockets)
		{
			/*
			 * A socket lancelsm opened stays in the set, parked (pool_set);
			 * a descriptor of libcurl's own is closed unseen: dropped.
			 */
			if (owned < 0)
				pool_set_stale = true;
			else if (pool_sockets[i].pos >= 0)
				pool_slot_park(pool_sockets[i].pos);
			pool_sockets[i] = pool_sockets[--pool_nsockets];
		}
		return 0;
	}
	if (i == pool_nsockets)
	{
		HttpSocket *grown = pool_grow(pool_sockets, &pool_socket_cap,
									  pool_nsockets, sizeof(HttpSocket));

		if (grown == NULL)
			return -1;
		pool_sockets = grown;
		pool_nsockets++;
		pool_sockets[i].pos = pool_parked_slot(fd);
		if (pool_sockets[i].pos < 0)
			pool_set_stale = true;
	}
	pool_sockets[i].fd = fd;
	pool_sockets[i].what = what;
	pool_sockets[i].pool = (HttpPool *) userp;
	if (pool_sockets[i].pos >= 0)
	{
		pool_slots[pool_sockets[i].pos].what = what;
		pool_slots[pool_sockets[i].pos].pool = (HttpPool *) userp;
	}
	return 0;
}

/*
 * pool_timer_cb: curl's timer callback; remembers when the pool's multi
 * handle next wants curl_multi_socket_action(CURL_SOCKET_TIMEOUT).
 */
static int
pool_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	HttpPool   *pool = (HttpPool *) userp;

	if (timeout_ms < 0)
		pool->timer_at = -1;
	else
		pool->timer_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													 timeout_ms);
	return 0;
}

/*
 * pool_invalidate: syscache callback for pg_foreign_server and
 * pg_user_mapping: mark the pools of the changed object stale (all of
 * them when hashvalue is 0).  Only marks: nothing is closed here.
 */
static void
pool_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	for (HttpPool *pool = pools; pool; pool = pool->next)
	{
		uint32		h = cacheid == FOREIGNSERVEROID ?
			pool->server_hash : pool->mapping_hash;

		if (hashvalue == 0 || h == hashvalue)
			pool->stale = true;
	}
}

/*
 * lsm_pool_invalidate_all: mark every pool stale, to be closed before
 * its next request (lancelsm.allowed_endpoints changed).  Only marks:
 * raises nothing and allocates nothing, so a GUC assign hook may call it.
 */
void
lsm_pool_invalidate_all(void)
{
	for (HttpPool *pool = pools; pool; pool = pool->next)
		pool->stale = true;
}

/*
 * pool_close: close pool, which has nothing in flight, and unlink it
 * (*link points at it): libcurl closes its connections through the
 * close-socket callback; entries that still name it are cleared.
 */
static void
pool_close(HttpPool **link)
{
	HttpPool   *pool = *link;

	Assert(pool->ninflight == 0);
	*link = pool->next;
	if (pool_close_hook)
		pool_close_hook(pool->serverid, pool->umid);
	curl_multi_cleanup(pool->multi);
	for (int i = pool_nsockets - 1; i >= 0; i--)
		if (pool_sockets[i].pool == pool)
		{
			pool_sockets[i] = pool_sockets[--pool_nsockets];
			pool_set_stale = true;
		}
	for (int i = 0; i < pool_nowned; i++)
		if (pool_owned[i].pool == pool)
			pool_owned[i].pool = NULL;
	pfree(pool);
}

/*
 * lsm_pool_on_close: have hook called whenever a pool closes, with its
 * server and user mapping (one hook: a later call replaces it).  Raises
 * nothing.
 */
void
lsm_pool_on_close(LsmPoolCloseHook hook)
{
	pool_close_hook = hook;
}

/*
 * pool_close_stale: close every stale pool with nothing in flight; its
 * sockets leave pool_sockets through the socket callback.
 */
static void
pool_close_stale(void)
{
	HttpPool  **link = &pools;

	while (*link)
	{
		if ((*link)->stale && (*link)->ninflight == 0)
			pool_close(link);
		else
			link = &(*link)->next;
	}
}

/*
 * pool_connections: the sockets open for pool, busy or idle.
 */
static int
pool_connections(const HttpPool *pool)
{
	int			n = 0;

	for (int i = 0; i < pool_nowned; i++)
		if (pool_owned[i].pool == pool)
			n++;
	return n;
}

/*
 * lsm_pool_list: the pools of this backend, newest first, as a palloc'd
 * array (in the current memory context) of *n entries; NULL when there
 * are none.  Closes nothing.  Errors: out of memory.
 */
LsmPoolInfo *
lsm_pool_list(int *n)
{
	LsmPoolInfo *infos = NULL;
	int			count = 0;

	for (HttpPool *pool = pools; pool; pool = pool->next)
		count++;
	*n = count;
	if (count == 0)
		return NULL;
	infos = palloc(count * sizeof(LsmPoolInfo));
	count = 0;
	for (HttpPool *pool = pools; pool; pool = pool->next)
	{
		LsmPoolInfo *info = &infos[count++];

		info->serverid = pool->serverid;
		info->umid = pool->umid;
		info->connections = pool_connections(pool);
		info->requests = pool->ninflight;
		info->valid = !pool->stale;
	}
	return infos;
}

/*
 * lsm_pool_disconnect: close the pools of server serverid (every pool
 * when InvalidOid), with their connections, except those with requests in
 * flight: those are left as they are, and *busy_server names the server
 * of one of them (InvalidOid when none was).  Returns the number of pools
 * closed.  Raises nothing.
 */
int
lsm_pool_disconnect(Oid serverid, Oid *busy_server)
{
	HttpPool  **link = &pools;
	int			closed = 0;

	*busy_server = InvalidOid;
	while (*link)
	{
		HttpPool   *pool = *link;

		if (OidIsValid(serverid) && pool->serverid != serverid)
			link = &pool->next;
		else if (pool->ninflight > 0)
		{
			*busy_server = pool->serverid;
			link = &pool->next;
		}
		else
		{
			pool_close(link);
			closed++;
		}
	}
	return closed;
}

/*
 * pool_limit_host: allow the pool one connection at a time, or lift that
 * limit (POOL_MAX_CONNECTIONS still holds).
 *
 * Over HTTP/2 every request to the server is a stream of one connection
 * (CURLMOPT_PIPELINING), and requests past the streams that connection
 * takes at once (the server's and libcurl's limit, 100 by default) wait
 * in libcurl's queue instead of opening another connection; when the
 * server ends a connection (nginx's GOAWAY after keepalive_requests), the
 * next one opens once it is gone.  So a call uses ceil(requests / the
 * server's requests per connection) connections, one TLS handshake each.
 * A pool that expects HTTP/2 starts limited; the first answer that came
 * over HTTP/1.x lifts the limit (pool_learn_version), so a server that
 * picked HTTP/1.1 in ALPN costs one request run alone, once per pool.
 */
static void
pool_limit_host(HttpPool *pool, bool one)
{
	pool->one_connection = one;
	curl_multi_setopt(pool->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
					  one ? 1L : 0L);
}

/*
 * pool_learn_version: after a transfer on pool finished, lift the
 * one-connection limit if its answer came over HTTP/1.x.
 */
static void
pool_learn_version(HttpPool *pool, CURL *easy)
{
	long		version = 0;

	if (!pool->one_connection)
		return;
	curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &version);
	if (version == CURL_HTTP_VERSION_1_0 || version == CURL_HTTP_VERSION_1_1)
		pool_limit_host(pool, false);
}

/*
 * pool_create: a new pool for (serverid, umid), with its multi handle;
 * multiplex: its requests are expected to speak HTTP/2.
 */
static HttpPool *
pool_create(Oid serverid, Oid umid, bool multiplex)
{
	HttpPool   *pool = MemoryContextAllocZero(TopMemoryContext,
											  sizeof(HttpPool));

	if (!pool_callbacks_registered)
	{
		CacheRegisterSyscacheCallback(FOREIGNSERVEROID, pool_invalidate, 0);
		CacheRegisterSyscacheCallback(USERMAPPINGOID, pool_invalidate, 0);
		pool_callbacks_registered = true;
	}
	pool->multi = curl_multi_init();
	if (pool->multi == NULL)
	{
		pfree(pool);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not create a libcurl multi handle")));
	}
	pool->serverid = serverid;
	pool->umid = umid;
	pool->server_hash = GetSysCacheHashValue1(FOREIGNSERVEROID,
											  ObjectIdGetDatum(serverid));
	pool->mapping_hash = GetSysCacheHashValue1(USERMAPPINGOID,
											   ObjectIdGetDatum(umid));
	pool->timer_at = -1;
	curl_multi_setopt(pool->multi, CURLMOPT_SOCKETFUNCTION, pool_socket_cb);
	curl_multi_setopt(pool->multi, CURLMOPT_SOCKETDATA, pool);
	curl_multi_setopt(pool->multi, CURLMOPT_TIMERFUNCTION, pool_timer_cb);
	curl_multi_setopt(pool->multi, CURLMOPT_TIMERDATA, pool);
	/* HTTP/2: requests share a connection as streams (pool_limit_host) */
	curl_multi_setopt(pool->multi, CURLMOPT_PIPELINING,
					  (long) CURLPIPE_MULTIPLEX);
	/* beyond this libcurl queues requests: sockets stay few (see above) */
	curl_multi_setopt(pool->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
					  (long) POOL_MAX_CONNECTIONS);
	curl_multi_setopt(pool->multi, CURLMOPT_MAXCONNECTS,
					  (long) POOL_MAX_CONNECTIONS);
	pool_limit_host(pool, multiplex);
	pool->next = pools;
	pools = pool;
	return pool;
}

/*
 * pool_for: the current pool of (serverid, umid), created when needed
 * (multiplex: see pool_create).
 */
static HttpPool *
pool_for(Oid serverid, Oid umid, bool multiplex)
{
	pool_close_stale();
	for (HttpPool *pool = pools; pool; pool = pool->next)
		if (pool->serverid == serverid && pool->umid == umid && !pool->stale)
			return pool;
	return pool_create(serverid, umid, multiplex);
}

/*
 * pool_track: remember easy as in flight on pool for owner.
 */
static void
pool_track(CURL *easy, HttpPool *pool, void *owner)
{
	if (pool_ninflight == pool_inflight_cap)
	{
		int			newcap = Max(16, pool_inflight_cap * 2);

		if (pool_inflight == NULL)
			pool_inflight = MemoryContextAlloc(TopMemoryContext,
											   newcap * sizeof(PoolEntry));
		else
			pool_inflight = repalloc(pool_inflight,
									 newcap * sizeof(PoolEntry));
		pool_inflight_cap = newcap;
	}
	pool_inflight[pool_ninflight].easy = easy;
	pool_inflight[pool_ninflight].pool = pool;
	pool_inflight[pool_ninflight].owner = owner;
	pool_ninflight++;
}

/*
 * lsm_pool_add: put a configured easy handle in flight on the pool of
 * (serverid, umid), created when needed, on behalf of owner (handed back
 * with the handle when it finishes).  multiplex: the handle may speak
 * HTTP/2 (https with HTTP/2 offered, or HTTP/2 pinned); a pool created
 * for it keeps to one connection until an answer comes over HTTP/1.x.
 * Returns false when libcurl refuses the handle, which is then not in
 * flight.  Errors: 53200 when a pool's
 * multi handle cannot be created, or out of memory.
 */
bool
lsm_pool_add(CURL *easy, Oid serverid, Oid umid, bool multiplex,
			 void *owner)
{
	HttpPool   *pool = pool_for(serverid, umid, multiplex);

	pool_track(easy, pool, owner);
	if (curl_multi_add_handle(pool->multi, easy) != CURLM_OK)
	{
		pool_ninflight--;
		return false;
	}
	pool->ninflight++;
	return true;
}

/*
 * pool_untrack: take in-flight entry i off its pool and out of the table;
 * returns its owner.  Its connection goes back to the pool's cache when
 * the exchange completed cleanly; libcurl closes it otherwise (an aborted
 * request).  The kept WaitEventSet is freed once nothing is in flight.
 */
static void *
pool_untrack(int i)
{
	PoolEntry	entry = pool_inflight[i];

	pool_inflight[i] = pool_inflight[--pool_ninflight];
	curl_multi_remove_handle(entry.pool->multi, entry.easy);
	entry.pool->ninflight--;
	if (pool_ninflight == 0)
		pool_set_free();
	return entry.owner;
}

/*
 * lsm_pool_remove: take easy off its pool, if it is in flight (a handle
 * that is not is left alone).  The caller still owns and frees the handle.
 */
void
lsm_pool_remove(CURL *easy)
{
	for (int i = 0; i < pool_ninflight; i++)
	{
		if (pool_inflight[i].easy == easy)
		{
			pool_untrack(i);
			return;
		}
	}
}

/*
 * pool_take_completed: the owner of the next easy handle some pool has
 * finished, taken off its pool, with libcurl's result in *code; or NULL.
 */
static void *
pool_take_completed(CURLcode *code)
{
	for (HttpPool *pool = pools; pool; pool = pool->next)
	{
		CURLMsg    *msg;
		int			pending;

		while ((msg = curl_multi_info_read(pool->multi, &pending)) != NULL)
		{
			if (msg->msg != CURLMSG_DONE)
				continue;
			for (int i = 0; i < pool_ninflight; i++)
			{
				if (pool_inflight[i].easy == msg->easy_handle)
				{
					*code = msg->data.result;
					pool_learn_version(pool, msg->easy_handle);
					return pool_untrack(i);
				}
			}
		}
	}
	return NULL;
}

/*
 * pool_earliest: the earlier of two moments, where a value < 0 means
 * "never".
 */
static TimestampTz
pool_earliest(TimestampTz a, TimestampTz b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return Min(a, b);
}

/*
 * pool_timeout_ms: how long the next wait may last: until the earliest
 * curl timer, wake_at or deadline (-1: forever; 0 in the last two: none).
 */
static long
pool_timeout_ms(TimestampTz now, TimestampTz wake_at, TimestampTz deadline)
{
	TimestampTz until = -1;

	for (HttpPool *pool = pools; pool; pool = pool->next)
		until = pool_earliest(until, pool->timer_at);
	until = pool_earliest(until, wake_at ? wake_at : -1);
	until = pool_earliest(until, deadline ? deadline : -1);
	if (until < 0)
		return -1;
	if (until <= now)
		return 0;
	/* round up so that we never wake just before the moment */
	return (long) ((until - now + 999) / 1000);
}

/*
 * pool_socket_events: the events to wait for on a socket curl wants for
 * what (CURL_POLL_*; 0: parked, only its peer closing).
 */
static uint32
pool_socket_events(int what)
{
	uint32		ev = 0;

	if (what & CURL_POLL_IN)
		ev |= WL_SOCKET_READABLE;
	if (what & CURL_POLL_OUT)
		ev |= WL_SOCKET_WRITEABLE;
	return ev ? ev : WL_SOCKET_CLOSED;
}

/*
 * pool_set_free: free the kept WaitEventSet, if any; the next wait builds
 * it afresh.
 */
static void
pool_set_free(void)
{
	if (pool_set)
		FreeWaitEventSet(pool_set);
	pool_set = NULL;
	if (pool_slots)
		pfree(pool_slots);
	pool_slots = NULL;
	pool_nslots = 0;
	pool_set_stale = true;
	for (int i = 0; i < pool_nsockets; i++)
		pool_sockets[i].pos = -1;
}

/*
 * pool_set_build: build pool_set afresh: the latch, postmaster death and
 * every socket curl wants watched.  pool_set is assigned as soon as it
 * exists, so that the caller's error path frees a half-built set.
 */
static void
pool_set_build(void)
{
	MemoryContext old;

	pool_set_free();
	pool_slots = MemoryContextAllocZero(TopMemoryContext,
										(pool_nsockets + 2) * sizeof(PoolSlot));
	/* no resource owner (17+) / the top context (before): see pool_set */
	old = MemoryContextSwitchTo(TopMemoryContext);
	pool_set = CreateWaitEventSet(NULL, pool_nsockets + 2);
	MemoryContextSwitchTo(old);
	AddWaitEventToSet(pool_set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch,
					  NULL);
	AddWaitEventToSet(pool_set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET,
					  NULL, NULL);
	pool_nslots = 2;
	for (int i = 0; i < pool_nsockets; i++)
	{
		HttpSocket *sock = &pool_sockets[i];
		PoolSlot   *slot = &pool_slots[pool_nslots];

		slot->fd = sock->fd;
		slot->what = sock->what;
		slot->pool = sock->pool;
		slot->events = pool_socket_events(sock->what);
		sock->pos = AddWaitEventToSet(pool_set, slot->events, sock->fd,
									  NULL, NULL);
		pool_nslots++;
	}
	pool_set_stale = false;
}

/*
 * pool_wait_set: pool_set brought in step with curl's sockets: events
 * that changed are modified in place, sockets curl stopped watching are
 * parked; a new or closed socket rebuilds the set.  Errors leave pool_set
 * for the caller to free.
 */
static WaitEventSet *
pool_wait_set(void)
{
	if (pool_set == NULL || pool_set_stale)
	{
		pool_set_build();
		return pool_set;
	}
	for (int pos = 2; pos < pool_nslots; pos++)
	{
		PoolSlot   *slot = &pool_slots[pos];
		uint32		ev = pool_socket_events(slot->what);

		if (ev != slot->events)
		{
			ModifyWaitEvent(pool_set, pos, ev, NULL);
			slot->events = ev;
		}
	}
	return pool_set;
}

/*
 * pool_wait_event: the wait event of one wait: LancelsmServer while a
 * request is in flight or a task waits for the server's compaction,
 * LancelsmBackoff when nothing is in flight and the caller waits before a
 * retry or re-issue.  Registered by name on PostgreSQL 17 and later (once
 * per process); before 17 both are the generic Extension (pg_compat.h).
 */
static uint32
pool_wait_event(bool backing_off)
{
	static uint32 server_event = 0;
	static uint32 backoff_event = 0;

	if (backing_off && pool_ninflight == 0)
	{
		if (backoff_event == 0)
			backoff_event = WaitEventExtensionNew("LancelsmBackoff");
		return backoff_event;
	}
	if (server_event == 0)
		server_event = WaitEventExtensionNew("LancelsmServer");
	return server_event;
}

/* One socket that fired, copied out before curl may change the table. */
typedef struct PoolFired
{
	curl_socket_t fd;
	int			mask;			/* CURL_CSELECT_* */
	HttpPool   *pool;
} PoolFired;

/*
 * pool_wait_once: one wait of at most timeout_ms, shown as backing off
 * when nothing is in flight and the caller says so.  Returns the sockets
 * curl watches that became ready, in a palloc'd array, with their count
 * in *nfired; *latch_set tells whether the latch woke us.  A parked
 * socket whose peer closed makes the next wait rebuild the set.  The set
 * is kept (pool_set).
 */
static PoolFired *
pool_wait_once(long timeout_ms, bool backing_off, int *nfired,
			   bool *latch_set)
{
	WaitEventSet *set = pool_wait_set();
	int			nevents = pool_nslots;
	WaitEvent  *events = palloc(nevents * sizeof(WaitEvent));
	PoolFired  *fired = palloc(nevents * sizeof(PoolFired));
	int			n;

	n = WaitEventSetWait(set, timeout_ms, events, nevents,
						 pool_wait_event(backing_off));
	*latch_set = false;
	*nfired = 0;
	for (int i = 0; i < n; i++)
	{
		PoolSlot   *slot = &pool_slots[events[i].pos];

		if (events[i].events & WL_LATCH_SET)
			*latch_set = true;
		else if (events[i].pos < 2)
			continue;
		else if (slot->what == 0)
			pool_set_stale = true;	/* a parked peer closed: drop it */
		else if (events[i].events & (WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE))
		{
			fired[*nfired].fd = slot->fd;
			fired[*nfired].pool = slot->pool;
			fired[*nfired].mask =
				((events[i].events & WL_SOCKET_READABLE) ? CURL_CSELECT_IN : 0) |
				((events[i].events & WL_SOCKET_WRITEABLE) ? CURL_CSELECT_OUT : 0);
			(*nfired)++;
		}
	}
	pfree(events);
	return fired;
}

/*
 * pool_step: wait once, check for interrupts, then let curl act on the
 * sockets that fired and on the timers that expired.
 */
static void
pool_step(TimestampTz wake_at, TimestampTz deadline, bool backing_off)
{
	PoolFired  *fired;
	bool		latch_set;
	int			nfired;
	int			running;
	TimestampTz now;

	fired = pool_wait_once(pool_timeout_ms(GetCurrentTimestamp(), wake_at,
										   deadline),
						   backing_off, &nfired, &latch_set);
	if (latch_set)
		ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();

	for (int i = 0; i < nfired; i++)
		curl_multi_socket_action(fired[i].pool->multi, fired[i].fd,
								 fired[i].mask, &running);
	now = GetCurrentTimestamp();
	for (HttpPool *pool = pools; pool; pool = pool->next)
	{
		if (pool->timer_at >= 0 && now >= pool->timer_at)
		{
			pool->timer_at = -1;
			curl_multi_socket_action(pool->multi, CURL_SOCKET_TIMEOUT, 0,
									 &running);
		}
	}
	pfree(fired);
}

/*
 * pool_wait_loop: lsm_pool_wait's loop (see there), grace being its
 * deadline with LSM_DEADLINE_GRACE_MS added (0: none).
 */
static void *
pool_wait_loop(TimestampTz wake_at, TimestampTz grace, bool backing_off,
			   CURLcode *code)
{
	for (;;)
	{
		void	   *done = pool_take_completed(code);
		TimestampTz now;

		if (done)
			return done;
		now = GetCurrentTimestamp();
		if (grace != 0 && now >= grace)
			lsm_deadline_passed();
		if (wake_at != 0 && now >= wake_at)
			return NULL;
		if (pool_ninflight == 0 && wake_at == 0)
			return NULL;
		pool_step(wake_at, grace, backing_off);
	}
}

/*
 * lsm_pool_wait: drive every handle in flight until one finishes (return
 * its owner, the handle off its pool, and libcurl's result in *code) or
 * until wake_at passes (return NULL; 0: no wake-up); backing_off: the
 * caller sleeps until wake_at before a retry or re-issue (the wait event
 * says so while nothing is in flight).  Raises
 * PostgreSQL's own error on query cancel, statement_timeout or when
 * deadline (0: none) passes; handles then stay in flight and the caller
 * must take them off with lsm_pool_abort_next().  The kept WaitEventSet
 * (pool_set) is freed on every error; the caller frees it with
 * lsm_pool_waits_over when its waits are over.
 * Errors: 57014, or out of memory.
 */
void *
lsm_pool_wait(TimestampTz wake_at, TimestampTz deadline, bool backing_off,
			  CURLcode *code)
{
	void	   *done = NULL;
	volatile TimestampTz until = wake_at;
	volatile TimestampTz grace = deadline ?
		TimestampTzPlusMilliseconds(deadline, LSM_DEADLINE_GRACE_MS) : 0;

	PG_TRY();
	{
		done = pool_wait_loop(until, grace, backing_off, code);
	}
	PG_CATCH();
	{
		pool_set_free();
		PG_RE_THROW();
	}
	PG_END_TRY();
	return done;
}

/*
 * lsm_pool_waits_over: the caller of lsm_pool_wait will not wait again
 * before it starts new requests: free the kept WaitEventSet (pool_set)
 * when nothing is in flight.  Raises nothing.
 */
void
lsm_pool_waits_over(void)
{
	if (pool_ninflight == 0)
		pool_set_free();
}

/*
 * lsm_pool_abort_next: take one handle in flight off its pool, unfinished
 * (libcurl closes its connection), and return its owner, who still has
 * the handle to free; NULL when none is left, every curl timer
 * then forgotten.  Called in a loop from the PG_CATCH of whoever started
 * the handles, before memory is reset.
 */
void *
lsm_pool_abort_next(void)
{
	if (pool_ninflight > 0)
		return pool_untrack(pool_ninflight - 1);
	for (HttpPool *pool = pools; pool; pool = pool->next)
		pool->timer_at = -1;
	pool_set_free();
	return NULL;
}

/*
 * lsm_net_init: initialise libcurl once per process, before any handle
 * exists.  Called by _PG_init.  Raises XX000 when libcurl cannot be
 * initialised.
 */
void
lsm_net_init(void)
{
	if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not initialize libcurl")));
}
