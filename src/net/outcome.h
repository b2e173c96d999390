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

#include "functions/option.h"

#define LSM_REQUEST_ID_LEN 36
#define LSM_CURL_ERROR_LEN 256	/* CURL_ERROR_SIZE */

/*
 * Most bytes of an error answer's body kept (a status outside 2xx); the
 * rest is read and dropped.  An error body says what went wrong in its
 * "code" and "error" members only, so nothing past this is worth the
 * memory of parsing it (README.md, "Limits").
 */
#define LSM_ERROR_BODY_MAX (64 * 1024)

/*
 * Most bytes of response header lines accepted per attempt, interim and
 * proxy answers included, whatever libcurl's own limits are (README.md,
 * "Limits").
 */
#define LSM_HEADERS_MAX (256 * 1024)

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
	LSM_TRANSPORT_HEADER_TOO_LARGE, /* the header passed libcurl's limit */
	LSM_TRANSPORT_HEADERS_TOO_LARGE /* the header lines passed LSM_HEADERS_MAX */
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
	size_t		body_len;		/* bytes of body the server sent: more than
								 * response_len when an error body was cut
								 * at LSM_ERROR_BODY_MAX */
	const char *bearer_token;	/* the bearer token this attempt was sent
								 * with, NULL if none; wiped at its end */
} LsmOutcome;

#endif							/* LANCELSM_OUTCOME_H */
