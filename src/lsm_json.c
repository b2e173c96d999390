/*-------------------------------------------------------------------------
 *
 * lsm_json.c
 *		Strict decoding of get_lsm_stats answers, best-effort decoding of
 *		error bodies, and the get_lsm_stats request body, with jansson.
 *
 * This is the only file of lancelsm that includes jansson.h (its json_object
 * and json_typeof collide with PostgreSQL's SQL-function prototypes, see
 * shared/docs/style.md).  It never raises an error: bad input makes the
 * decoder return false with a one-line message naming the offending field
 * by its path, e.g. field "lsm_stats.buckets[2].generations[0].bytes" is
 * missing.  The callers turn that message into an ereport.  Because it calls
 * nothing of PostgreSQL but palloc, palloc0 and pstrdup, the same object
 * code links into the standalone harness of fuzz/ (valgrind, libFuzzer).
 *
 * Results are allocated in CurrentMemoryContext.  After a failure, whatever
 * was allocated before the failure is left there for the caller's context
 * reset to release; the jansson tree itself is always freed before return.
 *
 * Range of numbers: the protocol says unsigned 64-bit, but jansson holds
 * integers as json_int_t (long long) and refuses to load a body with an
 * integer above INT64_MAX ("too big integer").  The range actually accepted
 * is therefore 0 .. INT64_MAX; a larger value fails the whole body, a
 * negative value or a real (1.5, 1e3) fails its field.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>
#include <jansson.h>

#include "lsm_json.h"

/* Refuse arrays with more elements than this (counts are stored as int). */
#define LSM_JSON_MAX_ELEMENTS (INT_MAX / 2)

/* Refuse result arrays larger than PostgreSQL's MaxAllocSize (1 GB - 1). */
#define LSM_JSON_MAX_ALLOC ((size_t) 0x3fffffff)

/* Longest error message kept from an error body, in bytes. */
#define LSM_JSON_MAX_MESSAGE 1024

/*
 * One step of the path from the root to the value being decoded: a name,
 * optionally followed by an array index.  The steps live on the C stack of
 * the decoding functions and are only rendered into text on error, so a
 * successful decode never formats a path.
 */
typedef struct LsmJsonPath
{
	const struct LsmJsonPath *parent;	/* NULL at the root */
	const char *name;
	int			index;			/* -1: no [index] */
} LsmJsonPath;

/* What every decoding function needs besides the value and its path. */
typedef struct LsmJsonCtx
{
	bool		with_rows;		/* generations must carry "rows" */
	char	   *errbuf;
	size_t		errlen;
} LsmJsonCtx;

static size_t lsm_json_path_render(const LsmJsonPath *path, char *buf,
								   size_t buflen);
static bool lsm_json_fail(LsmJsonCtx *ctx, const LsmJsonPath *path,
						  const char *field, const char *what);
static json_t *lsm_json_get(LsmJsonCtx *ctx, json_t *obj,
							const LsmJsonPath *path, const char *field);
static bool lsm_json_get_u64(LsmJsonCtx *ctx, json_t *obj,
							 const LsmJsonPath *path, const char *field,
							 uint64_t *out);
static bool lsm_json_get_bool(LsmJsonCtx *ctx, json_t *obj,
							  const LsmJsonPath *path, const char *field,
							  bool *out);
static bool lsm_json_check_string(LsmJsonCtx *ctx, json_t *value,
								  const LsmJsonPath *path, const char *field);
static bool lsm_json_get_string(LsmJsonCtx *ctx, json_t *obj,
								const LsmJsonPath *path, const char *field,
								char **out);
static json_t *lsm_json_get_array(LsmJsonCtx *ctx, json_t *obj,
								  const LsmJsonPath *path, const char *field,
								  int *count);
static void *lsm_json_alloc_array(LsmJsonCtx *ctx, const LsmJsonPath *path,
								  const char *field, int count,
								  size_t elemsize);
static bool lsm_json_decode_generation(LsmJsonCtx *ctx, json_t *obj,
									   const LsmJsonPath *path,
									   LsmGeneration *out);
static bool lsm_json_decode_indexes(LsmJsonCtx *ctx, json_t *obj,
									const LsmJsonPath *path,
									LsmMemtable *out);
static bool lsm_json_decode_memtable(LsmJsonCtx *ctx, json_t *obj,
									 const LsmJsonPath *path,
									 LsmMemtable *out);
static bool lsm_json_decode_generations(LsmJsonCtx *ctx, json_t *obj,
										const LsmJsonPath *path,
										LsmBucket *out);
static bool lsm_json_decode_memtables(LsmJsonCtx *ctx, json_t *obj,
									  const LsmJsonPath *path,
									  LsmBucket *out);
static bool lsm_json_decode_bucket(LsmJsonCtx *ctx, json_t *obj,
								   const LsmJsonPath *path, LsmBucket *out);
static bool lsm_json_decode_lsm_stats(LsmJsonCtx *ctx, json_t *obj,
									  const LsmJsonPath *path, LsmStats *out);
static bool lsm_json_load(LsmJsonCtx *ctx, const char *body, size_t len,
						  json_t **root);
static void lsm_json_sanitize(char *text);
static char *lsm_json_copy_message(const char *str, size_t len);

/*
 * Render the path ending at "path" into buf ("a.b[2].c"); returns the length
 * written (or that would have been written; buf is always NUL-terminated
 * when buflen > 0).  path may be NULL (empty path).
 */
static size_t
lsm_json_path_render(const LsmJsonPath *path, char *buf, size_t buflen)
{
	size_t		used = 0;
	int			n;

	if (path == NULL)
	{
		if (buflen > 0)
			buf[0] = '\0';
		return 0;
	}
	if (path->parent != NULL)
		used = lsm_json_path_render(path->parent, buf, buflen);
	if (used >= buflen)
		return used;
	if (path->index >= 0)
		n = snprintf(buf + used, buflen - used, "%s%s[%d]",
					 path->parent != NULL ? "." : "", path->name, path->index);
	else
		n = snprintf(buf + used, buflen - used, "%s%s",
					 path->parent != NULL ? "." : "", path->name);
	return used + (n > 0 ? (size_t) n : 0);
}

/*
 * Write 'field "<path>.<field>" <what>' into the error buffer and return
 * false, so callers can "return lsm_json_fail(...)".  field may be NULL when
 * the path itself names the offending value.
 */
static bool
lsm_json_fail(LsmJsonCtx *ctx, const LsmJsonPath *path, const char *field,
			  const char *what)
{
	char		where[LSM_JSON_ERRBUF_SIZE];
	size_t		used;

	used = lsm_json_path_render(path, where, sizeof(where));
	if (field != NULL && used < sizeof(where))
		snprintf(where + used, sizeof(where) - used, "%s%s",
				 used > 0 ? "." : "", field);
	if (ctx->errlen > 0)
		snprintf(ctx->errbuf, ctx->errlen, "field \"%s\" %s", where, what);
	return false;
}

/*
 * Look up a required member of obj (an object).  Returns NULL, with the
 * error set, when it is missing.  A member present with value null is
 * returned: the type checks of the callers reject it.
 */
static json_t *
lsm_json_get(LsmJsonCtx *ctx, json_t *obj, const LsmJsonPath *path,
			 const char *field)
{
	json_t	   *value = json_object_get(obj, field);

	if (value == NULL)
		lsm_json_fail(ctx, path, field, "is missing");
	return value;
}

/*
 * Decode the required member "field" of obj (an object) as an unsigned
 * integer: a JSON integer >= 0.  Reals, negative numbers and other types
 * are errors.  Values above INT64_MAX never get here (see file header).
 */
static bool
lsm_json_get_u64(LsmJsonCtx *ctx, json_t *obj, const LsmJsonPath *path,
				 const char *field, uint64_t *out)
{
	json_t	   *value = lsm_json_get(ctx, obj, path, field);
	json_int_t	n;

	if (value == NULL)
		return false;
	if (!json_is_integer(value))
		return lsm_json_fail(ctx, path, field,
							 "is not an unsigned 64-bit integer");
	n = json_integer_value(value);
	if (n < 0)
		return lsm_json_fail(ctx, path, field,
							 "is not an unsigned 64-bit integer");
	*out = (uint64_t) n;
	return true;
}

/*
 * Decode the required member "field" of obj (an object) as a boolean.
 */
static bool
lsm_json_get_bool(LsmJsonCtx *ctx, json_t *obj, const LsmJsonPath *path,
				  const char *field, bool *out)
{
	json_t	   *value = lsm_json_get(ctx, obj, path, field);

	if (value == NULL)
		return false;
	if (!json_is_boolean(value))
		return lsm_json_fail(ctx, path, field, "is not a boolean");
	*out = json_is_true(value);
	return true;
}

/*
 * Check that value is a JSON string that PostgreSQL text can hold: it must
 * not contain NUL ("\u0000" is accepted by the parser, see lsm_json_load).
 * jansson has already rejected invalid UTF-8.  field may be NULL when path
 * names the value itself (an array element).
 */
static bool
lsm_json_check_string(LsmJsonCtx *ctx, json_t *value, const LsmJsonPath *path,
					  const char *field)
{
	if (!json_is_string(value))
		return lsm_json_fail(ctx, path, field, "is not a string");
	if (strlen(json_string_value(value)) != json_string_length(value))
		return lsm_json_fail(ctx, path, field, "contains a NUL character");
	return true;
}

/*
 * Decode the required member "field" of obj (an object) as a string without
 * NUL; *out is a pstrdup'd copy, independent of the jansson tree.
 */
static bool
lsm_json_get_string(LsmJsonCtx *ctx, json_t *obj, const LsmJsonPath *path,
					const char *field, char **out)
{
	json_t	   *value = lsm_json_get(ctx, obj, path, field);

	if (value == NULL || !lsm_json_check_string(ctx, value, path, field))
		return false;
	*out = pstrdup(json_string_value(value));
	return true;
}

/*
 * Look up the required member "field" of obj (an object), which must be an
 * array of at most LSM_JSON_MAX_ELEMENTS elements.  Returns the array and
 * its size in *count, or NULL with the error set.
 */
static json_t *
lsm_json_get_array(LsmJsonCtx *ctx, json_t *obj, const LsmJsonPath *path,
				   const char *field, int *count)
{
	json_t	   *value = lsm_json_get(ctx, obj, path, field);
	size_t		size;

	if (value == NULL)
		return NULL;
	if (!json_is_array(value))
	{
		lsm_json_fail(ctx, path, field, "is not an array");
		return NULL;
	}
	size = json_array_size(value);
	if (size > LSM_JSON_MAX_ELEMENTS)
	{
		lsm_json_fail(ctx, path, field, "has too many elements");
		return NULL;
	}
	*count = (int) size;
	return value;
}

/*
 * palloc0 an array of count elements of elemsize bytes for the member
 * "field" of path; returns NULL for count 0, and NULL with the error set
 * when the array would exceed MaxAllocSize (palloc would raise an error).
 * The caller guarantees 0 <= count <= LSM_JSON_MAX_ELEMENTS, so the
 * multiplication cannot overflow size_t.
 */
static void *
lsm_json_alloc_array(LsmJsonCtx *ctx, const LsmJsonPath *path,
					 const char *field, int count, size_t elemsize)
{
	if (count == 0)
		return NULL;
	if ((size_t) count * elemsize > LSM_JSON_MAX_ALLOC)
	{
		lsm_json_fail(ctx, path, field, "has too many elements");
		return NULL;
	}
	return palloc0((size_t) count * elemsize);
}

/*
 * Decode one L0 generation {generation, bytes, rows?}.  path names the
 * element.  "rows" is required when ctx->with_rows (the request asked for
 * it); otherwise it is ignored even if the server sends it, so has_rows
 * says exactly "rows were asked for and received" and the SQL side never
 * shows a count the user did not request.
 */
static bool
lsm_json_decode_generation(LsmJsonCtx *ctx, json_t *obj,
						   const LsmJsonPath *path, LsmGeneration *out)
{
	if (!json_is_object(obj))
		return lsm_json_fail(ctx, path, NULL, "is not an object");
	if (!lsm_json_get_u64(ctx, obj, path, "generation", &out->generation) ||
		!lsm_json_get_u64(ctx, obj, path, "bytes", &out->bytes))
		return false;
	out->has_rows = false;
	out->rows = 0;
	if (ctx->with_rows)
	{
		if (!lsm_json_get_u64(ctx, obj, path, "rows", &out->rows))
			return false;
		out->has_rows = true;
	}
	return true;
}

/*
 * Decode the required "indexes" member of a memtable object obj (an array
 * of strings without NUL) into out->nindexes / out->indexes.
 */
static bool
lsm_json_decode_indexes(LsmJsonCtx *ctx, json_t *obj, const LsmJsonPath *path,
						LsmMemtable *out)
{
	json_t	   *array;
	int			count = 0;
	int			i;

	array = lsm_json_get_array(ctx, obj, path, "indexes", &count);
	if (array == NULL)
		return false;
	out->indexes = lsm_json_alloc_array(ctx, path, "indexes", count,
										sizeof(char *));
	if (count > 0 && out->indexes == NULL)
		return false;
	for (i = 0; i < count; i++)
	{
		json_t	   *name = json_array_get(array, i);
		LsmJsonPath elem = {path, "indexes", i};

		if (!lsm_json_check_string(ctx, name, &elem, NULL))
			return false;
		out->indexes[i] = pstrdup(json_string_value(name));
	}
	out->nindexes = count;
	return true;
}

/*
 * Decode one memtable {generation, rows, bytes, batches, indexes}.  path
 * names the element.
 */
static bool
lsm_json_decode_memtable(LsmJsonCtx *ctx, json_t *obj,
						 const LsmJsonPath *path, LsmMemtable *out)
{
	if (!json_is_object(obj))
		return lsm_json_fail(ctx, path, NULL, "is not an object");
	return lsm_json_get_u64(ctx, obj, path, "generation", &out->generation) &&
		lsm_json_get_u64(ctx, obj, path, "rows", &out->rows) &&
		lsm_json_get_u64(ctx, obj, path, "bytes", &out->bytes) &&
		lsm_json_get_u64(ctx, obj, path, "batches", &out->batches) &&
		lsm_json_decode_indexes(ctx, obj, path, out);
}

/*
 * Decode the required "generations" array of a bucket object obj into
 * out->ngenerations / out->generations, keeping the server's order.
 */
static bool
lsm_json_decode_generations(LsmJsonCtx *ctx, json_t *obj,
							const LsmJsonPath *path, LsmBucket *out)
{
	json_t	   *array;
	int			count = 0;
	int			i;

	array = lsm_json_get_array(ctx, obj, path, "generations", &count);
	if (array == NULL)
		return false;
	out->generations = lsm_json_alloc_array(ctx, path, "generations", count,
											sizeof(LsmGeneration));
	if (count > 0 && out->generations == NULL)
		return false;
	for (i = 0; i < count; i++)
	{
		LsmJsonPath elem = {path, "generations", i};

		if (!lsm_json_decode_generation(ctx, json_array_get(array, i), &elem,
										&out->generations[i]))
			return false;
	}
	out->ngenerations = count;
	return true;
}

/*
 * Decode the "memtables" array of a bucket object obj.  The caller has
 * already decoded out->status: the member may be absent only for a Sealed
 * bucket (has_memtables = false); present, it must be an array (null is an
 * error, not "absent").
 */
static bool
lsm_json_decode_memtables(LsmJsonCtx *ctx, json_t *obj,
						  const LsmJsonPath *path, LsmBucket *out)
{
	json_t	   *array;
	int			count = 0;
	int			i;

	out->has_memtables = false;
	if (json_object_get(obj, "memtables") == NULL &&
		strcmp(out->status, "Sealed") == 0)
		return true;
	array = lsm_json_get_array(ctx, obj, path, "memtables", &count);
	if (array == NULL)
		return false;
	out->memtables = lsm_json_alloc_array(ctx, path, "memtables", count,
										  sizeof(LsmMemtable));
	if (count > 0 && out->memtables == NULL)
		return false;
	for (i = 0; i < count; i++)
	{
		LsmJsonPath elem = {path, "memtables", i};

		if (!lsm_json_decode_memtable(ctx, json_array_get(array, i), &elem,
									  &out->memtables[i]))
			return false;
	}
	out->nmemtables = count;
	out->has_memtables = true;
	return true;
}

/*
 * Decode one bucket object.  path names the element; out is zeroed by the
 * caller.  Unknown members are ignored.
 */
static bool
lsm_json_decode_bucket(LsmJsonCtx *ctx, json_t *obj, const LsmJsonPath *path,
					   LsmBucket *out)
{
	if (!json_is_object(obj))
		return lsm_json_fail(ctx, path, NULL, "is not an object");
	if (!lsm_json_get_string(ctx, obj, path, "shard_id", &out->shard_id))
		return false;
	if (out->shard_id[0] == '\0')
		return lsm_json_fail(ctx, path, "shard_id", "is empty");
	if (!lsm_json_get_string(ctx, obj, path, "status", &out->status))
		return false;
	if (strcmp(out->status, "Active") != 0 &&
		strcmp(out->status, "Sealed") != 0)
		return lsm_json_fail(ctx, path, "status",
							 "is neither \"Active\" nor \"Sealed\"");
	return lsm_json_get_u64(ctx, obj, path, "writer_epoch",
							&out->writer_epoch) &&
		lsm_json_get_u64(ctx, obj, path, "manifest_version",
						 &out->manifest_version) &&
		lsm_json_get_u64(ctx, obj, path, "current_generation",
						 &out->current_generation) &&
		lsm_json_get_u64(ctx, obj, path, "replay_after_wal_entry_position",
						 &out->replay_after_wal_entry_position) &&
		lsm_json_get_u64(ctx, obj, path, "wal_entry_position_last_seen",
						 &out->wal_entry_position_last_seen) &&
		lsm_json_decode_generations(ctx, obj, path, out) &&
		lsm_json_get_bool(ctx, obj, path, "compacting", &out->compacting) &&
		lsm_json_decode_memtables(ctx, obj, path, out);
}

/*
 * Decode the non-null "lsm_stats" object obj ({"buckets": [...]}) into out.
 * path names "lsm_stats".
 */
static bool
lsm_json_decode_lsm_stats(LsmJsonCtx *ctx, json_t *obj,
						  const LsmJsonPath *path, LsmStats *out)
{
	json_t	   *array;
	int			count = 0;
	int			i;

	if (!json_is_object(obj))
		return lsm_json_fail(ctx, path, NULL, "is neither an object nor null");
	array = lsm_json_get_array(ctx, obj, path, "buckets", &count);
	if (array == NULL)
		return false;
	out->buckets = lsm_json_alloc_array(ctx, path, "buckets", count,
										sizeof(LsmBucket));
	if (count > 0 && out->buckets == NULL)
		return false;
	for (i = 0; i < count; i++)
	{
		LsmJsonPath elem = {path, "buckets", i};

		if (!lsm_json_decode_bucket(ctx, json_array_get(array, i), &elem,
									&out->buckets[i]))
			return false;
	}
	out->nbuckets = count;
	out->enabled = true;
	return true;
}

/*
 * Replace in text (NUL-terminated) every byte that is not printable ASCII
 * by '?'.  jansson quotes the offending input ("near '...'"), which may be
 * invalid UTF-8 or a control character; the message must stay one line of
 * text that any client encoding can carry.
 */
static void
lsm_json_sanitize(char *text)
{
	for (; *text != '\0'; text++)
		if ((unsigned char) *text < 0x20 || (unsigned char) *text > 0x7e)
			*text = '?';
}

/*
 * Parse body strictly: one JSON object or array, nothing after it but
 * whitespace, no duplicate keys, at most jansson's nesting depth (2048).
 * "\u0000" is let through the parser (JSON_ALLOW_NUL) so that the field
 * holding it can be named by lsm_json_check_string.  On success *root must
 * be released with json_decref; on failure the error is set.
 */
static bool
lsm_json_load(LsmJsonCtx *ctx, const char *body, size_t len, json_t **root)
{
	json_error_t jerr;
	bool		overflow;
	size_t		i;

	for (i = 0; i < len; i++)
		if (body[i] != ' ' && body[i] != '\t' && body[i] != '\r' &&
			body[i] != '\n')
			break;
	if (i == len)
	{
		snprintf(ctx->errbuf, ctx->errlen, "response body is empty");
		return false;
	}
	*root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
					   &jerr);
	if (*root != NULL)
		return true;
	overflow = (json_error_code(&jerr) == json_error_numeric_overflow);
	lsm_json_sanitize(jerr.text);
	if (overflow)
		snprintf(ctx->errbuf, ctx->errlen,
				 "response body holds an integer outside the supported range 0..%lld: %s at line %d column %d",
				 (long long) INT64_MAX, jerr.text, jerr.line, jerr.column);
	else
		snprintf(ctx->errbuf, ctx->errlen,
				 "response body is not valid JSON: %s at line %d column %d",
				 jerr.text, jerr.line, jerr.column);
	return false;
}

/*
 * Decode a get_lsm_stats answer (see lsm_json.h).  with_rows says whether
 * the request asked for generation rows.  On success *out holds the palloc'd
 * result; on failure *out is zeroed and errbuf (errlen > 0) holds the reason.
 */
bool
lsm_json_decode_stats(const char *body, size_t len, bool with_rows,
					  LsmStats *out, char *errbuf, size_t errlen)
{
	LsmJsonCtx	ctx = {with_rows, errbuf, errlen};
	LsmJsonPath path = {NULL, "lsm_stats", -1};
	LsmStats	result = {0};
	json_t	   *root = NULL;
	json_t	   *stats;
	bool		ok;

	memset(out, 0, sizeof(*out));
	if (errlen > 0)
		errbuf[0] = '\0';
	if (!lsm_json_load(&ctx, body, len, &root))
		return false;
	if (!json_is_object(root))
	{
		snprintf(errbuf, errlen, "response body is not a JSON object");
		json_decref(root);
		return false;
	}
	stats = lsm_json_get(&ctx, root, NULL, "lsm_stats");
	if (stats == NULL)
		ok = false;
	else if (json_is_null(stats))
		ok = true;				/* LSM is off: enabled = false, no buckets */
	else
		ok = lsm_json_decode_lsm_stats(&ctx, stats, &path, &result);
	json_decref(root);
	if (ok)
		*out = result;
	return ok;
}

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
 * shared/docs/lsm-protocol.md: {"include_generation_rows": false}.
 */
char *
lsm_json_stats_request_body(bool include_generation_rows)
{
	return pstrdup(include_generation_rows ?
				   "{\"include_generation_rows\": true}" :
				   "{\"include_generation_rows\": false}");
}
