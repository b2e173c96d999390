/*-------------------------------------------------------------------------
 *
 * http.h
 *		The HTTP route client: building LSM route requests (src/http.c) and
 *		performing any number of them at once on per-server connection pools
 *		(src/pool.c), waiting on the session latch so that query cancel,
 *		statement_timeout, ProcSignalBarrier and postmaster death are noticed
 *		at once.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_HTTP_H
#define LANCELSM_HTTP_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "option.h"

#define LSM_REQUEST_ID_LEN 36
#define LSM_CURL_ERROR_LEN 256	/* CURL_ERROR_SIZE */

/* Our own deadline check waits this long for PostgreSQL's timer first. */
#define LSM_DEADLINE_GRACE_MS 10

/* The three LSM routes (docs/protocol.md, "Maintenance routes"). */
typedef enum LsmRoute
{
	LSM_ROUTE_FLUSH,
	LSM_ROUTE_COMPACT,
	LSM_ROUTE_STATS,
	/* the write spec routes (README.md, "The LSM write spec") */
	LSM_ROUTE_SET_SPEC,
	LSM_ROUTE_UNSET_SPEC,
	LSM_ROUTE_GET_SPEC
} LsmRoute;

/* How a request ended. */
typedef enum LsmTransport
{
	LSM_TRANSPORT_PENDING,		/* not finished yet */
	LSM_TRANSPORT_OK,			/* a complete HTTP answer was read */
	LSM_TRANSPORT_CONNECT,		/* never reached the server: DNS, connect, TLS */
	LSM_TRANSPORT_FAILED,		/* reached it, then the exchange broke */
	LSM_TRANSPORT_PROTOCOL,		/* the answer is not valid HTTP */
	LSM_TRANSPORT_TOO_LARGE,	/* the answer passed lancelsm.max_response_size */
	LSM_TRANSPORT_TIMEOUT,		/* the statement's deadline passed */
	LSM_TRANSPORT_READ_TIMEOUT, /* the server was silent for read_timeout */
	LSM_TRANSPORT_HEADER_TOO_LARGE	/* the header passed libcurl's limit */
} LsmTransport;

/*
 * One HTTP exchange.  Fill it with lsm_http_prepare(), run it with
 * lsm_http_start() and lsm_http_wait(), read the outcome fields, then
 * release it with lsm_http_release().  A request may be prepared again for
 * a new attempt after it is released: every attempt gets a fresh id.
 */
typedef struct LsmRequest
{
	/* what to send */
	const LsmConfig *config;
	LsmRoute	route;
	const char *table_name;
	const char *body;			/* NULL: no body */
	void	   *owner;			/* caller's cookie, untouched here */

	/* outcome */
	char		request_id[LSM_REQUEST_ID_LEN + 1];
	LsmTransport transport;
	long		status;			/* HTTP status; 0 without an answer */
	char		curl_error[LSM_CURL_ERROR_LEN];
	char	   *response;		/* NUL-terminated; response_len bytes */
	size_t		response_len;

	/* private to http.c */
	size_t		response_cap;
	bool		header_done;	/* the header's closing blank line came */
	void	   *easy;			/* CURL * while in flight */
	void	   *headers;		/* struct curl_slist * while in flight */
	void	   *pool;			/* HttpPool * while in flight (src/pool.c) */
	char	   *url;
	MemoryContext cxt;
} LsmRequest;

extern const char *lsm_route_path(LsmRoute route);
extern void lsm_http_prepare(LsmRequest *req, const LsmConfig *config,
							 LsmRoute route, const char *table_name,
							 const char *body);
extern void lsm_http_start(LsmRequest *req, TimestampTz deadline);
extern void lsm_http_release(LsmRequest *req);
extern void lsm_http_finished(LsmRequest *req, int curl_code,
							  TimestampTz deadline);

/* src/pool.c: waiting, connection pools */
extern LsmRequest *lsm_http_wait(TimestampTz wake_at, TimestampTz deadline);
extern void lsm_http_abort_all(void);
extern char *lsm_http_encode_table(const char *table_name);

#endif							/* LANCELSM_HTTP_H */
