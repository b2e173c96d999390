/*-------------------------------------------------------------------------
 *
 * http.c
 *		The HTTP route client of lancelsm.
 *
 * Builds the LSM route requests (URL, headers, request id), configures
 * their libcurl easy handles with secure defaults, reads their answers
 * under lancelsm.max_response_size, and classifies how each ended.  The
 * handles are run by the connection pools of src/net/pool.c, which also do
 * the waiting.  Calls go one way, from here to src/net/pool.c: the pools see
 * easy handles and their owner (the LsmRequest) only, and hand finished
 * handles back to lsm_http_wait(), which classifies and frees them here.
 *
 * No PostgreSQL error is ever raised inside a curl callback: callbacks
 * record what went wrong and return an abort code.
 *
 * Protocol: docs/protocol.md, "Transport".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <curl/curl.h>

#include "common/pg_prng.h"
#include "common/string.h"
#include "deadline.h"
#include "net/endpoint.h"
#include "net/lookup.h"
#include "net/net.h"
#include "settings.h"
#include "net/pool.h"
#include "net/socket.h"
#include "miscadmin.h"
#include "port.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

/*
 * The newest libcurl symbol used is CURLE_WEIRD_SERVER_REPLY (7.51.0);
 * scripts/check-old-curl.sh keeps the list of every symbol with the
 * version that introduced it.  CURLOPT_PROTOCOLS_STR (7.85.0) replaces
 * the bitmask option CURLOPT_PROTOCOLS, deprecated since: the newer one
 * is used where it exists, with the same http/https-only policy.
 */
#if LIBCURL_VERSION_NUM < 0x073300
#error "lancelsm needs libcurl 7.51.0 or later (CURLE_WEIRD_SERVER_REPLY)"
#endif

/*
 * TCP keepalive on every connection: the first probe after this many
 * seconds without traffic, then one every LSM_TCP_KEEPINTVL_S seconds.
 * With Linux's default of 9 unanswered probes (net.ipv4.tcp_keepalive_probes)
 * a peer that vanished without FIN or RST is noticed after 60 + 9 * 10 =
 * 150 s, on an idle pooled connection as on one awaiting an answer.
 */
#define LSM_TCP_KEEPIDLE_S 60L
#define LSM_TCP_KEEPINTVL_S 10L

/*
 * One HTTP exchange.  Prepared with lsm_http_prepare(), run with
 * lsm_http_start() and lsm_http_wait(), read through lsm_http_outcome(),
 * freed with lsm_http_release().  A request may be prepared again for a
 * new attempt after it is released: every attempt gets a fresh id.
 */
struct LsmRequest
{
	LsmOutcome	out;			/* what was sent, how it ended */
	const char *table_name;
	const char *body;			/* NULL: no body */
	void	   *owner;			/* caller's cookie, untouched here */
	size_t		response_cap;
	bool		header_done;	/* the header's closing blank line came */
	bool		status_known;	/* error_answer is set (first body bytes) */
	bool		error_answer;	/* a status outside 2xx: body cut */
	size_t		header_bytes;	/* header line bytes so far */
	bool		headers_capped; /* they passed LSM_HEADERS_MAX */
	CURL	   *easy;			/* while in flight */
	struct curl_slist *headers; /* while in flight */
	char	   *url;
	char	   *token;			/* copy of the bearer token sent, or NULL */
	TimestampTz min_timestamp;	/* x-lancedb-min-timestamp; 0: none */
	MemoryContext cxt;			/* this attempt's memory: URL, body, token */
	LsmSocketGate gate;			/* its sockets' callbacks (src/net/socket.c) */
	struct curl_slist *resolve; /* CURLOPT_RESOLVE, while in flight */
	LsmTransport lookup_failure;	/* the name lookup failed: how; else
									 * LSM_TRANSPORT_PENDING */
	char		lookup_problem[LSM_CURL_ERROR_LEN]; /* and why */
};

/*
 * http_route_path: the URL path component naming a route.
 */
static const char *
http_route_path(LsmRoute route)
{
	switch (route)
	{
		case LSM_ROUTE_FLUSH:
			return "flush_lsm";
		case LSM_ROUTE_COMPACT:
			return "compact_lsm";
		case LSM_ROUTE_STATS:
			return "get_lsm_stats";
		case LSM_ROUTE_SET_SPEC:
			return "set_lsm_write_spec";
		case LSM_ROUTE_UNSET_SPEC:
			return "unset_lsm_write_spec";
		case LSM_ROUTE_GET_SPEC:
			return "get_lsm_write_spec";
	}
	return "unrecognized";
}

/*
 * http_new_request_id: write a fresh random UUID v4 (RFC 4122) into buf,
 * which must hold LSM_REQUEST_ID_LEN + 1 bytes.
 *
 * A request id only tells one request from another in the server's logs:
 * it is no secret and nothing is derived from it, so it is drawn from a
 * pseudo-random generator of this backend's own, seeded once from the
 * strong source (pg_prng_strong_seed), rather than from the strong source
 * per request, which put 3.7 % of a 10,000-table call's user CPU into
 * libcrypto.
 * Errors: XX000 when the seed cannot be drawn.
 */
static void
http_new_request_id(char *buf)
{
	static pg_prng_state state;
	static bool seeded = false;
	uint64		r[2];
	uint8		b[16];

	if (!seeded)
	{
		if (!pg_prng_strong_seed(&state))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate random values")));
		seeded = true;
	}
	r[0] = pg_prng_uint64(&state);
	r[1] = pg_prng_uint64(&state);
	memcpy(b, r, sizeof(b));
	b[6] = (b[6] & 0x0F) | 0x40;
	b[8] = (b[8] & 0x3F) | 0x80;
	snprintf(buf, LSM_REQUEST_ID_LEN + 1,
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
			 b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/*
 * http_forget_attempt: free everything req's last attempt allocated (its
 * URL, its body, the copy of the bearer token it sent, wiped by
 * http_wipe_token), so that nothing of one attempt outlives it however
 * many follow.
 */
static void
http_forget_attempt(LsmRequest *req)
{
	req->token = NULL;
	req->out.bearer_token = NULL;
	req->url = NULL;
	req->out.response = NULL;
	req->out.response_len = 0;
	req->out.body_len = 0;
	req->response_cap = 0;
	MemoryContextReset(req->cxt);
}

/*
 * lsm_http_prepare: fill req for one attempt of a route on a table, on
 * behalf of owner (returned by lsm_http_wait() when it finishes), and
 * return it; req NULL: a new request.
 *
 * config, table_name and body must outlive the request.  Every call clears
 * the previous outcome and the freshness headers (lsm_http_set_freshness)
 * and sends request_id as x-request-id (an earlier attempt's, for a retry
 * of the same request), or a fresh one when it is NULL; the request must
 * not be in flight.  The request itself is allocated in
 * CurrentMemoryContext, which must outlive it; what one attempt needs
 * (URL, response body, the copy of the bearer token sent) lives in a
 * child context of its own, emptied when the next attempt is prepared and
 * when the request is released.  Errors: XX000 when no random request id
 * can be drawn.
 */
LsmRequest *
lsm_http_prepare(LsmRequest *req, const LsmConfig *config, LsmRoute route,
				 const char *table_name, const char *body, void *owner,
				 const char *request_id)
{
	MemoryContext oldcxt;

	if (req == NULL)
	{
		req = palloc0(sizeof(LsmRequest));
		req->cxt = AllocSetContextCreate(CurrentMemoryContext,
										 "lancelsm request",
										 ALLOCSET_SMALL_SIZES);
	}
	Assert(req->easy == NULL);
	http_forget_attempt(req);
	req->owner = owner;
	req->out.config = config;
	req->out.route = route;
	req->table_name = table_name;
	req->body = body;
	if (request_id != NULL)
		strlcpy(req->out.request_id, request_id, sizeof(req->out.request_id));
	else
		http_new_request_id(req->out.request_id);
	req->out.min_read_version = 0;
	req->out.version = 0;
	req->min_timestamp = 0;
	req->out.transport = LSM_TRANSPORT_PENDING;
	req->out.status = 0;
	req->out.sent = false;
	req->out.curl_error[0] = '\0';
	req->header_done = false;
	req->status_known = false;
	req->error_answer = false;
	req->header_bytes = 0;
	req->headers_capped = false;
	oldcxt = MemoryContextSwitchTo(req->cxt);
	req->url = lsm_url_build(config->base_url, config->id_delimiter,
							 table_name, http_route_path(route));
	MemoryContextSwitchTo(oldcxt);
	return req;
}

/*
 * lsm_http_set_freshness: send req's attempt (prepared, not started) with
 * x-lancedb-min-read-version (0: none) and x-lancedb-min-timestamp (0:
 * none), the SDK's freshness headers (docs/protocol.md, "Fresh reads").
 */
void
lsm_http_set_freshness(LsmRequest *req, uint64 min_read_version,
					   TimestampTz min_timestamp)
{
	Assert(req->easy == NULL);
	req->out.min_read_version = min_read_version;
	req->min_timestamp = min_timestamp;
}

/*
 * http_grow_buffer: req->out.response resized to newcap bytes (allocated in
 * req->cxt when there is none yet); NULL when out of memory, the old
 * buffer then intact.  Never raises: called from a curl callback.
 *
 * The buffer is resized in place (repalloc: realloc(), which extends the
 * block or mremap()s it) rather than copied into a new one: with
 * allocate-copy-free, glibc kept the freed smaller buffers in its heap
 * and an endless body peaked at twice lancelsm.max_response_size (t/call_hostile_answers.pl).
 */
static char *
http_grow_buffer(LsmRequest *req, size_t newcap)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	char	   *volatile grown = NULL;

	if (req->out.response == NULL)
		return MemoryContextAllocExtended(req->cxt, newcap,
										  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);

	/*
	 * repalloc_extended(MCXT_ALLOC_NO_OOM) is missing from older PG 15
	 * minor releases: turn repalloc_huge's out-of-memory error into NULL
	 * here, so that nothing is raised through libcurl.
	 */
	PG_TRY();
	{
		grown = repalloc_huge(req->out.response, newcap);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		FlushErrorState();
		grown = NULL;
	}
	PG_END_TRY();
	return grown;
}

/*
 * http_body_keep: how many of the next n body bytes req keeps.  All of a
 * 2xx answer's body; of any other status's (an error body), only up to
 * LSM_ERROR_BODY_MAX bytes in all, the rest dropped as it arrives: only
 * its "code" and "error" are ever read, and a huge error body must cost
 * neither its size in memory nor many times that in a JSON tree.  The
 * status is asked of libcurl when the first body bytes arrive (the final
 * answer's: interim and proxy answers have no body here).  Never raises.
 */
static size_t
http_body_keep(LsmRequest *req, size_t n)
{
	if (!req->status_known)
	{
		long		status = 0;

		curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE, &status);
		req->error_answer = (status < 200 || status > 299);
		req->status_known = true;
	}
	if (!req->error_answer)
		return n;
	if (req->out.response_len >= LSM_ERROR_BODY_MAX)
		return 0;
	return Min(n, LSM_ERROR_BODY_MAX - req->out.response_len);
}

/*
 * http_write_cb: curl's body callback.  Counts the body against
 * lancelsm.max_response_size while reading, and appends what
 * http_body_keep() keeps to req->out.response.  Never raises: on the cap
 * or out of memory it records why and returns 0, which makes curl abort
 * the transfer with CURLE_WRITE_ERROR.
 */
static size_t
http_write_cb(char *data, size_t size, size_t nmemb, void *userdata)
{
	LsmRequest *req = (LsmRequest *) userdata;
	size_t		cap_bytes = (size_t) lsm_max_response_size_kb * 1024;
	size_t		total = size * nmemb;
	size_t		n;

	if (total > cap_bytes || req->out.body_len > cap_bytes - total)
	{
		req->out.transport = LSM_TRANSPORT_TOO_LARGE;
		return 0;
	}
	req->out.body_len += total;
	n = http_body_keep(req, total);
	if (n == 0)
		return total;
	if (req->out.response_len + n + 1 > req->response_cap)
	{
		size_t		newcap = Max(req->response_cap * 2, req->out.response_len + n + 1);
		char	   *grown;

		newcap = Max(newcap, 1024);
		newcap = Min(newcap, cap_bytes + 1);
		grown = http_grow_buffer(req, newcap);
		if (grown == NULL)
		{
			strlcpy(req->out.curl_error, "out of memory", LSM_CURL_ERROR_LEN);
			return 0;
		}
		req->out.response = grown;
		req->response_cap = newcap;
	}
	memcpy(req->out.response + req->out.response_len, data, n);
	req->out.response_len += n;
	req->out.response[req->out.response_len] = '\0';
	return total;
}

static void http_free_headers(struct curl_slist *list);

/*
 * http_headers_within_cap: count n more header bytes of req; false, with
 * req->headers_capped set, once they pass LSM_HEADERS_MAX in all.  This
 * bounds what a server can make a backend read before any body, whatever
 * the libcurl build: libcurl limits each header line, but before 8.3.0
 * (CVE-2023-38039) not their total.  Never raises.
 */
static bool
http_headers_within_cap(LsmRequest *req, size_t n)
{
	if (n > LSM_HEADERS_MAX || req->header_bytes > LSM_HEADERS_MAX - n)
	{
		req->headers_capped = true;
		return false;
	}
	req->header_bytes += n;
	return true;
}

/*
 * http_header_version: the value of an x-lancedb-version header line of n
 * bytes (not NUL-terminated), or 0 when the line is another header, or its
 * value is not an unsigned 64-bit decimal number (surrounding blanks
 * allowed), as the SDK parses it (u64).  Never raises.
 */
static uint64
http_header_version(const char *line, size_t n)
{
	static const char name[] = "x-lancedb-version:";
	size_t		i = sizeof(name) - 1;
	uint64		v = 0;
	bool		digits = false;

	if (n < i || pg_strncasecmp(line, name, i) != 0)
		return 0;
	while (i < n && (line[i] == ' ' || line[i] == '\t'))
		i++;
	for (; i < n && line[i] >= '0' && line[i] <= '9'; i++)
	{
		if (v > (PG_UINT64_MAX - (line[i] - '0')) / 10)
			return 0;			/* out of range */
		v = v * 10 + (line[i] - '0');
		digits = true;
	}
	while (i < n && (line[i] == ' ' || line[i] == '\t' ||
					 line[i] == '\r' || line[i] == '\n'))
		i++;
	return (digits && i == n) ? v : 0;
}

/*
 * http_header_cb: curl's header callback, called once per complete header
 * line; notes when the blank line that ends the header arrives and the
 * answer's x-lancedb-version (an interim or proxy answer's status line
 * starts over), and returns 0 (curl then aborts with CURLE_WRITE_ERROR)
 * once the lines pass LSM_HEADERS_MAX.  Never raises.
 */
static size_t
http_header_cb(char *data, size_t size, size_t nmemb, void *userdata)
{
	LsmRequest *req = (LsmRequest *) userdata;
	size_t		n = size * nmemb;
	uint64		version;

	if (!http_headers_within_cap(req, n))
		return 0;
	if ((n == 2 && data[0] == '\r' && data[1] == '\n') ||
		(n == 1 && data[0] == '\n'))
		req->header_done = true;
	else if (n >= 5 && strncmp(data, "HTTP/", 5) == 0)
		req->out.version = 0;
	else if ((version = http_header_version(data, n)) != 0)
		req->out.version = version;
	return n;
}

/*
 * http_append_header: append "name: value" to list, wiping the temporary
 * copy (value may be a secret).  Returns NULL when libcurl runs out of
 * memory, after freeing the list.
 */
static struct curl_slist *
http_append_header(struct curl_slist *list, const char *name,
				   const char *value)
{
	char	   *line = psprintf("%s: %s", name, value);
	struct curl_slist *grown = curl_slist_append(list, line);

	explicit_bzero(line, strlen(line));
	pfree(line);
	if (grown == NULL)
		http_free_headers(list);
	return grown;
}

/*
 * http_client_headers: append the client options' headers to list:
 * x-lancedb-database-prefix, x-lancedb-user-id, "authorization: Bearer
 * token" (token NULL: none), then the extra headers.  NULL when libcurl
 * runs out of memory.
 */
static struct curl_slist *
http_client_headers(struct curl_slist *list, const LsmConfig *config,
					const char *token)
{
	if (list && config->database_prefix)
		list = http_append_header(list, "x-lancedb-database-prefix",
								  config->database_prefix);
	if (list && config->user_id)
		list = http_append_header(list, "x-lancedb-user-id", config->user_id);
	if (list && token)
	{
		char	   *bearer = psprintf("Bearer %s", token);

		list = http_append_header(list, "authorization", bearer);
		explicit_bzero(bearer, strlen(bearer));
		pfree(bearer);
	}
	for (int i = 0; list && i < config->nheaders; i++)
	{
		struct curl_slist *grown = curl_slist_append(list,
													 config->header_lines[i]);

		if (grown == NULL)
			http_free_headers(list);
		list = grown;
	}
	return list;
}

/*
 * http_freshness_headers: append req's x-lancedb-min-read-version and
 * x-lancedb-min-timestamp (RFC 3339, UTC, microseconds, as the SDK's
 * chrono writes it) to list, when set.  NULL when libcurl runs out of
 * memory.
 */
static struct curl_slist *
http_freshness_headers(struct curl_slist *list, const LsmRequest *req)
{
	char		line[96];

	if (list && req->out.min_read_version != 0)
	{
		snprintf(line, sizeof(line), "x-lancedb-min-read-version: " UINT64_FORMAT,
				 req->out.min_read_version);
		list = curl_slist_append(list, line);
	}
	if (list && req->min_timestamp != 0)
	{
		pg_time_t	secs = timestamptz_to_time_t(req->min_timestamp);
		int			usecs = (int) (req->min_timestamp -
								   time_t_to_timestamptz(secs));
		struct pg_tm *tm = pg_gmtime(&secs);

		if (usecs < 0)
		{
			secs--;
			usecs += USECS_PER_SEC;
			tm = pg_gmtime(&secs);
		}
		snprintf(line, sizeof(line),
				 "x-lancedb-min-timestamp: %04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
				 tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday,
				 tm->tm_hour, tm->tm_min, tm->tm_sec, usecs);
		list = curl_slist_append(list, line);
	}
	return list;
}

/*
 * http_header_list: the request headers of req.  The x-api-key line, the
 * bearer token and the user mapping's extra headers hold secrets:
 * http_free_headers() wipes every line.  Returns NULL when libcurl runs
 * out of memory; raises when the bearer token file cannot be read.
 */
static struct curl_slist *
http_header_list(const LsmRequest *req)
{
	const LsmConfig *config = req->out.config;
	struct curl_slist *list = NULL;
	char		line[512];

	/* read first: an error raised later would leak the list */
	const char *token = config->bearer_token_file ?
		lsm_bearer_token(config->bearer_token_file) : NULL;

	snprintf(line, sizeof(line), "x-request-id: %s", req->out.request_id);
	list = curl_slist_append(list, line);
	if (list && config->host_override)
	{
		char	   *db = psprintf("x-lancedb-database: %s", config->database);

		list = curl_slist_append(list, db);
		pfree(db);
	}
	if (list)
		list = curl_slist_append(list, req->body ?
								 "content-type: application/json" :
								 "content-type:");
	if (list)
		list = curl_slist_append(list, "expect:");
	if (list && config->api_key && config->api_key[0] != '\0')
	{
		char	   *key = psprintf("x-api-key: %s", config->api_key);

		list = curl_slist_append(list, key);
		explicit_bzero(key, strlen(key));
		pfree(key);
	}
	if (list)
		list = http_freshness_headers(list, req);
	return http_client_headers(list, config, token);
}

/*
 * http_free_headers: wipe every header line (one holds the API key) and
 * free the list.
 */
static void
http_free_headers(struct curl_slist *list)
{
	for (struct curl_slist *item = list; item; item = item->next)
		explicit_bzero(item->data, strlen(item->data));
	curl_slist_free_all(list);
}

/*
 * http_configure_liveness: the bounds that hold without statement_timeout
 * (pg_cron's jobs run without one unless they set it): TCP keepalive, and
 * the server's read_timeout, the longest the server may stay silent.
 *
 * read_timeout is libcurl's low-speed check: the transfer is aborted with
 * CURLE_OPERATION_TIMEDOUT once it has moved less than 1 byte per second
 * for read_timeout seconds.  That was chosen over tracking the last byte
 * of each request in the wait loop of src/net/pool.c: libcurl applies the
 * check only while a transfer is sending or reading (not while it is
 * queued behind POOL_MAX_CONNECTIONS, nor while connecting, which
 * connect_timeout bounds), and it arms its own 1-second timer through
 * the pool's timer callback, so the wait loop wakes up for it unchanged;
 * the wait loop, on the other hand, sees sockets, not requests, and a
 * reused connection changes hands between requests.  The price: libcurl
 * measures the rate over its last few 1-second samples, so the bound is
 * read_timeout plus up to about 2 seconds, and a body that trickles in at
 * under 1 byte per second is cut off like a silent one.  Whichever of
 * this and the statement's deadline (CURLOPT_TIMEOUT_MS) comes first ends
 * the request.
 */
static void
http_configure_liveness(CURL *easy, const LsmConfig *config)
{
	curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(easy, CURLOPT_TCP_KEEPIDLE, LSM_TCP_KEEPIDLE_S);
	curl_easy_setopt(easy, CURLOPT_TCP_KEEPINTVL, LSM_TCP_KEEPINTVL_S);
	if (config->read_timeout_s > 0)
	{
		curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, config->read_timeout_s);
	}
}

/*
 * http_configure_names: how a host name is resolved: never by libcurl.
 *
 * libcurl's threaded resolver starts a thread per new connection and,
 * aborted, leaves it behind uncounted; so names are looked up by
 * src/net/lookup.c instead, bounded per backend, and handed to libcurl
 * (http_resolve).  No entry of libcurl's own cache outlives a lookup
 * (CURLOPT_DNS_CACHE_TIMEOUT 0): what it holds is what http_resolve
 * gave it.  With CURLOPT_QUICK_EXIT (libcurl 7.87.0 and later) an abort
 * never waits for a thread, should a build of libcurl still start one.
 */
static void
http_configure_names(CURL *easy)
{
	curl_easy_setopt(easy, CURLOPT_DNS_CACHE_TIMEOUT, 0L);
#if LIBCURL_VERSION_NUM >= 0x075700
	curl_easy_setopt(easy, CURLOPT_QUICK_EXIT, 1L);
#endif
}

#if LIBCURL_VERSION_NUM >= 0x073B00
/*
 * http_refuse_lookup: libcurl's CURLOPT_RESOLVER_START_FUNCTION: refuse
 * every lookup libcurl would start itself (a name http_resolve did not
 * resolve: the transfer then fails as unresolved).  Never raises.
 */
static int
http_refuse_lookup(void *resolver_state, void *reserved, void *userdata)
{
	return 1;
}
#endif

#if LIBCURL_VERSION_NUM >= 0x073B00
/*
 * http_host_as_written: in problem, the host name host (lower case, as
 * src/net/endpoint.c gives it) in the case url writes it, as libcurl's own
 * messages show a name: an error shows the name the DBA set.  Never
 * raises.
 */
static void
http_host_as_written(char *problem, const char *host, const char *url)
{
	char	   *at = strstr(problem, host);
	size_t		len = strlen(host);
	const char *written;

	if (at == NULL)
		return;
	for (written = url; *written != '\0'; written++)
		if (pg_strncasecmp(written, host, len) == 0)
		{
			memcpy(at, written, len);
			return;
		}
}
#endif

/*
 * http_resolve: look up the name req connects to (the proxy's, when there
 * is one: the proxy resolves the server's name in its CONNECT) with
 * src/net/lookup.c and give libcurl its addresses (CURLOPT_RESOLVE), for
 * every new connection of this transfer; an address literal is left to
 * libcurl, which needs no lookup for it.  The URL keeps the name, so TLS
 * still sends it (SNI) and checks the certificate against it, and
 * lancelsm.allowed_endpoints still checks the addresses in the socket
 * callback.  When the lookup fails, or the gate refuses the endpoint by
 * name (then nothing is looked up), libcurl's cached entry of the name is
 * dropped and its own lookup refused: the transfer fails at once, and
 * http_finished gives it the lookup's failure or the refusal.  The gate
 * (lsm_socket_configure) must be set first.  With libcurl older than
 * 7.59.0, libcurl looks names up itself, unbounded.  Errors: 57014
 * (cancel, statement_timeout or deadline while waiting for the lookup),
 * out of memory.
 */
static void
http_resolve(CURL *easy, LsmRequest *req, TimestampTz deadline)
{
#if LIBCURL_VERSION_NUM >= 0x073B00
	const LsmConfig *config = req->out.config;
	char		host[ENDPOINT_HOST_LEN];
	char		addresses[LSM_LOOKUP_ADDRESSES_LEN];
	int			port;
	LsmLookupStatus status;
	char	   *entry;

	req->lookup_failure = LSM_TRANSPORT_PENDING;
	if (!lsm_endpoint_url_host(config->proxy ? config->proxy : config->base_url,
							   host, &port) ||
		lsm_lookup_is_address(host))
		return;
	/* refused by name (src/net/socket.c): not even looked up */
	status = req->gate.deny_all ? LSM_LOOKUP_FAILED :
		lsm_lookup(host, port, deadline, config->connect_timeout_ms,
				   addresses, sizeof(addresses), req->lookup_problem,
				   sizeof(req->lookup_problem));
	if (status == LSM_LOOKUP_FOUND)
		entry = psprintf("%s:%d:%s", host, port, addresses);
	else
	{
		if (!req->gate.deny_all)
			http_host_as_written(req->lookup_problem, host,
								 config->proxy ? config->proxy : config->base_url);
		entry = psprintf("-%s:%d", host, port);
		req->lookup_failure = status == LSM_LOOKUP_NO_DESCRIPTOR ?
			LSM_TRANSPORT_NO_DESCRIPTOR : LSM_TRANSPORT_CONNECT;
	}
	req->resolve = curl_slist_append(NULL, entry);
	pfree(entry);
	if (req->resolve == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Could not create a libcurl request.")));
	curl_easy_setopt(easy, CURLOPT_RESOLVE, req->resolve);
	curl_easy_setopt(easy, CURLOPT_RESOLVER_START_FUNCTION, http_refuse_lookup);
#endif
}

/*
 * http_version_option: the CURLOPT_HTTP_VERSION value of an http_version
 * option.  By default HTTP/2 is offered first in TLS's ALPN and HTTP/1.1
 * spoken when the server does not pick it, or over plain http://;
 * "2" also speaks HTTP/2 over plain http:// (prior knowledge, for a
 * cleartext HTTP/2 edge); "1.1" never offers HTTP/2.
 */
static long
http_version_option(LsmHttpVersion version)
{
	switch (version)
	{
		case LSM_HTTP_1_1:
			return (long) CURL_HTTP_VERSION_1_1;
		case LSM_HTTP_2:
			return (long) CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
		case LSM_HTTP_DEFAULT:
			break;
	}
	return (long) CURL_HTTP_VERSION_2TLS;
}

/*
 * http_may_multiplex: requests to this server may speak HTTP/2: https
 * with HTTP/2 offered in ALPN, or HTTP/2 pinned.
 */
static bool
http_may_multiplex(const LsmConfig *config)
{
	if (config->http_version == LSM_HTTP_2)
		return true;
	return config->http_version == LSM_HTTP_DEFAULT &&
		strncmp(config->base_url, "https://", 8) == 0;
}

/*
 * http_configure_route: how a request reaches the server: HTTP version,
 * multiplexing, proxy and TLS.
 *
 * HTTP/2 requests wait for a connection being set up to the same server
 * (CURLOPT_PIPEWAIT) rather than opening one each, so that the requests
 * of a many-table call share one multiplexed connection (src/net/pool.c).
 * Requests that can only speak HTTP/1.1 do not wait: libcurl would hold
 * them until the first request on that connection had been answered in
 * full, so one slow answer would hold back every table started with it.
 *
 * Proxies: only the proxy option names one.  CURLOPT_PROXY "" and
 * CURLOPT_NOPROXY "" make libcurl ignore http_proxy, https_proxy,
 * all_proxy and no_proxy in the postmaster's environment, which lancelsm
 * 1.1 followed unknowingly: the key then took a route the DBA never
 * chose.  Through a proxy every request goes in a CONNECT tunnel, so the
 * proxy sees the host and port, never a header; the validator refuses a
 * plain-http target with a proxy.  The user mapping's proxy_user and
 * proxy_password, if any, answer the proxy's Basic authentication.
 *
 * TLS: the peer and its host name are verified, TLS 1.2 at least.
 */
static void
http_configure_route(CURL *easy, const LsmConfig *config)
{
	curl_easy_setopt(easy, CURLOPT_HTTP_VERSION,
					 http_version_option(config->http_version));
	curl_easy_setopt(easy, CURLOPT_PIPEWAIT, http_may_multiplex(config) ? 1L : 0L);
	curl_easy_setopt(easy, CURLOPT_PROXY, config->proxy ? config->proxy : "");
	curl_easy_setopt(easy, CURLOPT_NOPROXY, "");
	if (config->proxy)
	{
		curl_easy_setopt(easy, CURLOPT_PROXYTYPE, (long) CURLPROXY_HTTP);
		curl_easy_setopt(easy, CURLOPT_HTTPPROXYTUNNEL, 1L);
	}
	if (config->proxy && config->proxy_user)
	{
		/* Basic, sent to the proxy only, in the CONNECT request */
		curl_easy_setopt(easy, CURLOPT_PROXYAUTH, (long) CURLAUTH_BASIC);
		curl_easy_setopt(easy, CURLOPT_PROXYUSERNAME, config->proxy_user);
		curl_easy_setopt(easy, CURLOPT_PROXYPASSWORD, config->proxy_password);
	}
	curl_easy_setopt(easy, CURLOPT_SSLVERSION, (long) CURL_SSLVERSION_TLSv1_2);
	curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
	if (config->ssl_ca_file)
		curl_easy_setopt(easy, CURLOPT_CAINFO, config->ssl_ca_file);
	if (config->ssl_cert_file)
		curl_easy_setopt(easy, CURLOPT_SSLCERT, config->ssl_cert_file);
	if (config->ssl_key_file)
		curl_easy_setopt(easy, CURLOPT_SSLKEY, config->ssl_key_file);
}

/*
 * http_configure: set every option of an easy handle for req.  Secure
 * defaults: http and https only, no redirects, verified TLS 1.2 or later,
 * no proxy but the proxy option's, no signals.
 */
static void
http_configure(CURL *easy, LsmRequest *req, TimestampTz deadline)
{
	const LsmConfig *config = req->out.config;

	curl_easy_setopt(easy, CURLOPT_URL, req->url);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS,
					 (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
	curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS,
					 (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(easy, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(easy, CURLOPT_USERAGENT,
					 "lancelsm/" LANCELSM_RELEASE " (PostgreSQL " PG_VERSION ")");
	curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, req->out.curl_error);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, http_write_cb);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, req);
	curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, http_header_cb);
	curl_easy_setopt(easy, CURLOPT_HEADERDATA, req);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, req->headers);
	curl_easy_setopt(easy, CURLOPT_POST, 1L);
	curl_easy_setopt(easy, CURLOPT_POSTFIELDS, req->body ? req->body : "");
	curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE,
					 (long) (req->body ? strlen(req->body) : 0));


	/*
	 * Keep-alive connections are reused for every route.  libcurl sends a
	 * request again, once, when a reused connection turns out dead before
	 * any answer; that is safe here: flush is idempotent, compact only
	 * latches what is not latched, stats mutate nothing.  Do not set CURLOPT_FRESH_CONNECT: it would cost a
	 * TCP (and TLS) handshake per call (bench/reuse.sh: 1,000 flushes on at
	 * most 2 connections).
	 */
	if (req->out.route == LSM_ROUTE_SET_SPEC || req->out.route == LSM_ROUTE_UNSET_SPEC)
	{
		/*
		 * ... except the two routes that change a table's write path: if
		 * a reused connection dies after the server acted on the request,
		 * the transparent re-send would install twice or unset twice (and
		 * the second unset would report "nothing set" for an unset that
		 * worked).  A fresh connection is never re-sent; these routes are
		 * rare, the handshake is cheap at that rate.
		 */
		curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
	}
	curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE,
					 (curl_off_t) lsm_max_response_size_kb * 1024);
	curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, lsm_deadline_remaining_ms(deadline));
	http_configure_liveness(easy, config);
	http_configure_names(easy);
	if (config->connect_timeout_ms > 0)
		curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
						 config->connect_timeout_ms);
	http_configure_route(easy, config);
}

/*
 * http_free_curl: free req's easy handle and header list (wiping the API
 * key).  The request must be off its pool's multi handle.
 */
static void
http_free_curl(LsmRequest *req)
{
	if (req->easy)
	{
		curl_easy_cleanup(req->easy);
		req->easy = NULL;
	}
	if (req->headers)
	{
		http_free_headers(req->headers);
		req->headers = NULL;
	}
	if (req->resolve)
	{
		curl_slist_free_all(req->resolve);
		req->resolve = NULL;
	}
}

/*
 * http_wipe_token: memory context reset callback zeroing a token copy
 * (arg) before its context frees it.
 */
static void
http_wipe_token(void *arg)
{
	explicit_bzero(arg, strlen((char *) arg));
}

/*
 * http_remember_token: keep a copy of the bearer token req is sent with
 * (the one http_header_list() just read), in req's attempt context, so
 * that its failure is redacted of that token even when the file changed
 * in between (src/protocol/fault.c).  A reset callback wipes it whenever
 * that context is emptied or deleted: at the next attempt, at release, or
 * with the caller's memory on an error.
 */
static void
http_remember_token(LsmRequest *req)
{
	const char *token = lsm_bearer_token_peek(req->out.config->bearer_token_file);
	MemoryContextCallback *wipe;

	if (token != NULL)
	{
		wipe = MemoryContextAlloc(req->cxt, sizeof(MemoryContextCallback));
		req->token = MemoryContextStrdup(req->cxt, token);
		wipe->func = http_wipe_token;
		wipe->arg = req->token;
		MemoryContextRegisterResetCallback(req->cxt, wipe);
	}
	req->out.bearer_token = req->token;
}

/*
 * lsm_http_start: put a prepared request in flight on the connection pool
 * of its server and user mapping.  The transfer gives up by itself at
 * deadline (0: none) as a backstop to statement_timeout, which is not
 * armed in every context (pg_cron's background workers).  On any error the
 * request's curl objects are freed and its header lines wiped before the
 * error propagates.  Errors: 53200 when libcurl cannot create or start the
 * request; F0000 when the bearer token file cannot be read.
 */
void
lsm_http_start(LsmRequest *req, TimestampTz deadline)
{
	CURL	   *easy;
	volatile bool attached = false;

	Assert(req->easy == NULL && req->out.transport == LSM_TRANSPORT_PENDING);
	req->headers = http_header_list(req);
	http_remember_token(req);
	easy = curl_easy_init();
	req->easy = easy;
	if (req->headers == NULL || easy == NULL)
	{
		http_free_curl(req);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Could not create a libcurl request.")));
	}
	PG_TRY();
	{
		http_configure(easy, req, deadline);
		lsm_socket_configure(easy, &req->gate, req->out.config);
		http_resolve(easy, req, deadline);
		attached = lsm_pool_add(easy, req->out.config->serverid,
								req->out.config->umid,
								http_may_multiplex(req->out.config), req);
	}
	PG_CATCH();
	{
		/* out of memory before the pool tracked req: wipe and free here */
		http_free_curl(req);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (!attached)
	{
		http_free_curl(req);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not start a libcurl request")));
	}
}

/*
 * http_header_too_large: curl refused the answer because its header grew
 * past libcurl's limit (CURL_MAX_HTTP_HEADER, 100 kB per header line).
 * Before 8.6.0 libcurl reports that as CURLE_OUT_OF_MEMORY with an empty
 * error buffer; a real allocation failure of ours leaves "out of memory" in
 * the buffer instead (http_write_cb).  From 8.6.0 on it is CURLE_TOO_LARGE,
 * with the buffer saying which limit was met.
 */
static bool
http_header_too_large(const LsmRequest *req, CURLcode code)
{
	if (req->header_done)
		return false;
#if LIBCURL_VERSION_NUM >= 0x080600
	if (code == CURLE_TOO_LARGE)
		return true;
#endif
	return code == CURLE_OUT_OF_MEMORY && req->out.curl_error[0] == '\0';
}

/*
 * http_proxy_refused: the proxy answered the CONNECT with something other
 * than 2xx (libcurl reports that as a receive error, as if the server had
 * broken the exchange): the server was never reached.  libcurl's error
 * buffer says "CONNECT tunnel failed, response N".
 */
static bool
http_proxy_refused(const LsmRequest *req)
{
	long		connect_code = 0;

	if (req->out.config->proxy == NULL)
		return false;
	curl_easy_getinfo(req->easy, CURLINFO_HTTP_CONNECTCODE, &connect_code);
	return connect_code != 0 && (connect_code < 200 || connect_code > 299);
}

/*
 * http_refused_unseen: libcurl gave up sending the request again.  It
 * sends a request again, on another connection, only when no byte of an
 * answer came: the server refused the HTTP/2 stream (REFUSED_STREAM, or a
 * GOAWAY naming a lower last stream), or a reused connection died before
 * answering (docs/configuration.md, "Connections").  After 5 such sends it
 * gives up with this fixed text of lib/transfer.c in the error buffer, its
 * only sign (the code may be CURLE_SEND_ERROR, or the receive error that
 * ended the last send, which libcurl keeps): behind an edge that ends
 * each connection after a few requests (nginx's keepalive_requests), the
 * streams of a many-table call in flight at once meet one GOAWAY after
 * another.
 */
static bool
http_refused_unseen(const LsmRequest *req, CURLcode code)
{
	return code != CURLE_OK && req->out.status == 0 &&
		strncmp(req->out.curl_error, "Connection died, tried ", 23) == 0;
}

/*
 * http_classify: how a transfer curl has finished with code ended.
 * deadline is the statement's (0: none).
 */
static LsmTransport
http_classify(const LsmRequest *req, CURLcode code, TimestampTz deadline)
{
	long		sent = 0;

	if (req->out.transport == LSM_TRANSPORT_TOO_LARGE ||
		code == CURLE_FILESIZE_EXCEEDED)
		return LSM_TRANSPORT_TOO_LARGE;
	if (req->headers_capped)
		return LSM_TRANSPORT_HEADERS_TOO_LARGE;
	if (code == CURLE_OK)
		return LSM_TRANSPORT_OK;
	if (http_proxy_refused(req))
		return LSM_TRANSPORT_CONNECT;
	if (http_header_too_large(req, code))
		return LSM_TRANSPORT_HEADER_TOO_LARGE;
	if (code == CURLE_OPERATION_TIMEDOUT && deadline != 0 &&
		GetCurrentTimestamp() >=
		TimestampTzPlusMilliseconds(deadline, -LSM_DEADLINE_GRACE_MS))
		/* curl's clock is not ours: a timeout this close is the deadline */
		return LSM_TRANSPORT_TIMEOUT;
	if (code == CURLE_OPERATION_TIMEDOUT && req->out.config->read_timeout_s > 0)
	{
		/* with the request sent, only the low-speed check times out */
		curl_easy_getinfo(req->easy, CURLINFO_REQUEST_SIZE, &sent);
		if (sent > 0)
			return LSM_TRANSPORT_READ_TIMEOUT;
	}
	if (code == CURLE_COULDNT_RESOLVE_HOST ||
		code == CURLE_COULDNT_CONNECT ||
		code == CURLE_SSL_CONNECT_ERROR ||
		code == CURLE_PEER_FAILED_VERIFICATION ||
		code == CURLE_SSL_CACERT_BADFILE ||
		code == CURLE_SSL_CERTPROBLEM ||
		code == CURLE_SSL_ISSUER_ERROR ||
		code == CURLE_SSL_CIPHER ||
		code == CURLE_UNSUPPORTED_PROTOCOL ||
		code == CURLE_URL_MALFORMAT ||
		(code == CURLE_OPERATION_TIMEDOUT && req->out.status == 0))
		return LSM_TRANSPORT_CONNECT;
	if (http_refused_unseen(req, code))
		return LSM_TRANSPORT_REFUSED;
	if (code == CURLE_WEIRD_SERVER_REPLY ||
		code == CURLE_BAD_CONTENT_ENCODING)
		/* e.g. a header line without a colon, a bad status line */
		return LSM_TRANSPORT_PROTOCOL;

	/*
	 * Everything else broke an exchange under way, CURLE_HTTP2 and
	 * CURLE_HTTP2_STREAM included: an HTTP/2 stream reset, or a GOAWAY
	 * that ended a stream the server had taken, is the reset connection
	 * of HTTP/1.1.  (Streams a GOAWAY refused before the server took them
	 * are sent again on a new connection by libcurl itself.)
	 */
	return LSM_TRANSPORT_FAILED;
}

/*
 * http_finished: classify a transfer curl has finished (the request is
 * off its pool) into its transport class and HTTP status, note whether
 * any byte of the request was sent, then free its
 * curl objects.  deadline is the statement's (0: none).  req->out.curl_error keeps
 * libcurl's error buffer, or curl_easy_strerror()'s text when libcurl left
 * the buffer empty.
 */
static void
http_finished(LsmRequest *req, CURLcode code, TimestampTz deadline)
{
	LsmTransport refusal;
	long		request_size = 0;

	curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE, &req->out.status);
	/* libcurl counts the bytes of the request it sent: none if refused */
	curl_easy_getinfo(req->easy, CURLINFO_REQUEST_SIZE, &request_size);
	req->out.sent = request_size > 0;
	/* the write callback may have recorded why it stopped the body */
	refusal = lsm_socket_refusal(&req->gate, code, req->out.curl_error,
								 LSM_CURL_ERROR_LEN);
	if (refusal == LSM_TRANSPORT_PENDING && code != CURLE_OK &&
		req->lookup_failure != LSM_TRANSPORT_PENDING)
	{
		/* libcurl only saw the lookup refused: say why it failed */
		refusal = req->lookup_failure;
		strlcpy(req->out.curl_error, req->lookup_problem, LSM_CURL_ERROR_LEN);
	}
	req->out.transport = refusal != LSM_TRANSPORT_PENDING ? refusal :
		http_classify(req, code, deadline);
	if (req->out.curl_error[0] == '\0' && code != CURLE_OK)
		strlcpy(req->out.curl_error, curl_easy_strerror(code), LSM_CURL_ERROR_LEN);
	if (req->out.transport != LSM_TRANSPORT_OK)
		req->out.status = 0;
	http_free_curl(req);
}

/*
 * lsm_http_outcome: what req sent and how it ended (transport
 * LSM_TRANSPORT_PENDING while it has not).  Valid until req is prepared
 * again or released.
 */
const LsmOutcome *
lsm_http_outcome(const LsmRequest *req)
{
	return &req->out;
}

/*
 * lsm_http_release: free what a request still holds: its curl objects and
 * its attempt's memory (the request itself stays, ready to be prepared
 * again).  Safe on a request that is in flight (it is aborted), finished
 * or never started, and on NULL (never prepared).
 */
void
lsm_http_release(LsmRequest *req)
{
	if (req == NULL)
		return;
	if (req->easy)
		lsm_pool_remove(req->easy);
	http_free_curl(req);
	http_forget_attempt(req);
}


/*
 * lsm_http_free: release a request (lsm_http_release) and free it and its
 * memory context; req must not be used again.  Safe on NULL.
 */
void
lsm_http_free(LsmRequest *req)
{
	if (req == NULL)
		return;
	lsm_http_release(req);
	MemoryContextDelete(req->cxt);
	pfree(req);
}

/*
 * lsm_http_wait: drive every request in flight until one finishes (return
 * its owner; the request is off its pool, its outcome filled in, its curl
 * objects freed) or until wake_at passes (return NULL; 0: no wake-up);
 * backing_off: the wake-up is a retry's or re-issue's (the wait event).
 * Raises PostgreSQL's own error on query cancel, statement_timeout or when
 * deadline (0: none) passes; requests then stay in flight and the caller
 * must call lsm_http_abort_all().  The caller calls lsm_http_waits_over()
 * once every request it started has finished.  Errors: 57014, or out of
 * memory.
 */
void *
lsm_http_wait(TimestampTz wake_at, TimestampTz deadline, bool backing_off)
{
	CURLcode	code;
	LsmRequest *req = lsm_pool_wait(wake_at, deadline, backing_off, &code);

	if (req == NULL)
		return NULL;
	http_finished(req, code, deadline);
	if (req->out.transport == LSM_TRANSPORT_TIMEOUT)
		lsm_deadline_passed();
	return req->owner;
}

/*
 * lsm_http_waits_over: the caller of lsm_http_wait is done waiting (every
 * request it started has finished): free what the waits kept (the
 * WaitEventSet of src/net/pool.c, with its descriptor).  Raises nothing.
 */
void
lsm_http_waits_over(void)
{
	lsm_pool_waits_over();
}

/*
 * lsm_http_abort_all: abort and free every request in flight.  Called from
 * the PG_CATCH of whoever started them, before memory is reset, so that no
 * easy handle, header list (with its API key) or half-read connection
 * outlives an error.
 */
void
lsm_http_abort_all(void)
{
	LsmRequest *req;

	while ((req = lsm_pool_abort_next()) != NULL)
		lsm_http_release(req);
}
