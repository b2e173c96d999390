/*-------------------------------------------------------------------------
 *
 * lookup.c
 *		Host name lookups of the HTTP client, outside libcurl and bounded.
 *
 * libcurl's threaded resolver starts a thread per new connection, and with
 * CURLOPT_QUICK_EXIT (which a cancel needs to return at once) detaches it
 * when the transfer is aborted: it then lives until getaddrinfo gives up
 * (resolv.conf's timeout times attempts per name server), uncounted.  A
 * role whose server names a host that no DNS server answers could pile up
 * such threads, each with a descriptor, by the hundred per backend, and
 * threads count against the postgres user's process limit, which the
 * postmaster needs to start every backend.
 *
 * So src/net/http.c looks names up here and hands the addresses to libcurl
 * (CURLOPT_RESOLVE), which then never resolves by itself.  A lookup runs
 * in a thread of its own that only calls getaddrinfo, with every signal
 * blocked, and tells the backend it is done through an eventfd that the
 * backend waits on with its latch: a cancel or statement_timeout returns
 * at once, as with libcurl's resolver.  A lookup left behind that way goes
 * on, and still counts:
 *
 *	- a backend never has more than lancelsm.max_name_lookups lookups
 *	  pending, those left behind included; at the bound, a new one waits
 *	  for a slot, within the statement's deadline and the server's
 *	  connect_timeout, then fails naming the host; it never starts another
 *	  thread;
 *	- a name already being looked up is not looked up again: a later
 *	  request, in this statement or the next, waits for the same lookup;
 *	- a result serves every new connection of the statement that got it
 *	  (a call looks a host up once, not once per connection), and is
 *	  forgotten by the next statement, which looks the name up afresh: a
 *	  failover is followed from the next statement on;
 *	- with lancelsm in shared_preload_libraries, the backends of the cluster
 *	  together never have more than lancelsm.max_cluster_name_lookups
 *	  pending (a counter in shared memory, given back by each lookup's
 *	  thread as it ends, or by its backend as it exits, whichever comes
 *	  first); at that bound a new lookup waits alike,
 *	  checking again every LOOKUP_CLUSTER_POLL_MS (another backend's
 *	  lookup ending wakes nothing here);
 *	- each pending lookup holds LOOKUP_DESCRIPTORS of PostgreSQL's external
 *	  descriptors (AcquireExternalFD): its eventfd, the resolver's socket
 *	  and a file the resolver reads; none left, the request fails as
 *	  LSM_TRANSPORT_NO_DESCRIPTOR.
 *
 * The thread owns nothing of the backend: it reads its name, writes its
 * answer into its own Lookup (malloc'd), signals the eventfd and, last,
 * marks the Lookup done; only then may the backend close the eventfd and
 * free the Lookup (lookup_reap).  A backend that exits with lookups
 * pending leaves them to the process's end.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "access/xact.h"
#include "deadline.h"
#include "miscadmin.h"
#include "net/lookup.h"
#include "net/net.h"
#include "port/atomics.h"
#include "settings.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "pg_compat.h"

/* the longest host name of DNS, with its NUL */
#define LOOKUP_HOST_LEN 256

/*
 * External descriptors a pending lookup holds: its eventfd, the
 * resolver's socket, and the file the resolver may be reading
 * (/etc/hosts, resolv.conf, gai.conf) as it starts.
 */
#define LOOKUP_DESCRIPTORS 3

/*
 * How long a lookup may take without connect_timeout: libcurl's default
 * connect timeout, which bounds its own resolving too.
 */
#define LOOKUP_DEFAULT_TIMEOUT_MS (300 * 1000L)

/* How often a lookup waiting for a slot of the cluster checks again. */
#define LOOKUP_CLUSTER_POLL_MS 50

/* The lookups pending in the cluster, in shared memory. */
typedef struct LookupShared
{
	pg_atomic_uint32 pending;
} LookupShared;

/* NULL without shared_preload_libraries: no cluster-wide bound */
static LookupShared *lookup_shared = NULL;
static bool lookup_exit_registered = false;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* One name looked up, pending or done. */
typedef struct Lookup
{
	/* set before the thread starts, then only read */
	char		host[LOOKUP_HOST_LEN];
	char		service[8];		/* the port, as text */
	int			fd;				/* eventfd the thread signals */

	/* written by the thread before it sets done */
	int			gai_error;		/* getaddrinfo's result: 0, or EAI_* */
	char		addresses[LSM_LOOKUP_ADDRESSES_LEN];
	pg_atomic_uint32 given;		/* 1: its slot of the cluster is given
								 * back (by the thread as it ends, or by
								 * the backend as it exits) */
	pg_atomic_uint32 done;		/* 1: the thread touches nothing any more */

	/* the backend's own */
	bool		pending;		/* the eventfd is open, the slot taken */
	TimestampTz statement;		/* the last statement that asked for it */
	struct Lookup *next;
} Lookup;

/* this backend's lookups, pending or done, newest first */
static Lookup *lookups = NULL;
static int	lookups_pending = 0;

/*
 * lookup_append: append text to buf (len bytes), with a comma before it
 * unless buf is empty, if all of it fits.  Allocates nothing: called in a
 * lookup's thread.
 */
static void
lookup_append(char *buf, size_t len, const char *text)
{
	size_t		used = strlen(buf);
	size_t		need = strlen(text) + (used > 0 ? 1 : 0);

	if (used + need + 1 > len)
		return;
	if (used > 0)
		buf[used++] = ',';
	memcpy(buf + used, text, strlen(text) + 1);
}

/*
 * lookup_format: the addresses of res, in its order and without repeats,
 * as CURLOPT_RESOLVE takes them (an IPv6 address in brackets), into buf.
 * Allocates nothing: called in a lookup's thread.
 */
static void
lookup_format(const struct addrinfo *res, char *buf, size_t len)
{
	buf[0] = '\0';
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
	{
		char		host[NI_MAXHOST];
		char		text[NI_MAXHOST + 2];

		if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
			getnameinfo(ai->ai_addr, ai->ai_addrlen, host, sizeof(host),
						NULL, 0, NI_NUMERICHOST) != 0)
			continue;
		text[0] = '\0';
		if (ai->ai_family == AF_INET6)
			strcat(text, "[");
		strcat(text, host);
		if (ai->ai_family == AF_INET6)
			strcat(text, "]");
		if (strstr(buf, text) == NULL)
			lookup_append(buf, len, text);
	}
}

static void lookup_slot_give(Lookup *l);

/*
 * lookup_thread: the body of a lookup's thread: getaddrinfo, the answer
 * into the Lookup, the eventfd signalled, its slot of the cluster given
 * back, then done set, after which the thread touches nothing of the
 * Lookup.  Calls nothing of PostgreSQL but its atomics.
 */
static void *
lookup_thread(void *arg)
{
	Lookup	   *l = (Lookup *) arg;
	struct addrinfo hints;
	struct addrinfo *res = NULL;
	uint64_t	one = 1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	l->gai_error = getaddrinfo(l->host, l->service, &hints, &res);
	if (l->gai_error == 0)
	{
		lookup_format(res, l->addresses, sizeof(l->addresses));
		freeaddrinfo(res);
		if (l->addresses[0] == '\0')
			l->gai_error = EAI_NONAME;
	}
	if (write(l->fd, &one, sizeof(one)) < 0)
	{
		/* cannot happen on an eventfd; the backend's poll of done is late */
	}
	lookup_slot_give(l);
	pg_atomic_exchange_u32(&l->done, 1);
	return NULL;
}

/*
 * lookup_spawn: start l's thread, detached, with every signal blocked in
 * it (PostgreSQL's handlers must run in the backend's own thread).
 * Returns pthread_create's error (0: started).
 */
static int
lookup_spawn(Lookup *l)
{
	pthread_attr_t attr;
	pthread_t	thread;
	sigset_t	all;
	sigset_t	old;
	int			rc;

	if ((rc = pthread_attr_init(&attr)) != 0)
		return rc;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&thread, &attr, lookup_thread, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return rc;
}

/*
 * lookup_release: give back the external descriptors of one lookup.
 */
static void
lookup_release(void)
{
	for (int i = 0; i < LOOKUP_DESCRIPTORS; i++)
		ReleaseExternalFD();
}

/*
 * lookup_reserve: reserve the external descriptors of one lookup, all or
 * none.
 */
static bool
lookup_reserve(void)
{
	for (int i = 0; i < LOOKUP_DESCRIPTORS; i++)
	{
		if (!AcquireExternalFD())
		{
			while (i-- > 0)
				ReleaseExternalFD();
			return false;
		}
	}
	return true;
}

/*
 * lookup_cluster_take: take one of the cluster's slots (always, without
 * shared memory); false when lancelsm.max_cluster_name_lookups are
 * pending already.  Raises nothing.
 */
static bool
lookup_cluster_take(void)
{
	uint32		pending;

	if (lookup_shared == NULL)
		return true;
	pending = pg_atomic_read_u32(&lookup_shared->pending);
	do
	{
		if (pending >= (uint32) lsm_max_cluster_name_lookups)
			return false;
	} while (!pg_atomic_compare_exchange_u32(&lookup_shared->pending,
											 &pending, pending + 1));
	return true;
}

/*
 * lookup_cluster_give: give n of the cluster's slots back.  Raises
 * nothing.
 */
static void
lookup_cluster_give(uint32 n)
{
	if (lookup_shared != NULL && n > 0)
		pg_atomic_fetch_sub_u32(&lookup_shared->pending, n);
}

/*
 * lookup_slot_give: give back l's slot of the cluster, unless its thread
 * or the backend's exit did already.  Raises nothing; called in the
 * lookup's thread too.
 */
static void
lookup_slot_give(Lookup *l)
{
	if (pg_atomic_exchange_u32(&l->given, 1) == 0)
		lookup_cluster_give(1);
}

/*
 * lookup_backend_exit: give back the cluster's slots of the lookups this
 * backend leaves pending (before_shmem_exit): they end with the process.
 */
static void
lookup_backend_exit(int code, Datum arg)
{
	for (Lookup *l = lookups; l; l = l->next)
		if (l->pending)
			lookup_slot_give(l);
}

/*
 * lookup_reap: close the eventfd of every lookup whose thread is done
 * (its slot free again), and forget the done lookups no request of this
 * statement asked for.  Raises nothing.
 */
static void
lookup_reap(void)
{
	TimestampTz statement = GetCurrentStatementStartTimestamp();
	Lookup	  **link = &lookups;

	while (*link)
	{
		Lookup	   *l = *link;

		if (l->pending && pg_atomic_read_u32(&l->done) == 1)
		{
			pg_read_barrier();
			close(l->fd);
			lookup_release();
			l->pending = false;
			lookups_pending--;
		}
		if (!l->pending && l->statement != statement)
		{
			*link = l->next;
			free(l);
			continue;
		}
		link = &l->next;
	}
}

/*
 * lookup_find: the lookup of host and service, pending or done, or NULL.
 */
static Lookup *
lookup_find(const char *host, const char *service)
{
	for (Lookup *l = lookups; l; l = l->next)
		if (strcmp(l->host, host) == 0 && strcmp(l->service, service) == 0)
			return l;
	return NULL;
}

/*
 * lookup_start: a new pending lookup of host and service, its thread
 * started; NULL with problem set when it cannot start (*no_descriptor
 * then tells whether for want of a descriptor).  The caller checked that
 * a slot of the backend is free and took one of the cluster's
 * (lookup_cluster_take), which a failure gives back.
 */
static Lookup *
lookup_start(const char *host, const char *service, char *problem,
			 size_t problemlen, bool *no_descriptor)
{
	Lookup	   *l;
	int			rc;

	*no_descriptor = false;
	if (!lookup_reserve())
	{
		lookup_cluster_give(1);
		*no_descriptor = true;
		snprintf(problem, problemlen,
				 "Could not resolve host: %s (no file descriptor is left to look it up)",
				 host);
		return NULL;
	}
	l = calloc(1, sizeof(Lookup));
	if (l == NULL || (l->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
	{
		*no_descriptor = (l != NULL);
		snprintf(problem, problemlen,
				 "Could not resolve host: %s (%s)", host,
				 l == NULL ? "out of memory" : strerror(errno));
		free(l);
		lookup_release();
		lookup_cluster_give(1);
		return NULL;
	}
	strlcpy(l->host, host, sizeof(l->host));
	strlcpy(l->service, service, sizeof(l->service));
	pg_atomic_init_u32(&l->given, 0);
	pg_atomic_init_u32(&l->done, 0);
	if ((rc = lookup_spawn(l)) != 0)
	{
		snprintf(problem, problemlen,
				 "Could not resolve host: %s (could not start a thread to look it up: %s)",
				 host, strerror(rc));
		close(l->fd);
		free(l);
		lookup_release();
		lookup_cluster_give(1);
		return NULL;
	}
	if (!lookup_exit_registered && lookup_shared != NULL)
	{
		before_shmem_exit(lookup_backend_exit, (Datum) 0);
		lookup_exit_registered = true;
	}
	l->pending = true;
	l->next = lookups;
	lookups = l;
	lookups_pending++;
	return l;
}

/*
 * lookup_wait_set: a WaitEventSet of the latch, postmaster death and the
 * eventfd of l, or of every pending lookup when l is NULL (a slot).
 */
static WaitEventSet *
lookup_wait_set(const Lookup *l)
{
	WaitEventSet *set = CreateWaitEventSet(NULL, lookups_pending + 2);

	AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
	AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
	for (const Lookup *p = lookups; p; p = p->next)
		if (p->pending && (l == NULL || p == l))
			AddWaitEventToSet(set, WL_SOCKET_READABLE, p->fd, NULL, NULL);
	return set;
}

/*
 * lookup_wait: wait until l is done (l NULL: any pending lookup), the
 * latch is set or until passes, then check for interrupts.
 */
static void
lookup_wait(const Lookup *l, TimestampTz until)
{
	static uint32 wait_event = 0;
	WaitEventSet *volatile set = NULL;
	WaitEvent	event;
	long		timeout_ms;

	if (wait_event == 0)
		wait_event = WaitEventExtensionNew("LancelsmNameLookup");
	timeout_ms = (long) ((until - GetCurrentTimestamp() + 999) / 1000);
	PG_TRY();
	{
		set = lookup_wait_set(l);
		if (WaitEventSetWait(set, Max(timeout_ms, 0), &event, 1,
							 wait_event) == 1 &&
			(event.events & WL_LATCH_SET))
			ResetLatch(MyLatch);
	}
	PG_FINALLY();
	{
		if (set)
			FreeWaitEventSet(set);
	}
	PG_END_TRY();
	CHECK_FOR_INTERRUPTS();
}

/*
 * lookup_result: the result of done lookup l, into addresses or problem.
 */
static LsmLookupStatus
lookup_result(const Lookup *l, char *addresses, size_t addresseslen,
			  char *problem, size_t problemlen)
{
	if (l->gai_error != 0)
	{
		/* libcurl's own words, which users and scripts already know */
		snprintf(problem, problemlen, "Could not resolve host: %s", l->host);
		return LSM_LOOKUP_FAILED;
	}
	strlcpy(addresses, l->addresses, addresseslen);
	return LSM_LOOKUP_FOUND;
}

/*
 * lookup_gave_up: the problem of a lookup given up at connect_timeout:
 * the lookup itself took too long, or no slot of the backend, or of the
 * cluster, came free.
 */
static LsmLookupStatus
lookup_gave_up(const char *host, const Lookup *l, long timeout_ms,
			   char *problem, size_t problemlen)
{
	if (l != NULL)
		snprintf(problem, problemlen,
				 "Could not resolve host: %s (no answer within %ld milliseconds)",
				 host, timeout_ms);
	else if (lookups_pending >= lsm_max_name_lookups)
		snprintf(problem, problemlen,
				 "Could not resolve host: %s (%d name lookups of this backend are pending, as many as lancelsm.max_name_lookups allows)",
				 host, lookups_pending);
	else
		snprintf(problem, problemlen,
				 "Could not resolve host: %s (%d name lookups are pending in the cluster, as many as lancelsm.max_cluster_name_lookups allows)",
				 host, lsm_max_cluster_name_lookups);
	return LSM_LOOKUP_FAILED;
}

/*
 * lookup_is_localhost: whether host is localhost or a name under it,
 * which are the loopback addresses and looked up nowhere (RFC 6761,
 * 6.3), as libcurl 7.78.0 and later take them.
 */
static bool
lookup_is_localhost(const char *host)
{
	size_t		len = strlen(host);

	return pg_strcasecmp(host, "localhost") == 0 ||
		(len > 10 && pg_strcasecmp(host + len - 10, ".localhost") == 0);
}

/*
 * lsm_lookup: the addresses of host for port (into addresses, as
 * CURLOPT_RESOLVE takes them), looked up in a bounded thread, or waited
 * for when this backend has a lookup of the name pending already, or
 * taken from the one done for this statement; localhost and the names
 * under it are 127.0.0.1 and ::1, with no lookup.
 *
 * At lancelsm.max_name_lookups pending lookups of the backend, or
 * lancelsm.max_cluster_name_lookups of the cluster, waits for a slot.  Gives
 * up after connect_timeout_ms (0: libcurl's default, 300 s): LSM_LOOKUP_FAILED,
 * as for a name that does not resolve; problem says why, naming the host.
 * LSM_LOOKUP_NO_DESCRIPTOR when PostgreSQL has no external descriptor left
 * for it.  Every wait is on the latch: errors 57014 on cancel,
 * statement_timeout or when deadline (0: none) passes, the lookup left
 * pending.  Other errors: out of memory (the wait's event set).
 */
LsmLookupStatus
lsm_lookup(const char *host, int port, TimestampTz deadline,
		   long connect_timeout_ms, char *addresses, size_t addresseslen,
		   char *problem, size_t problemlen)
{
	long		timeout_ms = connect_timeout_ms > 0 ?
		connect_timeout_ms : LOOKUP_DEFAULT_TIMEOUT_MS;
	TimestampTz give_up = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													  timeout_ms);
	TimestampTz grace = deadline ?
		TimestampTzPlusMilliseconds(deadline, LSM_DEADLINE_GRACE_MS) : 0;
	char		service[8];

	if (lookup_is_localhost(host))
	{
		strlcpy(addresses, "127.0.0.1,[::1]", addresseslen);
		return LSM_LOOKUP_FOUND;
	}
	snprintf(service, sizeof(service), "%d", port);
	for (;;)
	{
		Lookup	   *l;
		TimestampTz now;
		TimestampTz until;
		bool		no_descriptor;

		lookup_reap();
		l = lookup_find(host, service);
		if (l == NULL && lookups_pending < lsm_max_name_lookups &&
			lookup_cluster_take())
		{
			l = lookup_start(host, service, problem, problemlen,
							 &no_descriptor);
			if (l == NULL)
				return no_descriptor ? LSM_LOOKUP_NO_DESCRIPTOR :
					LSM_LOOKUP_FAILED;
		}
		if (l != NULL)
		{
			l->statement = GetCurrentStatementStartTimestamp();
			if (!l->pending)
				return lookup_result(l, addresses, addresseslen, problem,
									 problemlen);
		}
		now = GetCurrentTimestamp();
		if (grace != 0 && now >= grace)
			lsm_deadline_passed();
		if (now >= give_up)
			return lookup_gave_up(host, l, timeout_ms, problem, problemlen);
		until = grace != 0 ? Min(grace, give_up) : give_up;
		if (l == NULL && lookups_pending < lsm_max_name_lookups)
			/* the cluster's bound: another backend's lookup must end */
			until = Min(until, TimestampTzPlusMilliseconds(now,
														   LOOKUP_CLUSTER_POLL_MS));
		lookup_wait(l, until);
	}
}

/*
 * lsm_lookup_is_address: whether host is an IPv4 or IPv6 address literal
 * (without brackets), which libcurl takes as it is, with no lookup and no
 * thread.
 */
bool
lsm_lookup_is_address(const char *host)
{
	unsigned char buf[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, host, buf) == 1 ||
		inet_pton(AF_INET6, host, buf) == 1;
}

/*
 * lookup_shmem_request: reserve the cluster's counter
 * (shmem_request_hook, postmaster only).
 */
static void
lookup_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(sizeof(LookupShared));
}

/*
 * lookup_shmem_startup: attach to (or create) the cluster's counter
 * (shmem_startup_hook).
 */
static void
lookup_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	lookup_shared = ShmemInitStruct("lancelsm name lookups",
									sizeof(LookupShared), &found);
	if (!found)
		pg_atomic_init_u32(&lookup_shared->pending, 0);
	LWLockRelease(AddinShmemInitLock);
}

/*
 * lsm_lookup_shmem_init: when lancelsm is being loaded by
 * shared_preload_libraries, install the shared memory hooks of the
 * cluster's count of pending lookups; otherwise do nothing, and only
 * each backend's bound holds.  Called from _PG_init.
 */
void
lsm_lookup_shmem_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = lookup_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = lookup_shmem_startup;
}
