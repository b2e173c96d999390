/*-------------------------------------------------------------------------
 *
 * http.c
 *		The HTTP route client of lancelsm.
 *
 * Builds the LSM route requests (URL, headers, request id) and performs
 * them on one libcurl multi handle kept for the life of the backend, so
 * that keep-alive connections are reused across calls and several requests
 * can be in flight at once.  Waiting is done on a WaitEventSet holding the
 * session latch, postmaster death and curl's own sockets, with curl's timer
 * as the timeout: a query cancel or statement_timeout sets the latch, and
 * CHECK_FOR_INTERRUPTS() raises PostgreSQL's own error within one wakeup,
 * whatever curl is doing (resolving, connecting, TLS, sending, waiting for
 * a silent server, reading a dripping body).
 *
 * No PostgreSQL error is ever raised inside a curl callback: callbacks
 * record what went wrong and return an abort code.  Errors raised between
 * curl calls (interrupts, the deadline) leave requests in flight: the
 * caller's PG_CATCH must call lsm_http_abort_all().
 *
 * Protocol source: shared/docs/lsm-protocol.md, "Transport".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <curl/curl.h>

#include "common/string.h"
#include "lancelsm.h"
#include "http.h"
#include "miscadmin.h"
#include "port.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#if LIBCURL_VERSION_NUM < 0x075500
#error "lancelsm needs libcurl 7.85.0 or later (CURLOPT_PROTOCOLS_STR)"
#endif

/* One socket curl asked us to watch, and for what (CURL_POLL_*). */
typedef struct HttpSocket
{
	curl_socket_t fd;
	int			what;
} HttpSocket;

/* The backend's multi handle and what its callbacks told us. */
static CURLM *http_multi = NULL;
static HttpSocket *http_sockets = NULL;
static int	http_nsockets = 0;
static int	http_socket_cap = 0;
static TimestampTz http_timer_at = -1;	/* -1: curl wants no timeout */

/* Requests in flight, so that an error can abort them all. */
static LsmRequest **http_inflight = NULL;
static int	http_ninflight = 0;
static int	http_inflight_cap = 0;

#define HTTP_DEADLINE_GRACE_MS 10

/*
 * lsm_route_path: the URL path component naming a route.
 */
const char *
lsm_route_path(LsmRoute route)
{
	switch (route)
	{
		case LSM_ROUTE_FLUSH:
			return "flush_lsm";
		case LSM_ROUTE_COMPACT:
			return "compact_lsm";
		case LSM_ROUTE_STATS:
			return "get_lsm_stats";
	}
	return "unrecognized";
}

/*
 * lsm_http_encode_table: percent-encode a table identifier (or any string)
 * into exactly one URL path segment.  Only ASCII letters, digits, '-', '_'
 * and '~' stay as they are; everything else, '.' included (so that "." and
 * ".." can never become dot segments), becomes %XX.  Result is palloc'd.
 */
char *
lsm_http_encode_table(const char *table_name)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t		len = strlen(table_name);
	char	   *out = palloc(len * 3 + 1);
	char	   *p = out;

	for (const unsigned char *s = (const unsigned char *) table_name; *s; s++)
	{
		if ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
			(*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '~')
			*p++ = (char) *s;
		else
		{
			*p++ = '%';
			*p++ = hex[*s >> 4];
			*p++ = hex[*s & 0x0F];
		}
	}
	*p = '\0';
	return out;
}

/*
 * http_new_request_id: write a fresh random UUID v4 (RFC 4122) into buf,
 * which must hold LSM_REQUEST_ID_LEN + 1 bytes.
 */
static void
http_new_request_id(char *buf)
{
	uint8		b[16];

	if (!pg_strong_random(b, sizeof(b)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate random values")));
	b[6] = (b[6] & 0x0F) | 0x40;
	b[8] = (b[8] & 0x3F) | 0x80;
	snprintf(buf, LSM_REQUEST_ID_LEN + 1,
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
			 b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/*
 * http_build_url: the full URL of a route on a table, with ?delimiter=X
 * when the server uses a delimiter other than '$'.  palloc'd.
 */
static char *
http_build_url(const LsmConfig *config, LsmRoute route, const char *table)
{
	char	   *id = lsm_http_encode_table(table);

	if (strcmp(config->id_delimiter, "$") == 0)
		return psprintf("%s/v1/table/%s/%s/", config->base_url, id,
						lsm_route_path(route));
	return psprintf("%s/v1/table/%s/%s/?delimiter=%s", config->base_url, id,
					lsm_route_path(route),
					lsm_http_encode_table(config->id_delimiter));
}

/*
 * lsm_http_prepare: fill req for one attempt of a route on a table.
 *
 * config, table_name and body must outlive the request.  Every call draws
 * a fresh x-request-id and clears the previous outcome; the request must
 * not be in flight.  Allocates in CurrentMemoryContext, which must also
 * outlive the request (the response body is read into it).
 */
void
lsm_http_prepare(LsmRequest *req, const LsmConfig *config, LsmRoute route,
				 const char *table_name, const char *body)
{
	Assert(req->easy == NULL);
	req->config = config;
	req->route = route;
	req->table_name = table_name;
	req->body = body;
	http_new_request_id(req->request_id);
	req->transport = LSM_TRANSPORT_PENDING;
	req->status = 0;
	req->curl_error[0] = '\0';
	if (req->response)
		pfree(req->response);
	req->response = NULL;
	req->response_len = 0;
	req->response_cap = 0;
	if (req->url)
		pfree(req->url);
	req->url = http_build_url(config, route, table_name);
	req->cxt = CurrentMemoryContext;
}

/*
 * http_write_cb: curl's body callback.  Appends to req->response, enforcing
 * lancelsm.max_response_size while reading.  Never raises: on the cap or
 * out of memory it records why and returns 0, which makes curl abort the
 * transfer with CURLE_WRITE_ERROR.
 */
static size_t
http_write_cb(char *data, size_t size, size_t nmemb, void *userdata)
{
	LsmRequest *req = (LsmRequest *) userdata;
	size_t		n = size * nmemb;
	size_t		cap_bytes = (size_t) lsm_max_response_size_kb * 1024;

	if (n > cap_bytes || req->response_len > cap_bytes - n)
	{
		req->transport = LSM_TRANSPORT_TOO_LARGE;
		return 0;
	}
	if (req->response_len + n + 1 > req->response_cap)
	{
		size_t		newcap = Max(req->response_cap * 2, req->response_len + n + 1);
		char	   *grown;

		newcap = Max(newcap, 1024);
		newcap = Min(newcap, cap_bytes + 1);
		grown = MemoryContextAllocExtended(req->cxt, newcap,
										   MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
		if (grown == NULL)
		{
			strlcpy(req->curl_error, "out of memory", LSM_CURL_ERROR_LEN);
			return 0;
		}
		if (req->response)
		{
			memcpy(grown, req->response, req->response_len);
			pfree(req->response);
		}
		req->response = grown;
		req->response_cap = newcap;
	}
	memcpy(req->response + req->response_len, data, n);
	req->response_len += n;
	req->response[req->response_len] = '\0';
	return n;
}

/*
 * http_socket_cb: curl's socket callback; keeps http_sockets in step with
 * the sockets curl wants watched.  Returns -1 (abort) only when the table
 * cannot grow.
 */
static int
http_socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp,
			   void *socketp)
{
	int			i;

	for (i = 0; i < http_nsockets; i++)
		if (http_sockets[i].fd == fd)
			break;
	if (what == CURL_POLL_REMOVE)
	{
		if (i < http_nsockets)
			http_sockets[i] = http_sockets[--http_nsockets];
		return 0;
	}
	if (i == http_nsockets)
	{
		if (http_nsockets == http_socket_cap)
		{
			int			newcap = Max(16, http_socket_cap * 2);
			HttpSocket *grown;

			grown = MemoryContextAllocExtended(TopMemoryContext,
											   newcap * sizeof(HttpSocket),
											   MCXT_ALLOC_NO_OOM);
			if (grown == NULL)
				return -1;
			if (http_sockets)
			{
				memcpy(grown, http_sockets, http_nsockets * sizeof(HttpSocket));
				pfree(http_sockets);
			}
			http_sockets = grown;
			http_socket_cap = newcap;
		}
		http_sockets[http_nsockets++].fd = fd;
	}
	http_sockets[i].what = what;
	return 0;
}

/*
 * http_timer_cb: curl's timer callback; remembers when curl next wants
 * curl_multi_socket_action(CURL_SOCKET_TIMEOUT).
 */
static int
http_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	if (timeout_ms < 0)
		http_timer_at = -1;
	else
		http_timer_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													timeout_ms);
	return 0;
}

/*
 * http_multi: the backend's multi handle, created on first use.
 */
static CURLM *
http_multi_handle(void)
{
	if (http_multi == NULL)
	{
		http_multi = curl_multi_init();
		if (http_multi == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("could not create a libcurl multi handle")));
		curl_multi_setopt(http_multi, CURLMOPT_SOCKETFUNCTION, http_socket_cb);
		curl_multi_setopt(http_multi, CURLMOPT_TIMERFUNCTION, http_timer_cb);
	}
	return http_multi;
}

/*
 * http_header_list: the request headers of req.  The x-api-key line holds
 * the secret: http_free_headers() wipes it.  Returns NULL when libcurl runs
 * out of memory.
 */
static struct curl_slist *
http_header_list(const LsmRequest *req)
{
	const LsmConfig *config = req->config;
	struct curl_slist *list = NULL;
	char		line[512];

	snprintf(line, sizeof(line), "x-request-id: %s", req->request_id);
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
	return list;
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
 * http_remaining_ms: milliseconds left until deadline (0: no deadline),
 * at least 1 while there is a deadline.
 */
static long
http_remaining_ms(TimestampTz deadline)
{
	long		ms;

	if (deadline == 0)
		return 0;
	/* round up: curl must not give up before the deadline itself */
	ms = (long) ((deadline - GetCurrentTimestamp() + 999) / 1000);
	return Max(ms, 1);
}

/*
 * http_configure: set every option of an easy handle for req.  Secure
 * defaults: http and https only, no redirects, verified TLS, no signals.
 */
static void
http_configure(CURL *easy, LsmRequest *req, TimestampTz deadline)
{
	const LsmConfig *config = req->config;

	curl_easy_setopt(easy, CURLOPT_URL, req->url);
	curl_easy_setopt(easy, CURLOPT_PRIVATE, req);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(easy, CURLOPT_PATH_AS_IS, 1L);
	curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long) CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(easy, CURLOPT_USERAGENT,
					 "lancelsm/" LANCELSM_VERSION " (PostgreSQL " PG_VERSION ")");
	curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, req->curl_error);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, http_write_cb);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, req);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, req->headers);
	curl_easy_setopt(easy, CURLOPT_POST, 1L);
	curl_easy_setopt(easy, CURLOPT_POSTFIELDS, req->body ? req->body : "");
	curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE,
					 (long) (req->body ? strlen(req->body) : 0));
	curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE,
					 (curl_off_t) lsm_max_response_size_kb * 1024);
	curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, http_remaining_ms(deadline));
	if (config->connect_timeout_ms > 0)
		curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
						 config->connect_timeout_ms);
	if (config->ssl_ca_file)
		curl_easy_setopt(easy, CURLOPT_CAINFO, config->ssl_ca_file);
	if (config->ssl_cert_file)
		curl_easy_setopt(easy, CURLOPT_SSLCERT, config->ssl_cert_file);
	if (config->ssl_key_file)
		curl_easy_setopt(easy, CURLOPT_SSLKEY, config->ssl_key_file);
}

/*
 * http_track: remember req as in flight.
 */
static void
http_track(LsmRequest *req)
{
	if (http_ninflight == http_inflight_cap)
	{
		int			newcap = Max(16, http_inflight_cap * 2);

		if (http_inflight == NULL)
			http_inflight = MemoryContextAlloc(TopMemoryContext,
											   newcap * sizeof(LsmRequest *));
		else
			http_inflight = repalloc(http_inflight,
									 newcap * sizeof(LsmRequest *));
		http_inflight_cap = newcap;
	}
	http_inflight[http_ninflight++] = req;
}

/*
 * http_untrack_and_free: take req off the multi handle and free its curl
 * objects.  Its connection goes back to the multi handle's cache when the
 * exchange completed cleanly; libcurl closes it otherwise.
 */
static void
http_untrack_and_free(LsmRequest *req)
{
	for (int i = 0; i < http_ninflight; i++)
	{
		if (http_inflight[i] == req)
		{
			http_inflight[i] = http_inflight[--http_ninflight];
			break;
		}
	}
	if (req->easy)
	{
		curl_multi_remove_handle(http_multi, req->easy);
		curl_easy_cleanup(req->easy);
		req->easy = NULL;
	}
	if (req->headers)
	{
		http_free_headers(req->headers);
		req->headers = NULL;
	}
}

/*
 * lsm_http_start: put a prepared request in flight.  The transfer gives up
 * by itself at deadline (0: none) as a backstop to statement_timeout, which
 * is not armed in every context (pg_cron's background workers).
 */
void
lsm_http_start(LsmRequest *req, TimestampTz deadline)
{
	CURLM	   *multi = http_multi_handle();
	CURL	   *easy;

	Assert(req->easy == NULL && req->transport == LSM_TRANSPORT_PENDING);
	req->headers = http_header_list(req);
	easy = curl_easy_init();
	if (req->headers == NULL || easy == NULL)
	{
		if (easy)
			curl_easy_cleanup(easy);
		if (req->headers)
			http_free_headers(req->headers);
		req->headers = NULL;
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Could not create a libcurl request.")));
	}
	req->easy = easy;
	http_track(req);
	http_configure(easy, req, deadline);
	if (curl_multi_add_handle(multi, easy) != CURLM_OK)
	{
		http_untrack_and_free(req);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not start a libcurl request")));
	}
}

/*
 * http_classify: turn a finished transfer's CURLcode into req->transport.
 */
static void
http_classify(LsmRequest *req, CURLcode code, TimestampTz deadline)
{
	long		connect_code = 0;

	curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE, &req->status);
	curl_easy_getinfo(req->easy, CURLINFO_HTTP_CONNECTCODE, &connect_code);
	if (req->transport == LSM_TRANSPORT_TOO_LARGE ||
		code == CURLE_FILESIZE_EXCEEDED)
		req->transport = LSM_TRANSPORT_TOO_LARGE;
	else if (code == CURLE_OK)
		req->transport = LSM_TRANSPORT_OK;
	else if (code == CURLE_OPERATION_TIMEDOUT && deadline != 0 &&
			 GetCurrentTimestamp() >=
			 TimestampTzPlusMilliseconds(deadline, -HTTP_DEADLINE_GRACE_MS))
		/* curl's clock is not ours: a timeout this close is the deadline */
		req->transport = LSM_TRANSPORT_TIMEOUT;
	else if (code == CURLE_COULDNT_RESOLVE_HOST ||
			 code == CURLE_COULDNT_CONNECT ||
			 code == CURLE_SSL_CONNECT_ERROR ||
			 code == CURLE_PEER_FAILED_VERIFICATION ||
			 code == CURLE_SSL_CACERT_BADFILE ||
			 code == CURLE_SSL_CERTPROBLEM ||
			 code == CURLE_SSL_ISSUER_ERROR ||
			 code == CURLE_SSL_CIPHER ||
			 code == CURLE_UNSUPPORTED_PROTOCOL ||
			 code == CURLE_URL_MALFORMAT ||
			 (code == CURLE_OPERATION_TIMEDOUT && req->status == 0))
		req->transport = LSM_TRANSPORT_CONNECT;
	else
		req->transport = LSM_TRANSPORT_FAILED;
	if (req->curl_error[0] == '\0' && code != CURLE_OK)
		strlcpy(req->curl_error, curl_easy_strerror(code), LSM_CURL_ERROR_LEN);
	if (req->transport != LSM_TRANSPORT_OK)
		req->status = 0;
}

/*
 * http_take_completed: the next request curl has finished, fully
 * classified and off the multi handle, or NULL.
 */
static LsmRequest *
http_take_completed(TimestampTz deadline)
{
	CURLMsg    *msg;
	int			pending;

	while ((msg = curl_multi_info_read(http_multi, &pending)) != NULL)
	{
		LsmRequest *req = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **) &req);
		http_classify(req, msg->data.result, deadline);
		http_untrack_and_free(req);
		return req;
	}
	return NULL;
}

/*
 * http_deadline_passed: the statement's deadline has passed.  Let
 * PostgreSQL raise its own timeout error if its timer fired; where no timer
 * is armed (a background worker), raise the same error ourselves.
 */
static void
http_deadline_passed(void)
{
	CHECK_FOR_INTERRUPTS();
	ereport(ERROR,
			(errcode(ERRCODE_QUERY_CANCELED),
			 errmsg("canceling statement due to statement timeout")));
}

/*
 * http_timeout_ms: how long the next wait may last: until curl's timer,
 * wake_at or deadline, whichever is first (-1: forever).
 */
static long
http_timeout_ms(TimestampTz now, TimestampTz wake_at, TimestampTz deadline)
{
	TimestampTz until = -1;
	TimestampTz candidates[3] = {http_timer_at, wake_at ? wake_at : -1,
	deadline ? deadline : -1};

	for (int i = 0; i < 3; i++)
		if (candidates[i] >= 0 && (until < 0 || candidates[i] < until))
			until = candidates[i];
	if (until < 0)
		return -1;
	if (until <= now)
		return 0;
	/* round up so that we never wake just before the moment */
	return (long) ((until - now + 999) / 1000);
}

/*
 * http_wait_sockets: one wait on the latch, postmaster death and curl's
 * sockets, for at most timeout_ms.  Fills fired[] with curl's CSELECT
 * bitmasks per socket and returns how many sockets fired; *latch_set tells
 * whether the latch woke us.  The WaitEventSet (an epoll descriptor) is
 * freed on every path.
 */
static int
http_wait_sockets(long timeout_ms, curl_socket_t *fds, int *masks,
				  bool *latch_set)
{
	WaitEventSet *volatile set = NULL;
	WaitEvent  *events;
	int			nevents = http_nsockets + 2;
	int			nfired = 0;
	int			n;

	events = palloc(nevents * sizeof(WaitEvent));
	*latch_set = false;
	PG_TRY();
	{
		set = CreateWaitEventSet(CurrentMemoryContext, nevents);
		AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
		AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
		for (int i = 0; i < http_nsockets; i++)
		{
			uint32		ev = 0;

			if (http_sockets[i].what & CURL_POLL_IN)
				ev |= WL_SOCKET_READABLE;
			if (http_sockets[i].what & CURL_POLL_OUT)
				ev |= WL_SOCKET_WRITEABLE;
			if (ev)
				AddWaitEventToSet(set, ev, http_sockets[i].fd, NULL, NULL);
		}
		n = WaitEventSetWait(set, timeout_ms, events, nevents,
							 PG_WAIT_EXTENSION);
	}
	PG_FINALLY();
	{
		if (set)
			FreeWaitEventSet(set);
	}
	PG_END_TRY();

	for (int i = 0; i < n; i++)
	{
		if (events[i].events & WL_LATCH_SET)
			*latch_set = true;
		else if (events[i].events & (WL_SOCKET_READABLE | WL_SOCKET_WRITEABLE))
		{
			fds[nfired] = events[i].fd;
			masks[nfired] =
				((events[i].events & WL_SOCKET_READABLE) ? CURL_CSELECT_IN : 0) |
				((events[i].events & WL_SOCKET_WRITEABLE) ? CURL_CSELECT_OUT : 0);
			nfired++;
		}
	}
	pfree(events);
	return nfired;
}

/*
 * http_step: wait once, then let curl act on what happened.
 */
static void
http_step(TimestampTz wake_at, TimestampTz deadline)
{
	int			nsock = http_nsockets;
	curl_socket_t *fds = palloc((nsock + 1) * sizeof(curl_socket_t));
	int		   *masks = palloc((nsock + 1) * sizeof(int));
	bool		latch_set;
	int			nfired;
	int			running;
	TimestampTz now = GetCurrentTimestamp();

	nfired = http_wait_sockets(http_timeout_ms(now, wake_at, deadline),
							   fds, masks, &latch_set);
	if (latch_set)
		ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();

	for (int i = 0; i < nfired; i++)
		curl_multi_socket_action(http_multi, fds[i], masks[i], &running);
	if (http_timer_at >= 0 && GetCurrentTimestamp() >= http_timer_at)
	{
		http_timer_at = -1;
		curl_multi_socket_action(http_multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
	pfree(fds);
	pfree(masks);
}

/*
 * lsm_http_wait: drive every request in flight until one finishes (return
 * it, off the multi handle, outcome filled in) or until wake_at passes
 * (return NULL; 0: no wake-up).  Raises PostgreSQL's own error on query
 * cancel, statement_timeout or when deadline (0: none) passes; requests
 * then stay in flight and the caller must call lsm_http_abort_all().
 */
LsmRequest *
lsm_http_wait(TimestampTz wake_at, TimestampTz deadline)
{
	TimestampTz grace = deadline ?
		TimestampTzPlusMilliseconds(deadline, HTTP_DEADLINE_GRACE_MS) : 0;

	for (;;)
	{
		LsmRequest *done;
		TimestampTz now;

		if (http_multi && (done = http_take_completed(deadline)) != NULL)
		{
			if (done->transport == LSM_TRANSPORT_TIMEOUT)
				http_deadline_passed();
			return done;
		}
		now = GetCurrentTimestamp();
		if (grace != 0 && now >= grace)
			http_deadline_passed();
		if (wake_at != 0 && now >= wake_at)
			return NULL;
		if (http_ninflight == 0 && wake_at == 0)
			return NULL;
		http_multi_handle();
		http_step(wake_at, grace);
	}
}

/*
 * lsm_http_release: free what a request still holds.  Safe on a request
 * that is in flight (it is aborted), finished or never started.
 */
void
lsm_http_release(LsmRequest *req)
{
	http_untrack_and_free(req);
	if (req->response)
		pfree(req->response);
	req->response = NULL;
	req->response_len = 0;
	req->response_cap = 0;
}

/*
 * lsm_http_abort_all: abort every request in flight.  Called from the
 * PG_CATCH of whoever started them, before memory is reset, so that no
 * easy handle, header list (with its API key) or half-read connection
 * outlives an error.
 */
void
lsm_http_abort_all(void)
{
	while (http_ninflight > 0)
		http_untrack_and_free(http_inflight[http_ninflight - 1]);
	http_timer_at = -1;
}
