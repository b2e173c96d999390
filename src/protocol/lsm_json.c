/*-------------------------------------------------------------------------
 *
 * lsm_json.c
 *		jansson: best-effort decoding of error bodies, the get_lsm_stats and
 *		set_lsm_write_spec request bodies, strict decoding of
 *		get_lsm_write_spec answers, and extra_headers option values.
 *
 * get_lsm_stats answers, which may be large, are decoded by
 * src/protocol/lsm_stats_json.c with PostgreSQL's streaming JSON parser; the other
 * documents are small, and jansson keeps their handling short.  This is the
 * only file of lancelsm that includes jansson.h (its json_object and
 * json_typeof collide with PostgreSQL's SQL-function prototypes).  It
 * raises no error of its own (palloc's out of memory passes through) and
 * calls nothing of PostgreSQL but palloc, pstrdup and PG_TRY, so the same
 * object code links into the standalone harness of fuzz/ (valgrind,
 * libFuzzer).  The jansson tree is always freed before return, and also
 * when palloc raises while it is held (PG_FINALLY): jansson mallocs it
 * outside every memory context.  No message quotes a byte of the decoded
 * text (lsm_json_syntax_reason).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <jansson.h>

#include "protocol/lsm_json.h"

/* Longest error message kept from an error body, in bytes. */
#define LSM_JSON_MAX_MESSAGE 1024

static void lsm_json_copy_message(const char *str, size_t len, char *copy);
static const char *lsm_json_syntax_reason(const char *text);

/*
 * jansson's reasons for a syntax error, by the fixed beginning of its
 * error text, and what lancelsm says for each (the wording of
 * lsm_stats_json.c where both decoders meet).  Longer prefixes first where
 * one begins another.
 */
static const struct
{
	const char *jansson;
	const char *reason;
}			lsm_json_reasons[] = {
	{"'[' or '{' expected", "'[' or '{' expected"},
	{"end of file expected", "end of file expected"},
	{"premature end of input", "premature end of input"},
	{"invalid token", "invalid token"},
	{"unexpected token", "invalid token"},
	{"string or '}' expected", "string or '}' expected"},
	{"':' expected", "':' expected"},
	{"'}' expected", "'}' expected"},
	{"']' expected", "']' expected"},
	{"unexpected newline", "control character in a string"},
	{"control character", "control character in a string"},
	{"invalid escape", "invalid escape"},
	{"invalid Unicode escape", "invalid escape"},
	{"invalid Unicode", "invalid unicode surrogate pair"},
	{"unable to decode byte", "invalid UTF-8"},
	{"\\u0000 is not allowed", "NUL character in a string"},
	{"NUL byte in object key", "NUL byte in object key not supported"},
	{"duplicate object key", "duplicate object key"},
	{"too big negative integer", "integer out of range"},
	{"too big integer", "integer out of range"},
	{"real number overflow", "number out of range"},
	{"maximum parsing depth reached", "maximum parsing depth reached"},
	{"out of memory", "out of memory"},
};

/*
 * lsm_json_syntax_reason: the reason to give for jansson's error text,
 * one of the constants of lsm_json_reasons ("invalid syntax" for a text
 * not listed there).  jansson's text quotes up to 20 bytes of the input
 * ("near '...'") and, for some reasons, a byte or an escape of it; a
 * server or gateway may echo the API key there, cut anywhere, where no
 * redaction can recognise it.  The reason returned holds none of the
 * input.  (json_error_code() would say as much, but only from jansson
 * 2.11 on.)
 */
static const char *
lsm_json_syntax_reason(const char *text)
{
	for (size_t i = 0; i < lengthof(lsm_json_reasons); i++)
		if (strncmp(text, lsm_json_reasons[i].jansson,
					strlen(lsm_json_reasons[i].jansson)) == 0)
			return lsm_json_reasons[i].reason;
	return "invalid syntax";
}

/*
 * lsm_json_copy_message: copy an error message of len bytes (it may contain
 * NUL) for the user into copy (LSM_JSON_MAX_MESSAGE + 4 bytes): truncated
 * at the first NUL, and cut to LSM_JSON_MAX_MESSAGE bytes on a UTF-8
 * character boundary with "..." appended when longer.  Allocates nothing,
 * so that it can run while a jansson tree is held (palloc may raise, and
 * the tree, malloc'd, would leak).
 */
static void
lsm_json_copy_message(const char *str, size_t len, char *copy)
{
	const char *nul = memchr(str, '\0', len);
	bool		cut = false;

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
	memcpy(copy, str, len);
	if (cut)
		memcpy(copy + len, "...", 4);
	else
		copy[len] = '\0';
}

/*
 * lsm_json_decode_error: best-effort decode of an error body {"code": <int>,
 * "error": "<message>"} (see lsm_json.h); only those two members are read.
 * Returns true when body is a JSON object carrying an integer "code" or a
 * string "error" (or both); otherwise returns false with *out zeroed
 * (has_code = false, message = NULL).  Never fails hard.  The caller
 * bounds len (LSM_ERROR_BODY_MAX): jansson's tree takes many times the
 * text's size.  Nothing is allocated while the tree is held, so that it
 * is freed on every path, out of memory included (json_loadb frees its
 * own partial tree when malloc fails).
 */
bool
lsm_json_decode_error(const char *body, size_t len, LsmErrorBody *out)
{
	json_t	   *root;
	json_t	   *code;
	json_t	   *message;
	char		copy[LSM_JSON_MAX_MESSAGE + 4];
	bool		has_message = false;

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
		{
			lsm_json_copy_message(json_string_value(message),
								  json_string_length(message), copy);
			has_message = true;
		}
	}
	json_decref(root);
	if (has_message)
	{
		out->message = pstrdup(copy);
		explicit_bzero(copy, sizeof(copy));
	}
	return out->has_code || out->message != NULL;
}

/*
 * lsm_json_stats_request_body: return the palloc'd body of a get_lsm_stats
 * request, in the exact form of the protocol: {"include_generation_rows":
 * false}, or with the renamed key include_sstable_rows when keys is
 * LSM_KEYS_SSTABLE.
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

/*
 * lsm_json_new_object: a new empty jansson object, or NULL when out of
 * memory.  Never call jansson's json_object() from lancelsm: the postgres
 * executable exports its SQL function json_object(), and the dynamic
 * linker binds our call to that one (a crash).  json_pack's own call
 * inside libjansson is not interposed, as json_loadb's is not.
 */
static json_t *
lsm_json_new_object(void)
{
	return json_pack("{}");
}

/*
 * lsm_json_strings_array: a jansson array of n strings, or NULL when out
 * of memory (nothing leaks).
 */
static json_t *
lsm_json_strings_array(char **strings, int n)
{
	json_t	   *array = json_array();

	for (int i = 0; array != NULL && i < n; i++)
	{
		if (json_array_append_new(array, json_string(strings[i])) != 0)
		{
			json_decref(array);
			array = NULL;
		}
	}
	return array;
}

/*
 * lsm_json_sharding: the SHARDING object of a spec, or NULL when out of
 * memory.  Fields as the Node SDK sends them: mode, then column, then
 * num_buckets, each only for the modes that take it.
 */
static json_t *
lsm_json_sharding(const LsmWriteSpec *spec)
{
	json_t	   *sharding = lsm_json_new_object();

	if (sharding == NULL)
		return NULL;
	if (json_object_set_new(sharding, "mode", json_string(spec->mode)) != 0 ||
		(spec->column != NULL &&
		 json_object_set_new(sharding, "column",
							 json_string(spec->column)) != 0) ||
		(strcmp(spec->mode, "bucket") == 0 &&
		 json_object_set_new(sharding, "num_buckets",
							 json_integer(spec->num_buckets)) != 0))
	{
		json_decref(sharding);
		return NULL;
	}
	return sharding;
}

/*
 * lsm_json_write_spec_body: the palloc'd set_lsm_write_spec request body
 * of a spec whose strings are valid UTF-8 (the caller validated it):
 * {"sharding": {...}, "maintained_indexes": [...] or null,
 *  "writer_config_defaults": {...}}, compact, keys in that order.
 * Returns NULL when out of memory.
 */
char *
lsm_json_write_spec_body(const LsmWriteSpec *spec)
{
	json_t	   *root = lsm_json_new_object();
	json_t	   *defaults = lsm_json_new_object();
	char	   *text = NULL;
	char	   *volatile copy = NULL;
	bool		ok = (root != NULL && defaults != NULL);

	for (int i = 0; ok && i < spec->ndefaults; i++)
		ok = json_object_set_new(defaults, spec->default_keys[i],
								 json_string(spec->default_values[i])) == 0;
	ok = ok &&
		json_object_set_new(root, "sharding", lsm_json_sharding(spec)) == 0 &&
		json_object_set_new(root, "maintained_indexes", spec->all_indexes ?
							json_null() :
							lsm_json_strings_array(spec->indexes,
												   spec->nindexes)) == 0 &&
		json_object_set(root, "writer_config_defaults", defaults) == 0;
	if (ok)
		text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	/* the trees are freed before palloc can raise; the text on every path */
	json_decref(defaults);
	json_decref(root);
	if (text != NULL)
	{
		PG_TRY();
		{
			copy = pstrdup(text);
		}
		PG_FINALLY();
		{
			free(text);
		}
		PG_END_TRY();
	}
	return copy;
}

/*
 * lsm_json_fail: write a description of what is wrong into errbuf and
 * return false.
 */
static bool
lsm_json_fail(char *errbuf, size_t errlen, const char *what, const char *field)
{
	snprintf(errbuf, errlen, "%s %s", field, what);
	return false;
}

/*
 * lsm_json_string_list: the strings of a JSON array into *out (palloc'd),
 * their count into *n; false when json is not an array of strings.
 */
static bool
lsm_json_string_list(json_t *json, char ***out, int *n)
{
	size_t		i;
	json_t	   *item;

	if (!json_is_array(json))
		return false;
	*n = (int) json_array_size(json);
	*out = palloc((*n + 1) * sizeof(char *));
	json_array_foreach(json, i, item)
	{
		if (!json_is_string(item))
			return false;
		(*out)[i] = pstrdup(json_string_value(item));
	}
	return true;
}

/*
 * lsm_json_string_map: the members of a JSON object of strings into
 * keys/values (palloc'd), their count into *n; false when json is not an
 * object of strings.
 */
static bool
lsm_json_string_map(json_t *json, char ***keys, char ***values, int *n)
{
	const char *key;
	json_t	   *value;
	int			i = 0;

	if (!json_is_object(json))
		return false;
	*n = (int) json_object_size(json);
	*keys = palloc((*n + 1) * sizeof(char *));
	*values = palloc((*n + 1) * sizeof(char *));
	json_object_foreach(json, key, value)
	{
		if (!json_is_string(value))
			return false;
		(*keys)[i] = pstrdup(key);
		(*values)[i++] = pstrdup(json_string_value(value));
	}
	return true;
}

/*
 * lsm_json_decode_sharding: the SHARDING object into out; false with
 * errbuf set when it is not one of the three forms.
 */
static bool
lsm_json_decode_sharding(json_t *sharding, LsmWriteSpec *out,
						 char *errbuf, size_t errlen)
{
	json_t	   *mode = json_object_get(sharding, "mode");
	json_t	   *column = json_object_get(sharding, "column");
	json_t	   *buckets = json_object_get(sharding, "num_buckets");
	const char *m;

	if (!json_is_object(sharding))
		return lsm_json_fail(errbuf, errlen, "is missing or not an object",
							 "\"sharding\"");
	if (!json_is_string(mode))
		return lsm_json_fail(errbuf, errlen, "is missing or not a string",
							 "\"sharding.mode\"");
	m = json_string_value(mode);
	if (strcmp(m, "bucket") != 0 && strcmp(m, "identity") != 0 &&
		strcmp(m, "unsharded") != 0)
		return lsm_json_fail(errbuf, errlen, "is not bucket, identity or unsharded",
							 "\"sharding.mode\"");
	out->mode = pstrdup(m);
	if (strcmp(m, "unsharded") != 0)
	{
		if (!json_is_string(column))
			return lsm_json_fail(errbuf, errlen, "is missing or not a string",
								 "\"sharding.column\"");
		out->column = pstrdup(json_string_value(column));
	}
	if (strcmp(m, "bucket") == 0)
	{
		/*
		 * u32 in the SDK's type (rust/lancedb/src/remote/table.rs), 0
		 * included; above INT32_MAX the int4 result column cannot hold it
		 */
		if (!json_is_integer(buckets) || json_integer_value(buckets) < 0 ||
			json_integer_value(buckets) > INT32_MAX)
			return lsm_json_fail(errbuf, errlen,
								 "is missing or not an integer from 0 to 2147483647",
								 "\"sharding.num_buckets\"");
		out->num_buckets = (int64_t) json_integer_value(buckets);
	}
	return true;
}

/*
 * lsm_json_decode_spec_object: the members of an "lsm_write_spec" object
 * into out; false with errbuf naming the field that is missing or
 * mistyped.  As in the SDK's type (rust/lancedb/src/remote/table.rs,
 * get_lsm_write_spec: #[serde(default)]), an absent maintained_indexes is
 * the empty list and an absent writer_config_defaults the empty map.  A
 * null maintained_indexes means every index the table has (all_indexes),
 * as the SDK's newest code reads it (remote/table/lsm.rs, an Option); a
 * null writer_config_defaults is refused, as serde refuses it.
 */
static bool
lsm_json_decode_spec_object(json_t *spec, LsmWriteSpec *out,
							char *errbuf, size_t errlen)
{
	json_t	   *indexes = json_object_get(spec, "maintained_indexes");
	json_t	   *defaults = json_object_get(spec, "writer_config_defaults");

	if (!lsm_json_decode_sharding(json_object_get(spec, "sharding"), out,
								  errbuf, errlen))
		return false;
	out->all_indexes = json_is_null(indexes);
	if (indexes == NULL || out->all_indexes)
		out->indexes = palloc0(sizeof(char *));
	else if (!lsm_json_string_list(indexes, &out->indexes, &out->nindexes))
		return lsm_json_fail(errbuf, errlen,
							 "is not an array of strings",
							 "\"maintained_indexes\"");
	if (defaults == NULL)
	{
		out->default_keys = palloc0(sizeof(char *));
		out->default_values = palloc0(sizeof(char *));
	}
	else if (!lsm_json_string_map(defaults, &out->default_keys,
								  &out->default_values, &out->ndefaults))
		return lsm_json_fail(errbuf, errlen,
							 "is not an object of strings",
							 "\"writer_config_defaults\"");
	return true;
}

/*
 * lsm_json_decode_spec_root: the parsed get_lsm_write_spec answer root into
 * out (lsm_json_decode_write_spec); false with errbuf set.  Allocates with
 * palloc: the caller frees root even when that raises.
 */
static bool
lsm_json_decode_spec_root(json_t *root, LsmWriteSpec *out,
						  char *errbuf, size_t errlen)
{
	json_t	   *spec = json_object_get(root, "lsm_write_spec");

	if (!json_is_object(root))
		return lsm_json_fail(errbuf, errlen, "is not a JSON object",
							 "response body");
	if (spec == NULL || json_is_null(spec))
		return true;
	if (!json_is_object(spec))
		return lsm_json_fail(errbuf, errlen, "is neither null nor an object",
							 "\"lsm_write_spec\"");
	return out->enabled = lsm_json_decode_spec_object(spec, out, errbuf,
													  errlen);
}

/*
 * lsm_json_decode_write_spec: decode a get_lsm_write_spec answer (see
 * lsm_json.h): "lsm_write_spec" null or absent gives enabled = false (an
 * Option in the SDK's type); otherwise sharding must be present and of its
 * type, maintained_indexes and writer_config_defaults default to empty.
 * Members the protocol does not name are ignored.  Invalid JSON gives
 * 'response body is not valid JSON: <reason> at line L column C' (the
 * column of the last byte read, as jansson counts it), quoting nothing of
 * the body.  The jansson tree is freed before return, and when palloc
 * raises out of memory while the tree is held.
 */
bool
lsm_json_decode_write_spec(const char *body, size_t len, LsmWriteSpec *out,
						   char *errbuf, size_t errlen)
{
	json_error_t jerr;
	json_t	   *root;
	volatile bool ok = false;
	size_t		i = 0;

	memset(out, 0, sizeof(*out));
	while (body != NULL && i < len &&
		   (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' ||
			body[i] == '\n'))
		i++;
	if (body == NULL || i == len)
	{
		snprintf(errbuf, errlen, "response body is empty");
		return false;
	}
	root = json_loadb(body, len, 0, &jerr);
	if (root == NULL)
	{
		snprintf(errbuf, errlen,
				 "response body is not valid JSON: %s at line %d column %d",
				 lsm_json_syntax_reason(jerr.text), jerr.line, jerr.column);
		return false;
	}
	PG_TRY();
	{
		ok = lsm_json_decode_spec_root(root, out, errbuf, errlen);
	}
	PG_FINALLY();
	{
		json_decref(root);
	}
	PG_END_TRY();
	return ok;
}

/*
 * lsm_json_wipe_strings: zero the string values of a jansson object
 * before it is freed (they may be secrets; jansson frees without wiping).
 */
static void
lsm_json_wipe_strings(json_t *object)
{
	const char *key;
	json_t	   *value;

	json_object_foreach(object, key, value)
	{
		if (json_is_string(value))
			explicit_bzero((char *) json_string_value(value),
						   json_string_length(value));
	}
}

/*
 * lsm_json_copy_headers: the members of root, a jansson object, into *n
 * palloc'd names and values (lsm_json_decode_headers); false with errbuf
 * set at the first value that is not a string without NUL.  The caller
 * wipes and frees root even when palloc raises.
 */
static bool
lsm_json_copy_headers(json_t *root, int *n, char ***names, char ***values,
					  char *errbuf, size_t errlen)
{
	const char *key;
	json_t	   *value;

	*names = palloc((json_object_size(root) + 1) * sizeof(char *));
	*values = palloc((json_object_size(root) + 1) * sizeof(char *));
	json_object_foreach(root, key, value)
	{
		if (!json_is_string(value) ||
			strlen(json_string_value(value)) != json_string_length(value))
		{
			snprintf(errbuf, errlen,
					 "The value of every header must be a JSON string without NUL characters.");
			return false;
		}
		(*names)[*n] = pstrdup(key);
		(*values)[(*n)++] = pstrdup(json_string_value(value));
	}
	return true;
}

/*
 * lsm_json_decode_headers: decode an extra_headers option value, a JSON
 * object of strings such as {"X-Tenant": "acme"}, into *n palloc'd names
 * and values (NUL-terminated; a value holding NUL is refused).  Returns
 * false with errbuf set to a sentence that never quotes the text: values
 * may be secrets.  Names given twice are refused.  The jansson tree is
 * wiped and freed before return, and when palloc raises out of memory
 * while it is held.
 */
bool
lsm_json_decode_headers(const char *text, int *n, char ***names,
						char ***values, char *errbuf, size_t errlen)
{
	json_t	   *root = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	volatile bool ok = false;

	*n = 0;
	if (!json_is_object(root))
	{
		snprintf(errbuf, errlen,
				 "The value must be a JSON object whose members are header names and string values, each name once.");
		json_decref(root);
		return false;
	}
	PG_TRY();
	{
		ok = lsm_json_copy_headers(root, n, names, values, errbuf, errlen);
	}
	PG_FINALLY();
	{
		lsm_json_wipe_strings(root);
		json_decref(root);
	}
	PG_END_TRY();
	return ok;
}
