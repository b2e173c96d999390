/*-------------------------------------------------------------------------
 *
 * net.h
 *		The face of src/net/, the only code that uses libcurl: the
 *		connection configuration, one HTTP exchange and its outcome, the
 *		bearer token file and a request's URL.
 *
 * The other headers of src/net/ are private to it.  The request itself
 * (its URL, header list and libcurl handles) is private to src/net/http.c;
 * its callers see the outcome only, through lsm_http_outcome().  A struct
 * of plain fields was chosen over one accessor per field because the
 * protocol layer (src/protocol/fault.c) reads nearly all of them together,
 * and copies the whole outcome to redact its body; an accessor per field
 * would be a wider API for the same reads.  This header does not bring
 * libcurl into the files that include it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCELSM_NET_H
#define LANCELSM_NET_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "utils/guc.h"

/* The HTTP version a server's requests use (option http_version). */
typedef enum LsmHttpVersion
{
	LSM_HTTP_DEFAULT,			/* HTTP/2 over TLS when offered (ALPN), else 1.1 */
	LSM_HTTP_1_1,				/* HTTP/1.1 only */
	LSM_HTTP_2					/* HTTP/2, over plain http:// too */
} LsmHttpVersion;

/*
 * Everything a request needs to reach one LanceDB server as one role.
 * Allocated in the caller's memory context by lsm_config_resolve().
 * api_key is NULL or "" when the mapping has none; callers must wipe it,
 * and proxy_password (lsm_config_wipe), when they are done with them.
 */
typedef struct LsmConfig
{
	Oid			serverid;
	Oid			umid;			/* user mapping used (InvalidOid: none) */
	char	   *server_name;
	char	   *base_url;		/* no trailing slash */
	char	   *database;
	bool		host_override;	/* send x-lancedb-database */
	char	   *id_delimiter;	/* "$" unless set */
	long		connect_timeout_ms; /* 0: libcurl's default */
	long		read_timeout_s; /* longest silence of the server; 0: none */
	int			read_consistency_interval_ms;	/* -1: unset (no
												 * x-lancedb-min-timestamp) */
	int			max_requests_in_flight; /* per call; 0: the most */
	LsmHttpVersion http_version;
	char	   *proxy;			/* http://host:port; NULL: no proxy at all */
	char	   *proxy_user;		/* the mapping's; NULL: none */
	char	   *proxy_password; /* secret: also in secrets[] */
	char	   *ssl_ca_file;	/* NULL when unset */
	char	   *ssl_cert_file;
	char	   *ssl_key_file;
	char	   *api_key;
	char	   *database_prefix;	/* x-lancedb-database-prefix; NULL: none */
	char	   *user_id;		/* x-lancedb-user-id; NULL: none */
	char	   *bearer_token_file;	/* NULL: no authorization header */
	int			nheaders;		/* extra_headers of server and mapping */
	char	  **header_lines;	/* "name: value"; the mapping's are secret */
	int			nsecrets;		/* values of the mapping's extra_headers */
	char	  **secrets;		/* wiped by lsm_config_wipe */
} LsmConfig;

/*
 * The most requests one call keeps in flight on one server as one role
 * (src/task/driver.c), and the highest value of the server option
 * max_requests_in_flight, which lowers it.
 */
#define LSM_MAX_REQUESTS_IN_FLIGHT 64

#define LSM_REQUEST_ID_LEN 36
#define LSM_CURL_ERROR_LEN 256	/* CURL_ERROR_SIZE */

/*
 * Most bytes of an error answer's body kept (a status outside 2xx); the
 * rest is read and dropped.  An error body says what went wrong in its
 * "code" and "error" members only, so nothing past this is worth the
 * memory of parsing it (docs/configuration.md, "Limits").
 */
#define LSM_ERROR_BODY_MAX (64 * 1024)

/*
 * Most bytes of response header lines accepted per attempt, interim and
 * proxy answers included, whatever libcurl's own limits are
 * (docs/configuration.md, "Limits").
 */
#define LSM_HEADERS_MAX (256 * 1024)

/* The LSM routes (docs/protocol.md, "Maintenance routes"). */
typedef enum LsmRoute
{
	LSM_ROUTE_FLUSH,
	LSM_ROUTE_COMPACT,
	LSM_ROUTE_STATS,
	/* the write spec routes (docs/reference.md, "The LSM write spec") */
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
	LSM_TRANSPORT_HEADER_TOO_LARGE,	/* the header passed libcurl's limit */
	LSM_TRANSPORT_NO_DESCRIPTOR,	/* no file descriptor left for a socket */
	LSM_TRANSPORT_DENIED,		/* lancelsm.allowed_endpoints refused it */
	LSM_TRANSPORT_HEADERS_TOO_LARGE,	/* the header lines passed LSM_HEADERS_MAX */
	LSM_TRANSPORT_REFUSED		/* refused unseen each time libcurl sent it */
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
	bool		sent;			/* the request went out: its id may be in
								 * the server's logs */
	char		curl_error[LSM_CURL_ERROR_LEN];
	char	   *response;		/* NUL-terminated; response_len bytes */
	size_t		response_len;
	size_t		body_len;		/* bytes of body the server sent: more than
								 * response_len when an error body was cut
								 * at LSM_ERROR_BODY_MAX */
	const char *bearer_token;	/* the bearer token this attempt was sent
								 * with, NULL if none; wiped at its end */
	uint64		min_read_version;	/* the x-lancedb-min-read-version it was
									 * sent with; 0: none */
	uint64		version;		/* the x-lancedb-version of the final
								 * answer; 0: none, 0 or not a number */
} LsmOutcome;

/* in http.c */
/* One HTTP exchange; its fields are private to http.c. */
typedef struct LsmRequest LsmRequest;

extern LsmRequest *lsm_http_prepare(LsmRequest *req, const LsmConfig *config,
									LsmRoute route, const char *table_name,
									const char *body, void *owner,
									const char *request_id);
extern void lsm_http_set_freshness(LsmRequest *req, uint64 min_read_version,
								   TimestampTz min_timestamp);
extern void lsm_http_start(LsmRequest *req, TimestampTz deadline);
extern const LsmOutcome *lsm_http_outcome(const LsmRequest *req);
extern void lsm_http_release(LsmRequest *req);
extern void lsm_http_free(LsmRequest *req);
extern void *lsm_http_wait(TimestampTz wake_at, TimestampTz deadline,
						   bool backing_off);
extern void lsm_http_waits_over(void);
extern void lsm_http_abort_all(void);

/* in pool.c: libcurl's set-up, once per process (_PG_init) */
extern void lsm_net_init(void);

/*
 * in lookup.c: the shared memory of the cluster's bound on name lookups,
 * set up when preloaded (_PG_init)
 */
extern void lsm_lookup_shmem_init(void);

/*
 * in pool.c: the backend's connection pools, one per (server, user
 * mapping), as lancelsm_get_connections() lists them
 */
typedef struct LsmPoolInfo
{
	Oid			serverid;
	Oid			umid;			/* InvalidOid: no user mapping */
	int			connections;	/* sockets open, busy or idle */
	int			requests;		/* requests in flight */
	bool		valid;			/* false: options or allowed_endpoints
								 * changed; closed before its next request */
} LsmPoolInfo;

extern LsmPoolInfo *lsm_pool_list(int *n);
extern int	lsm_pool_disconnect(Oid serverid, Oid *busy_server);

/*
 * A function called when the pool of (serverid, umid) closes, so that
 * what a caller keeps per pool goes with it; it must neither allocate
 * nor raise.
 */
typedef void (*LsmPoolCloseHook) (Oid serverid, Oid umid);
extern void lsm_pool_on_close(LsmPoolCloseHook hook);

/* in token.c: the bearer token of a bearer_token_file, re-read when it changes */
extern const char *lsm_bearer_token(const char *path);
extern const char *lsm_bearer_token_try(const char *path, char **problem);
extern const char *lsm_bearer_token_peek(const char *path);

/* in url.c: a request's URL, the table identifier as one path segment */
extern char *lsm_url_encode_segment(const char *s);
extern char *lsm_url_build(const char *base_url, const char *id_delimiter,
						   const char *table, const char *route_path);

/* in endpoint.c: lancelsm.allowed_endpoints, parsed by its GUC hooks */
/* room for "host:port" of the longest host name */
#define LSM_ENDPOINT_TEXT_LEN 272

/* the verdict on the name of an endpoint */
typedef enum LsmEndpointVerdict
{
	LSM_ENDPOINT_ALLOWED,		/* unrestricted, or a host entry names it */
	LSM_ENDPOINT_CHECK_ADDRESS, /* allowed only at an address in a range */
	LSM_ENDPOINT_DENIED			/* no entry can allow it */
} LsmEndpointVerdict;

extern bool lsm_endpoints_check(char **newval, void **extra,
								GucSource source);
extern void lsm_endpoints_assign(const char *newval, void *extra);
extern LsmEndpointVerdict lsm_endpoint_url_verdict(const char *url,
												   bool name_only,
												   char *endpoint,
												   size_t endpointlen);

#endif							/* LANCELSM_NET_H */
