/*-------------------------------------------------------------------------
 *
 * fuzz_error.c
 *		libFuzzer target for the error-body decoding of src/protocol/fault.c (and
 *		lsm_json_decode_error of src/protocol/lsm_json.c, which it calls): what
 *		lancelsm reports for a failed request.
 *
 * Each input is a request's outcome: route, transport, HTTP status,
 * retries and the operation, the API key, one extra header's secret value
 * and a bearer token (secrets), the table's name, libcurl's error text and
 * the answer's body.  The target builds the failure with
 * lsm_fault_from_request, removes the secrets as the task driver does
 * (lsm_fault_redact_outcome), raises it (lsm_fault_raise, caught by
 * harness_elog.c) and aborts when a promise is broken:
 *  - no piece of a secret is left in the detail (the hint is lancelsm's
 *    own fixed text, never masked): no 4-byte window of it, wherever it
 *    starts, and no whole secret shorter than that (src/protocol/redact.c),
 *    unless the piece occurs in the table name the caller passed (no
 *    secret to the caller) or in the request id (lancelsm's own, kept
 *    whole for support);
 *  - the errmsg's argument is the table name as passed, never masked;
 *  - the raised error carries the failure's SQLSTATE, errmsg, detail and
 *    hint unchanged;
 *  - lsm_fault_verdict answers one of its four verdicts.
 * Secrets are drawn from letters, digits, '-' and '_' (API keys and tokens
 * are), so "***" can never be part of one.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/protocol.h"
#include "harness_elog.h"
#include "harness_palloc.h"
#include "net/net.h"

#undef printf
#undef fprintf

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bearer token the failure must not carry (token.c reads a file). */
static char fuzz_token[64];

/* token.c's lsm_bearer_token_peek: the token last read, if any. */
const char *
lsm_bearer_token_peek(const char *path)
{
	return path != NULL ? fuzz_token : NULL;
}

/* A cursor over the fuzzer's input. */
typedef struct FuzzInput
{
	const uint8_t *data;
	size_t		size;
} FuzzInput;

/* The next byte of the input, or 0 once it is used up. */
static uint8_t
fuzz_byte(FuzzInput *in)
{
	uint8_t		b = 0;

	if (in->size > 0)
	{
		b = *in->data++;
		in->size--;
	}
	return b;
}

/*
 * fuzz_string: the next length-prefixed string of the input into buf (at
 * most max bytes); secret: drawn from the alphabet of API keys, else any
 * byte but NUL.
 */
static void
fuzz_string(FuzzInput *in, char *buf, size_t max, bool secret)
{
	static const char alphabet[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
	size_t		len = fuzz_byte(in) % (max + 1);
	size_t		i;

	for (i = 0; i < len && in->size > 0; i++)
	{
		uint8_t		b = fuzz_byte(in);

		buf[i] = secret ? alphabet[b % (sizeof(alphabet) - 1)] :
			(b == 0 ? '0' : (char) b);
	}
	buf[i] = '\0';
}

/*
 * Whether text holds a piece of secret: any 4-byte window of it, or the
 * whole secret when it is shorter (redact.c masks both), that does not
 * occur in exempt (the caller's table name).
 */
static bool
fuzz_holds_piece(const char *text, const char *secret, const char *exempt)
{
	size_t		slen = strlen(secret);
	size_t		w = slen < 4 ? slen : 4;

	for (size_t j = 0; text != NULL && w > 0 && j + w <= slen; j++)
		if (memmem(text, strlen(text), secret + j, w) != NULL &&
			memmem(exempt, strlen(exempt), secret + j, w) == NULL)
			return true;
	return false;
}

/* Abort when text holds a piece of secret not in exempt. */
static void
fuzz_check_secret(const char *text, const char *secret, const char *exempt)
{
	if (fuzz_holds_piece(text, secret, exempt))
	{
		fprintf(stderr, "a piece of secret \"%s\" left in \"%s\"\n",
				secret, text);
		abort();
	}
}

/*
 * Abort when a piece of a secret in neither table nor request_id is left in
 * failure's detail (the hint is fixed text, never masked), or when its
 * errmsg's argument is not table as passed.  The two are joined by a space,
 * which no secret holds, so no window spans them.
 */
static void
fuzz_check_failure(const LsmFailure *f, const char *const *secrets,
				   const char *table, const char *request_id)
{
	char		exempt[sizeof(((LsmOutcome *) 0)->request_id) + 300];

	snprintf(exempt, sizeof(exempt), "%s %s", table, request_id);
	for (int i = 0; secrets[i] != NULL; i++)
		fuzz_check_secret(f->detail, secrets[i], exempt);
	if (f->args[0] == NULL || strcmp(f->args[0], table) != 0)
		abort();
}

/* Raise f and abort unless the error carries exactly its texts. */
static void
fuzz_check_raise(const LsmFailure *f)
{
	sigjmp_buf	jb;

	harness_error_jump = &jb;
	if (sigsetjmp(jb, 0) == 0)
	{
		lsm_fault_raise(f);
		abort();				/* it must not return */
	}
	harness_error_jump = NULL;
	/* texts longer than the record's buffer are cut: compare the start */
	if (harness_error.sqlerrcode != f->sqlerrcode ||
		strncmp(harness_error.message, f->message, HARNESS_ERROR_TEXT - 1) != 0 ||
		strncmp(harness_error.detail, f->detail, HARNESS_ERROR_TEXT - 1) != 0 ||
		strncmp(harness_error.hint, f->hint ? f->hint : "",
				HARNESS_ERROR_TEXT - 1) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzInput	in = {data, size};
	LsmConfig	config;
	LsmOutcome	req;
	char		api_key[64];
	char		header_secret[64];
	char		table[300];
	char	   *secret_list[1];
	const char *secrets[4];
	LsmFailure *f;
	LsmVerdict	verdict;
	char	   *body;
	int			retries;
	LsmFaultMessage what;

	memset(&config, 0, sizeof(config));
	memset(&req, 0, sizeof(req));
	req.route = (LsmRoute) (fuzz_byte(&in) % (LSM_ROUTE_GET_SPEC + 1));
	req.transport = (LsmTransport) (fuzz_byte(&in) %
									(LSM_TRANSPORT_HEADERS_TOO_LARGE + 1));
	req.status = fuzz_byte(&in) % 2 ? 100 + fuzz_byte(&in) * 2 : fuzz_byte(&in) + 400;
	retries = fuzz_byte(&in) % 10;
	what = (LsmFaultMessage) (fuzz_byte(&in) % (LSM_FAULT_GET_SPEC + 1));
	fuzz_string(&in, api_key, 48, true);
	fuzz_string(&in, header_secret, 48, true);
	fuzz_string(&in, fuzz_token, 48, true);
	fuzz_string(&in, table, 255, false);
	fuzz_string(&in, req.curl_error, 64, false);
	strcpy(req.request_id, "00000000-0000-4000-8000-000000000000");
	/* an answer came to a request sent; else either, with or without id */
	req.sent = req.transport == LSM_TRANSPORT_OK || retries % 2 == 0;

	config.api_key = api_key;
	secret_list[0] = header_secret;
	config.nsecrets = 1;
	config.secrets = secret_list;
	config.bearer_token_file = fuzz_token[0] ? "token" : NULL;
	config.read_timeout_s = 300;
	req.config = &config;

	/* the rest is the body, NUL-terminated as http.c keeps it */
	body = malloc(in.size + 1);
	memcpy(body, in.data, in.size);
	body[in.size] = '\0';
	req.response = body;
	req.response_len = in.size;
	/* sometimes an error body cut at its first bytes, the rest drained */
	req.body_len = in.size + (retries % 3 == 0 ? LSM_ERROR_BODY_MAX : 0);
	/* the token the request was sent with */
	req.bearer_token = fuzz_token[0] ? fuzz_token : NULL;

	verdict = lsm_fault_verdict(&req);
	if (verdict < LSM_VERDICT_OK || verdict > LSM_VERDICT_FAIL)
		abort();
	f = lsm_fault_from_request(&req, what, table, retries);
	lsm_fault_redact_outcome(f, &req);
	if (f->message == NULL || f->detail == NULL || f->sqlerrcode == 0)
		abort();
	secrets[0] = api_key;
	secrets[1] = header_secret;
	secrets[2] = fuzz_token;
	secrets[3] = NULL;
	fuzz_check_failure(f, secrets, table, req.request_id);
	fuzz_check_raise(f);

	harness_free_all();
	free(body);
	return 0;
}
