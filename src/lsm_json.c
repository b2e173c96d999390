/*-------------------------------------------------------------------------
 *
 * lsm_json.c
 *		Best-effort decoding of error bodies with jansson, and the
 *		get_lsm_stats request body.
 *
 * get_lsm_stats answers, which may be large, are decoded by
 * src/lsm_stats_json.c with PostgreSQL's streaming JSON parser; the error
 * bodies are small, and jansson keeps their decoding short.  This is the
 * only file of lancelsm that includes jansson.h (its json_object and
 * json_typeof collide with PostgreSQL's SQL-function prototypes, see
 * shared/docs/style.md).  It never raises an error and calls nothing of
 * PostgreSQL but palloc and pstrdup, so the same object code links into the
 * standalone harness of fuzz/ (valgrind, libFuzzer).  The jansson tree is
 * always freed before return.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <jansson.h>

#include "lsm_json.h"

/* Longest error message kept from an error body, in bytes. */
#define LSM_JSON_MAX_MESSAGE 1024

static char *lsm_json_copy_message(const char *str, size_t len);

/*
 * Copy an error message of len bytes (it may contain NUL) for the user:
 * truncated at the first NUL, and cut to LSM_JSON_MAX_MESSAGE bytes on a
 * UTF-8 character boundary with "..." appended when longer.
 */
static char *
lsm_json_copy_message(const char *str, size_t len)
{
	const char *nul = memchr(str, '\0', len);
	bool		cut = false;
	char	   *copy;

	if (nul != NULL)
		len = nul - str;
	if (len > LSM_JSON_MAX_MESSAGE)
	{
		len = LSM_JSON_MAX_MESSAGE;
		/* do not split a multibyte character: back off its continuations */
		while (len > 0 && ((unsigned char) str[len] & 0xC0) == 0x80)
			len--;
		cut = true;
	}
	copy = palloc(len + (cut ? 4 : 1));
	memcpy(copy, str, len);
	if (cut)
		memcpy(copy + len, "...", 4);
	else
		copy[len] = '\0';
	return copy;
}

/*
 * Best-effort decode of an error body {"code": <int>, "error": "<message>"}
 * (see lsm_json.h).  Returns true when body is a JSON object carrying an
 * integer "code" or a string "error" (or both); otherwise returns false with
 * *out zeroed (has_code = false, message = NULL).  Never fails hard.
 */
bool
lsm_json_decode_error(const char *body, size_t len, LsmErrorBody *out)
{
	json_t	   *root;
	json_t	   *code;
	json_t	   *message;

	memset(out, 0, sizeof(*out));
	if (body == NULL || len == 0)
		return false;
	root = json_loadb(body, len, JSON_ALLOW_NUL, NULL);
	if (root == NULL)
		return false;
	if (json_is_object(root))
	{
		code = json_object_get(root, "code");
		message = json_object_get(root, "error");
		if (json_is_integer(code))
		{
			out->has_code = true;
			out->code = (int64_t) json_integer_value(code);
		}
		if (json_is_string(message))
			out->message = lsm_json_copy_message(json_string_value(message),
												 json_string_length(message));
	}
	json_decref(root);
	return out->has_code || out->message != NULL;
}

/*
 * Return the palloc'd body of a get_lsm_stats request, in the exact form of
 * the protocol: {"include_generation_rows": false}, or with the renamed key
 * include_sstable_rows when keys is LSM_KEYS_SSTABLE.
 */
char *
lsm_json_stats_request_body(bool include_generation_rows,
							LsmKeySpelling keys)
{
	if (keys == LSM_KEYS_SSTABLE)
		return pstrdup(include_generation_rows ?
					   "{\"include_sstable_rows\": true}" :
					   "{\"include_sstable_rows\": false}");
	return pstrdup(include_generation_rows ?
				   "{\"include_generation_rows\": true}" :
				   "{\"include_generation_rows\": false}");
}
