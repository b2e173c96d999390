/*-------------------------------------------------------------------------
 *
 * outcome.h
 *		What the HTTP transport tells the rest of lancelsm about one
 *		finished exchange: the routes, how an exchange ended, and the
 *		outcome itself.  Plain types only, no functions.
 *
 * The request itself (its URL, header list and libcurl handles) is private
 * to src/net/http.c; its callers see this outcome only, through
 * lsm_http_outcome().  A struct of plain fields was chosen over one
 * accessor per field because the protocol layer (src/protocol/fault.c) reads
 * nearly all of them together, and copies the whole outcome to redact its
 * body; an accessor per field would be a wider API for the same reads.
 * This header does not bring libcurl or the transport's functions into
 * the files that only interpret answers.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_OUTCOME_H
#define LANCELSM_OUTCOME_H

#include "postgres.h"

#include "net/config.h"

#define LSM_REQUEST_ID_LEN 36
#define LSM_CURL_ERROR_LEN 256	/* CURL_ERROR_SIZE */

/* The LSM routes (docs/protocol.md, "Maintenance routes"). */
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
 * The outcome of one attempt: what was sent (config, route) and how it
 * ended.  Filled by src/net/http.c only; valid until the request is prepared
 * again or released.
 */
typedef struct LsmOutcome
{
	const LsmConfig *config;
	LsmRoute	route;
	char		request_id[LSM_REQUEST_ID_LEN + 1];
	LsmTransport transport;
	long		status;			/* HTTP status; 0 without an answer */
	char		curl_error[LSM_CURL_ERROR_LEN];
	char	   *response;		/* NUL-terminated; response_len bytes */
	size_t		response_len;
} LsmOutcome;

#endif							/* LANCELSM_OUTCOME_H */
