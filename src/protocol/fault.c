/*-------------------------------------------------------------------------
 *
 * fault.c
 *		The protocol's fault table: what each answer means, and the error
 *		lancelsm reports for it.
 *
 * lsm_fault_verdict() decides, from the transport outcome, the HTTP status
 * and (for 503) the error body's code, whether a request succeeded, should
 * be retried, should make the checkpoint re-issue from flush, or failed.
 * lsm_fault_from_request() turns a failed request into an LsmFailure: one
 * SQLSTATE per failure class, an errmsg saying what failed, and an errdetail
 * with the HTTP status, the server's code and message and the x-request-id.
 * lsm_fault_new() builds every LsmFailure: each errmsg is one fixed,
 * translatable format per LsmFaultMessage (fault_messages).
 * lsm_fault_redact_outcome() masks every piece of every secret a request
 * was sent with (the matcher is redact.c): no failure carries one.  What
 * the caller passed (the table name) is never masked, nor a piece of it
 * that the server echoes: the caller knows it, and a mask on it would
 * tell the caller which of its bytes a secret holds.
 *
 * Protocol: docs/protocol.md, "Errors".
 * The SQLSTATEs are listed in docs/troubleshooting.md, "Errors".
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "protocol/protocol.h"
#include "settings.h"
#include "protocol/lsm_json.h"
#include "protocol/redact.h"
#include "net/net.h"
#include "utils/elog.h"
#include "wire_text.h"

/* The error-body code a draining node puts on its 503 answers. */
#define LSM_CODE_DRAINING 19

/* Longest piece of a non-JSON body quoted in a detail. */
#define FAULT_BODY_SNIPPET 120

/*
 * The errmsg of each LsmFaultMessage: its format, written here only and
 * marked for translation, and how many strings it takes (at most
 * LSM_FAULT_MAX_ARGS).  lsm_fault_raise hands the format to errmsg, which
 * translates it; lsm_fault_new formats the translated text for result
 * rows.
 */
static const struct
{
	const char *format;
	int			nargs;
}			fault_messages[] = {
	[LSM_FAULT_FLUSH] = {gettext_noop("could not flush LanceDB table \"%s\""), 1},
	[LSM_FAULT_COMPACT] = {gettext_noop("could not compact LanceDB table \"%s\""), 1},
	[LSM_FAULT_READ_STATS] = {gettext_noop("could not read the LSM statistics of LanceDB table \"%s\""), 1},
	[LSM_FAULT_CHECKPOINT] = {gettext_noop("could not checkpoint LanceDB table \"%s\""), 1},
	[LSM_FAULT_SET_SPEC] = {gettext_noop("could not install the LSM write spec of LanceDB table \"%s\""), 1},
	[LSM_FAULT_UNSET_SPEC] = {gettext_noop("could not remove the LSM write spec of LanceDB table \"%s\""), 1},
	[LSM_FAULT_GET_SPEC] = {gettext_noop("could not read the LSM write spec of LanceDB table \"%s\""), 1},
	[LSM_FAULT_EMPTY_TABLE_NAME] = {gettext_noop("LanceDB table name must not be empty"), 0},
	[LSM_FAULT_LONG_TABLE_NAME] = {gettext_noop("LanceDB table name is too long"), 0},
	[LSM_FAULT_NO_SERVER] = {gettext_noop("server \"%s\" does not exist"), 1},
	[LSM_FAULT_OTHER_WRAPPER] = {gettext_noop("server \"%s\" is not a lancelsm server"), 1},
	[LSM_FAULT_NO_USAGE] = {gettext_noop("permission denied for foreign server %s"), 1},
	[LSM_FAULT_NO_USER_MAPPING] = {gettext_noop("user mapping not found for user \"%s\", server \"%s\""), 2},
	[LSM_FAULT_HEADER_OVERRIDE] = {gettext_noop("user mapping for server \"%s\" cannot replace the server's header \"%s\""), 2},
};

StaticAssertDecl(lengthof(fault_messages) == LSM_FAULT_HEADER_OVERRIDE + 1,
				 "every LsmFaultMessage has its errmsg");

/*
 * fault_decode_error: decode the error body of an answer into *body;
 * false when there is none, or when the body was longer than the
 * LSM_ERROR_BODY_MAX bytes kept of it (a JSON document cut short is no
 * JSON; its beginning is never guessed at).
 */
static bool
fault_decode_error(const LsmOutcome *req, LsmErrorBody *body)
{
	memset(body, 0, sizeof(*body));
	if (req->body_len > req->response_len)
		return false;
	return lsm_json_decode_error(req->response, req->response_len, body);
}

/*
 * fault_is_draining: whether a 503 answer carries the draining code.
 */
static bool
fault_is_draining(const LsmOutcome *req)
{
	LsmErrorBody body;

	if (req->status != 503 || !fault_decode_error(req, &body))
		return false;
	return body.has_code && body.code == LSM_CODE_DRAINING;
}

/*
 * fault_spec_retried: whether status, answered to a write spec route, is
 * one the SDK's transport retries there (409, 429, 500, 502, 503, 504,
 * rust/lancedb/src/remote/client.rs RetryConfig) that lancelsm retries
 * too beyond 429 and 503: 409 on all three, the 5xx on get only.  set and
 * unset may have been applied before a 5xx, and their second attempt
 * would then be refused for the change the first one made.
 */
static bool
fault_spec_retried(LsmRoute route, long status)
{
	switch (route)
	{
		case LSM_ROUTE_GET_SPEC:
			return status == 409 || status == 500 || status == 502 ||
				status == 504;
		case LSM_ROUTE_SET_SPEC:
		case LSM_ROUTE_UNSET_SPEC:
			return status == 409;
		default:
			return false;
	}
}

/*
 * lsm_fault_verdict: what to do with a finished request, per the fault
 * table.  Any 2xx is a success on every route, whatever its body, as in the
 * SDKs (rust/lancedb/src/remote/client.rs checks only that the status is a
 * success); a route that reads an answer decodes the body afterwards.  429
 * and every 503, a draining node's (code 19) included, are retried: the
 * SDKs retry them alike (docs/protocol.md, "Errors").  A request the
 * server refused unseen each time libcurl sent it is sent again: the
 * SDK's HTTP client (hyper) sends such a request again for as long as it
 * is refused unseen, where libcurl stops after 5.
 */
LsmVerdict
lsm_fault_verdict(const LsmOutcome *req)
{
	/* the server never saw it (an HTTP/2 stream refused, ...): send again */
	if (req->transport == LSM_TRANSPORT_REFUSED)
		return LSM_VERDICT_RESEND;
	if (req->transport != LSM_TRANSPORT_OK)
		return LSM_VERDICT_FAIL;
	if (req->status >= 200 && req->status < 300)
		return LSM_VERDICT_OK;
	if (req->status == 429 || req->status == 503)
		return LSM_VERDICT_RETRY;
	if (req->status == 421)
		return LSM_VERDICT_REISSUE;
	if (req->status == 412 && req->min_read_version != 0 &&
		(req->route == LSM_ROUTE_STATS || req->route == LSM_ROUTE_GET_SPEC))
		return LSM_VERDICT_FORGET_VERSION;
	if (fault_spec_retried(req->route, req->status))
		return LSM_VERDICT_RETRY;
	return LSM_VERDICT_FAIL;
}

/*
 * fault_sqlstate: the SQLSTATE of a failure class (docs/troubleshooting.md, "Errors").
 */
static int
fault_sqlstate(const LsmOutcome *req)
{
	switch (req->transport)
	{
		case LSM_TRANSPORT_CONNECT:
			return ERRCODE_FDW_UNABLE_TO_ESTABLISH_CONNECTION;
		case LSM_TRANSPORT_FAILED:
		case LSM_TRANSPORT_REFUSED:
		case LSM_TRANSPORT_READ_TIMEOUT:
		case LSM_TRANSPORT_HEADER_TOO_LARGE:
		case LSM_TRANSPORT_HEADERS_TOO_LARGE:
			return ERRCODE_CONNECTION_FAILURE;
		case LSM_TRANSPORT_PROTOCOL:
			return ERRCODE_PROTOCOL_VIOLATION;
		case LSM_TRANSPORT_TOO_LARGE:
			return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
		case LSM_TRANSPORT_TIMEOUT:
			return ERRCODE_QUERY_CANCELED;
		case LSM_TRANSPORT_NO_DESCRIPTOR:
			return ERRCODE_CONFIGURATION_LIMIT_EXCEEDED;
		case LSM_TRANSPORT_DENIED:
			/* a superuser's policy withholds it, as a missing privilege */
			return ERRCODE_INSUFFICIENT_PRIVILEGE;
		default:
			break;
	}
	switch (req->status)
	{
		case 400:
			return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
		case 401:
			return ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
		case 403:
			return ERRCODE_INSUFFICIENT_PRIVILEGE;
		case 404:
			return ERRCODE_FDW_TABLE_NOT_FOUND;
		case 409:
			return ERRCODE_OBJECT_IN_USE;
		case 421:
			return ERRCODE_LOCK_NOT_AVAILABLE;
		case 429:
			return ERRCODE_INSUFFICIENT_RESOURCES;
		case 503:
			return fault_is_draining(req) ?
				ERRCODE_CANNOT_CONNECT_NOW : ERRCODE_FDW_ERROR;
	}
	if (req->status >= 500)
		return ERRCODE_FDW_ERROR;
	return ERRCODE_PROTOCOL_VIOLATION;
}

/*
 * fault_hint_400: what a 400 on a route usually means.
 */
static char *
fault_hint_400(LsmRoute route)
{
	if (route == LSM_ROUTE_SET_SPEC)
		return pstrdup("Every write spec needs an unenforced primary key on the table, bucket sharding needs it to be the bucketed column, and an installed spec must be removed with lancelsm_unset_write_spec() first.");
	if (route == LSM_ROUTE_UNSET_SPEC)
		return pstrdup("The table may have no LSM write spec; lancelsm_write_spec() returns no rows for such a table.");
	return pstrdup("The table may have no LSM write path; lancelsm_stats() returns no rows for such a table.");
}

/*
 * fault_hint: the fix, where it is known; NULL otherwise.
 */
static char *
fault_hint(const LsmOutcome *req)
{
	if (req->transport == LSM_TRANSPORT_CONNECT)
		return pstrdup("Check the server's host_override, database and region options, its TLS options, and that the host is reachable.");
	if (req->transport == LSM_TRANSPORT_TOO_LARGE)
		return pstrdup("Raise lancelsm.max_response_size if the answer is legitimately this large.");
	if (req->transport == LSM_TRANSPORT_READ_TIMEOUT)
		return pstrdup("Raise the server's read_timeout option if the server legitimately takes longer to answer.");
	if (req->transport == LSM_TRANSPORT_NO_DESCRIPTOR)
		return pstrdup("Raise max_files_per_process, or use fewer servers and user mappings in one session.");
	if (req->transport == LSM_TRANSPORT_DENIED)
		return pstrdup("A superuser can allow the endpoint in lancelsm.allowed_endpoints.");
	if (req->transport != LSM_TRANSPORT_OK)
		return NULL;
	switch (req->status)
	{
		case 400:
			return fault_hint_400(req->route);
		case 401:
			return pstrdup("Check the api_key option of the user mapping for this server.");
		case 403:
			return pstrdup("The API key has no access to this table.");
		case 404:
			return pstrdup("Check the table name: namespace levels are joined by the server's id_delimiter.");
		case 429:
			return pstrdup("The table's compaction latch or the server's compactor pool is busy; try again later, or raise lancelsm.retry_budget.");
		case 503:
			return fault_is_draining(req) ?
				pstrdup("The server node was draining (a rolling restart); try again once it has restarted, or raise lancelsm.retry_budget to wait longer.") : NULL;
	}
	if (req->status >= 300 && req->status < 400)
		return pstrdup("lancelsm does not follow redirects; point host_override at the final address.");
	return NULL;
}

/*
 * fault_snippet: a printable excerpt of a body that is not a JSON error:
 * control characters and non-ASCII bytes become '?', cut at
 * FAULT_BODY_SNIPPET bytes.
 */
static char *
fault_snippet(const char *body, size_t len)
{
	size_t		n = Min(len, FAULT_BODY_SNIPPET);
	char	   *out = palloc(n + 4);

	for (size_t i = 0; i < n; i++)
	{
		unsigned char c = (unsigned char) body[i];

		out[i] = (c < 0x20 || c >= 0x7F) ? '?' : (char) c;
	}
	strcpy(out + n, len > n ? "..." : "");
	return out;
}

/*
 * fault_answer_text: the server's side of a detail: status, code and
 * message, or an excerpt of whatever the body was.
 */
static char *
fault_answer_text(const LsmOutcome *req)
{
	LsmErrorBody body;

	if (req->body_len > req->response_len)
		return psprintf("The server answered HTTP status %ld with a %zu-byte body, longer than the %d kB of an error body that are read; it was not decoded.",
						req->status, req->body_len, LSM_ERROR_BODY_MAX / 1024);
	if (fault_decode_error(req, &body) && body.message)
	{
		if (body.has_code)
			return psprintf("The server answered HTTP status %ld, code %lld: %s.",
							req->status, (long long) body.code, body.message);
		return psprintf("The server answered HTTP status %ld: %s.",
						req->status, body.message);
	}
	if (req->response_len == 0)
		return psprintf("The server answered HTTP status %ld with an empty body.",
						req->status);
	return psprintf("The server answered HTTP status %ld with a body that is not a JSON error: \"%s\".",
					req->status, fault_snippet(req->response, req->response_len));
}

/*
 * fault_transport_text: the client's side of a detail when no complete
 * answer was read.
 */
static char *
fault_transport_text(const LsmOutcome *req)
{
	switch (req->transport)
	{
		case LSM_TRANSPORT_CONNECT:
			return psprintf("Could not reach the server: %s.", req->curl_error);
		case LSM_TRANSPORT_TOO_LARGE:
			return psprintf("The answer is larger than lancelsm.max_response_size (%d kB).",
							lsm_max_response_size_kb);
		case LSM_TRANSPORT_TIMEOUT:
			return pstrdup("The statement's deadline passed.");
		case LSM_TRANSPORT_PROTOCOL:
			return psprintf("The server's answer is not valid HTTP: %s.",
							req->curl_error);
		case LSM_TRANSPORT_READ_TIMEOUT:
			return psprintf("The server sent no data for longer than its read_timeout (%ld s): %s.",
							req->config->read_timeout_s, req->curl_error);
		case LSM_TRANSPORT_HEADER_TOO_LARGE:
			return psprintf("The server's response header is larger than libcurl accepts (libcurl reports: %s).",
							req->curl_error);
		case LSM_TRANSPORT_NO_DESCRIPTOR:
			return pstrdup("The backend has no file descriptor left for another connection.");
		case LSM_TRANSPORT_DENIED:
			return psprintf("The endpoint %s is not allowed by lancelsm.allowed_endpoints.",
							req->curl_error);
		case LSM_TRANSPORT_HEADERS_TOO_LARGE:
			return psprintf("The server's response header lines are larger than %d kB in all.",
							LSM_HEADERS_MAX / 1024);
		case LSM_TRANSPORT_REFUSED:
			return psprintf("The server refused the request before acting on it each time it was sent: %s.",
							req->curl_error);
		default:
			return psprintf("The exchange with the server failed: %s.",
							req->curl_error);
	}
}

/*
 * lsm_fault_new: a failure with SQLSTATE sqlerrcode and the fixed errmsg
 * of what, filled with the strings that follow (as many as its format
 * takes, each copied; fault_messages).  message is that errmsg translated
 * and filled in now, for result rows.  detail and hint are taken over (may
 * be NULL).  Raises nothing.
 */
LsmFailure *
lsm_fault_new(int sqlerrcode, char *detail, char *hint,
			  LsmFaultMessage what,...)
{
	LsmFailure *failure = palloc0(sizeof(LsmFailure));
	va_list		args;

	Assert((unsigned int) what < lengthof(fault_messages));
	failure->sqlerrcode = sqlerrcode;
	failure->what = what;
	va_start(args, what);
	for (int i = 0; i < fault_messages[what].nargs; i++)
		failure->args[i] = pstrdup(va_arg(args, const char *));
	va_end(args);
	failure->message = psprintf(_(fault_messages[what].format),
								failure->args[0], failure->args[1]);
	failure->detail = detail;
	failure->hint = hint;
	return failure;
}

/*
 * lsm_fault_copy: a deep copy of failure in CurrentMemoryContext (NULL for
 * NULL), to outlive the memory the failure was built in.  Errors: 53200.
 */
LsmFailure *
lsm_fault_copy(const LsmFailure *failure)
{
	LsmFailure *copy;

	if (failure == NULL)
		return NULL;
	copy = palloc(sizeof(LsmFailure));
	*copy = *failure;
	for (int a = 0; a < LSM_FAULT_MAX_ARGS; a++)
		copy->args[a] = failure->args[a] ? pstrdup(failure->args[a]) : NULL;
	copy->message = failure->message ? pstrdup(failure->message) : NULL;
	copy->detail = failure->detail ? pstrdup(failure->detail) : NULL;
	copy->hint = failure->hint ? pstrdup(failure->hint) : NULL;
	return copy;
}

/*
 * fault_secrets: the secrets no failure may carry, into a palloc'd array
 * of *n entries: those of config (the API key, the user mapping's secret
 * values: extra headers, proxy password), the bearer token a request was
 * sent with (sent; NULL: none) and the one last read from config's file.
 * Entries may be NULL or short; callers skip those.
 */
static const char **
fault_secrets(const LsmConfig *config, const char *sent, int *n)
{
	const char **secrets;

	*n = 0;
	secrets = palloc0(((config ? config->nsecrets : 0) + 3) * sizeof(char *));
	secrets[(*n)++] = sent;
	if (config == NULL)
		return secrets;
	secrets[(*n)++] = config->api_key;
	for (int i = 0; i < config->nsecrets; i++)
		secrets[(*n)++] = config->secrets[i];
	secrets[(*n)++] = lsm_bearer_token_peek(config->bearer_token_file);
	return secrets;
}

/*
 * fault_redactor: the secrets of req (fault_secrets) prepared for
 * lsm_redact, less the pieces that occur in the nexempt texts of exempt
 * (NULL entries skipped): what the caller passed, which the server may
 * echo.  Exempt as well, being no secret: the request's x-request-id
 * (lancelsm's own random UUID, which a support ticket quotes whole), and
 * the server's base URL and database, options of the foreign server that
 * every role with USAGE on it reads, and that libcurl's and the server's
 * text names (a host name sharing 4 bytes with the key stays whole).
 * NULL for req NULL.  Free with lsm_redactor_free.
 */
static LsmRedactor *
fault_redactor(const LsmOutcome *req, const char *const *exempt,
			   int nexempt)
{
	int			n;
	int			nall = 0;
	const char **secrets;
	const char **all;
	LsmRedactor *redactor;

	if (req == NULL)
		return NULL;
	all = palloc((nexempt + 3) * sizeof(char *));
	for (int i = 0; i < nexempt; i++)
		all[nall++] = exempt[i];
	all[nall++] = req->request_id;
	all[nall++] = req->config ? req->config->base_url : NULL;
	all[nall++] = req->config ? req->config->database : NULL;
	secrets = fault_secrets(req->config, req->bearer_token, &n);
	redactor = lsm_redactor_new(secrets, n, all, nall);
	pfree(secrets);
	pfree(all);
	return redactor;
}

/*
 * fault_redact_body: the answer's body with every piece of every secret
 * of req masked (lsm_redact; binary-safe), and its length in *len; the
 * body itself when there is nothing to mask.  Excerpts and the server's
 * message are taken from this, so a secret straddling an excerpt's cut
 * never leaks half.  Only the LSM_ERROR_BODY_MAX bytes an error body is
 * cut at are ever read: a longer body (only an answer that is not an
 * error has one) is dropped: NULL, and *len is 0.
 */
static char *
fault_redact_body(const LsmOutcome *req, const LsmRedactor *redactor,
				  size_t *len)
{
	char	   *body;

	*len = 0;
	if (req->response == NULL || req->response_len > LSM_ERROR_BODY_MAX)
		return NULL;
	body = lsm_redact(redactor, req->response, req->response_len, len);
	if (body != NULL)
		return body;
	*len = req->response_len;
	return req->response;
}

/*
 * fault_redact_text: text (NUL-terminated; may be NULL) with every piece
 * of every secret of redactor masked (lsm_redact): text itself when it
 * holds none, else a new palloc'd copy, the old one wiped and freed.
 */
static char *
fault_redact_text(char *text, const LsmRedactor *redactor)
{
	size_t		len;
	char	   *redacted;

	if (text == NULL)
		return NULL;
	redacted = lsm_redact(redactor, text, strlen(text), &len);
	if (redacted == NULL)
		return text;
	explicit_bzero(text, strlen(text));
	pfree(text);
	return redacted;
}

/*
 * lsm_fault_redact_outcome: mask every piece of every secret a request
 * was sent with in a failure's detail (its hint is always lancelsm's own
 * fixed text, which holds no secret and is never masked): the API key,
 * the user mapping's secret values (extra header values, the proxy
 * password), the bearer token that attempt sent and the one read last
 * from the same file (the failure may stem from an earlier attempt).  A
 * piece is any LSM_REDACT_WINDOW-byte window of a secret, wherever it
 * appears: a server, a gateway or a decoder's excerpt may show the key
 * whole, masked to its first and last bytes, cut short or from its
 * middle.  A secret shorter than a window is masked where it appears
 * whole, innocent words included.  Each run of masked bytes reads
 * LSM_REDACT_MASK.
 *
 * The errmsg's arguments are what the caller passed (a table name), and
 * pieces of them are no secret to the caller wherever they appear: the
 * message and the arguments are left as they are, and a run of the
 * detail whose pieces all occur in an argument is not masked either (a
 * server's echo of the name reads as the name).  Masking them would make
 * the errors an oracle: a caller who cannot read the key would learn,
 * from whether the table name it chose came back masked, whether the key
 * holds its bytes.  The request id, base URL and database are kept by
 * the same rule (fault_redactor).  req NULL: nothing to do.
 */
void
lsm_fault_redact_outcome(LsmFailure *failure, const LsmOutcome *req)
{
	LsmRedactor *redactor;

	if (failure == NULL || req == NULL)
		return;
	redactor = fault_redactor(req, (const char *const *) failure->args,
							  LSM_FAULT_MAX_ARGS);
	failure->detail = fault_redact_text(failure->detail, redactor);
	lsm_redactor_free(redactor);
}

/*
 * lsm_fault_from_request: the failure a finished request stands for, as
 * itself (after retries too: its own status and message, not a summary),
 * with its x-request-id only when the request was sent.
 * what names the operation that failed (LSM_FAULT_FLUSH, ...; its errmsg
 * takes table_name, the caller's: pieces of secrets that occur in it are
 * not masked in the server's text, lsm_fault_redact_outcome); retries is how many times the request was retried
 * before this answer.  Raises nothing.
 */
LsmFailure *
lsm_fault_from_request(const LsmOutcome *req, LsmFaultMessage what,
					   const char *table_name, int retries)
{
	LsmOutcome	redacted = *req;
	char	   *text;
	char	   *detail;
	bool		lossless;

	if (req->transport == LSM_TRANSPORT_OK)
	{
		const char *exempt[] = {table_name};
		LsmRedactor *redactor = fault_redactor(req, exempt,
											   lengthof(exempt));

		/* redact the body before any excerpt can cut a key in two */
		redacted.response = fault_redact_body(req, redactor,
											  &redacted.response_len);
		if (req->body_len == req->response_len && redacted.response != NULL)
			redacted.body_len = redacted.response_len;	/* still whole */
		lsm_redactor_free(redactor);
		text = fault_answer_text(&redacted);
	}
	else
		text = fault_transport_text(req);
	/* the server's text is UTF-8; escaped where this database cannot hold it */
	text = lsm_text_from_wire_quiet(text, &lossless);
	/* an id no server saw would send the DBA looking for it in vain */
	if (!req->sent)
		detail = retries > 0 ?
			psprintf("%s Gave up after %d retries.", text, retries) :
			pstrdup(text);
	else if (retries > 0)
		detail = psprintf("%s Request ID: %s. Gave up after %d retries.",
						  text, req->request_id, retries);
	else
		detail = psprintf("%s Request ID: %s.", text, req->request_id);
	pfree(text);
	return lsm_fault_new(fault_sqlstate(req), detail, fault_hint(req), what,
						 table_name);
}

/*
 * lsm_fault_raise: raise a failure as an ERROR with its SQLSTATE
 * (failure->sqlerrcode).  The errmsg is its fixed, translatable format
 * filled with its arguments (the caller's, never masked); library and server text lives in
 * the detail, hence errdetail_internal; the hint as it is.  Does not
 * return.
 */
void
lsm_fault_raise(const LsmFailure *failure)
{
	ereport(ERROR,
			(errcode(failure->sqlerrcode),
			 errmsg(fault_messages[failure->what].format,
					failure->args[0], failure->args[1]),
			 failure->detail ? errdetail_internal("%s", failure->detail) : 0,
			 failure->hint ? errhint("%s", failure->hint) : 0));
	pg_unreachable();
}
