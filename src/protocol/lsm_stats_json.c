/*-------------------------------------------------------------------------
 *
 * lsm_stats_json.c
 *		Strict, streaming decoding of get_lsm_stats answers with PostgreSQL's
 *		own JSON parser (common/jsonapi.h), without building a tree.
 *
 * Why a second JSON library beside jansson (lsm_json.c decodes every other
 * answer with it): jansson builds the whole document tree before anything
 * can be checked, and for a large stats answer that tree was measured at
 * about 14 times the body in memory (bench/results.md, goal 5b: 10,000
 * buckets and 100,000 generations, a 6.1 MiB body, 13.9x with jansson's
 * tree) against a bound of 4 times.  Filling the result structs as the
 * parser walks the body measured 2.50x.  PostgreSQL's parser is already in
 * every backend, so this adds no dependency; the other answers are small,
 * and jansson's tree costs them nothing that matters.
 *
 * pg_parse_json walks the body once and calls the semantic actions below,
 * which fill the LsmStats structs of lsm_types.h directly.  A small stack
 * of frames (at most LSM_STATS_MAX_FRAMES: root, lsm_stats, buckets, a
 * bucket, memtables, a memtable, indexes) says which known container the
 * parser is in; the value of an unrecognized member is skipped by counting
 * its nesting.  Each object frame keeps a bitmask of the known members seen
 * so far: a known member given twice is refused, a missing one is reported
 * when its object ends.  Duplicate unrecognized members are ignored, like
 * unrecognized members themselves.  Required and optional members follow
 * the SDK's types (rust/lancedb/src/table/lsm_stats.rs): "lsm_stats",
 * "memtables" and a generation's "rows" may be absent or null (the SDK's
 * None: no LSM write path, no memtables, rows unknown); every other known
 * member is required.  "status" is a free string, kept as sent.
 *
 * Two keys have a second spelling, from a pending upstream rename
 * ("table_shards" for "buckets", "sstables" for "generations"): either
 * decodes to the same structs, the first one seen sets the answer's
 * spelling (LsmStats.keys), and the other spelling later in the same
 * answer is refused, naming the field.  Paths in messages use the names
 * the answer used.
 *
 * Nothing here raises an error: bad input makes lsm_json_decode_stats
 * return false with a one-line message naming the offending field by its
 * path, e.g. field "lsm_stats.buckets[2].generations[0].bytes" is missing.
 * In PostgreSQL 15 the semantic actions cannot stop the parser, so after
 * the first problem they ignore the rest of the body while the parser
 * finishes checking the syntax; a syntax error replaces the message, as it
 * takes precedence.  Among well-formed bodies, the first problem in body
 * order is reported; a missing member is reported when its object ends.
 *
 * Before parsing, one pass over the body (lsm_stats_prescan) refuses what
 * the parser would not handle well: nesting deeper than
 * LSM_STATS_MAX_DEPTH (pg_parse_json is recursive; in the backend it calls
 * check_stack_depth, which raises an error), invalid UTF-8 (the frontend
 * parser does not check it), and "\u0000" in an object key.  "\u0000" in a
 * value, which the parser refuses outright, is allowed so that the field
 * holding it can be named ("contains a NUL character") or, in an
 * unrecognized member, ignored: the body is then parsed from a copy in
 * which those escapes are replaced by "\u0020", and the string members of
 * interest are checked against the original bytes.  The copy has the
 * body's length, so an offset in one is the same offset in the other.
 *
 * Numbers: a member must be a JSON integer in 0 .. UINT64_MAX ("-0" is 0);
 * negative numbers, fractions and exponents are refused, and so is a larger
 * integer ("is out of range").  Numbers of unrecognized members are not
 * looked at.
 *
 * Results are palloc'd in CurrentMemoryContext, each array at its exact
 * size.  After a failure, whatever was allocated before it is left there
 * for the caller's context reset to release; the parser's own memory and
 * the scratch arrays are always freed before return.  Only palloc, repalloc
 * and pfree are called besides the parser, so the same object code links
 * into the standalone harness of fuzz/ (with libpgcommon's jsonapi).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"

#include "protocol/lsm_json.h"
#include "pg_compat.h"

/* Deepest nesting of arrays and objects accepted (the protocol uses 6). */
#define LSM_STATS_MAX_DEPTH 64

/* Known containers nest at most this deep (root .. indexes). */
#define LSM_STATS_MAX_FRAMES 8

/* Refuse result arrays larger than PostgreSQL's MaxAllocSize (1 GB - 1). */
#define LSM_STATS_MAX_ALLOC ((size_t) 0x3fffffff)

/* What the next value must be, from the member or array holding it. */
typedef enum LsmStatsValue
{
	LSV_UNKNOWN,				/* an unrecognized member: skipped */
	LSV_U64,
	LSV_ROWS,					/* a generation's rows: integer or null */
	LSV_BOOL,
	LSV_SHARD_ID,
	LSV_STATUS,
	LSV_STATS,					/* "lsm_stats": object or null */
	LSV_BUCKETS,
	LSV_GENERATIONS,
	LSV_MEMTABLES,
	LSV_INDEXES,
	LSV_BUCKET,					/* array elements */
	LSV_GENERATION,
	LSV_MEMTABLE,
	LSV_INDEX
} LsmStatsValue;

/* The kinds of known containers. */
typedef enum LsmStatsKind
{
	LSK_ROOT,
	LSK_STATS,
	LSK_BUCKET,
	LSK_GENERATION,
	LSK_MEMTABLE,
	LSK_ARRAY					/* buckets, generations, memtables, indexes */
} LsmStatsKind;

/*
 * A known member of an object: its name, its value and where it goes, and
 * the name it has after the pending upstream rename (NULL: not renamed).
 */
typedef struct LsmStatsField
{
	const char *name;
	LsmStatsValue value;
	size_t		offset;			/* of a uint64_t or bool in the object */
	const char *renamed;
} LsmStatsField;

/*
 * The known members of each kind of object, in the order in which missing
 * ones are reported (that of the former tree decoder).
 */
static const LsmStatsField lsm_stats_root_fields[] = {
	{"lsm_stats", LSV_STATS, 0, NULL}
};
static const LsmStatsField lsm_stats_stats_fields[] = {
	{"buckets", LSV_BUCKETS, 0, "table_shards"}
};
static const LsmStatsField lsm_stats_bucket_fields[] = {
	{"shard_id", LSV_SHARD_ID, 0, NULL},
	{"status", LSV_STATUS, 0, NULL},
	{"writer_epoch", LSV_U64, offsetof(LsmBucket, writer_epoch), NULL},
	{"manifest_version", LSV_U64, offsetof(LsmBucket, manifest_version), NULL},
	{"current_generation", LSV_U64, offsetof(LsmBucket, current_generation), NULL},
	{"replay_after_wal_entry_position", LSV_U64,
	offsetof(LsmBucket, replay_after_wal_entry_position), NULL},
	{"wal_entry_position_last_seen", LSV_U64,
	offsetof(LsmBucket, wal_entry_position_last_seen), NULL},
	{"generations", LSV_GENERATIONS, 0, "sstables"},
	{"compacting", LSV_BOOL, offsetof(LsmBucket, compacting), NULL},
	{"memtables", LSV_MEMTABLES, 0, NULL}
};
static const LsmStatsField lsm_stats_generation_fields[] = {
	{"generation", LSV_U64, offsetof(LsmGeneration, generation), NULL},
	{"bytes", LSV_U64, offsetof(LsmGeneration, bytes), NULL},
	{"rows", LSV_ROWS, offsetof(LsmGeneration, rows), NULL}
};
static const LsmStatsField lsm_stats_memtable_fields[] = {
	{"generation", LSV_U64, offsetof(LsmMemtable, generation), NULL},
	{"rows", LSV_U64, offsetof(LsmMemtable, rows), NULL},
	{"bytes", LSV_U64, offsetof(LsmMemtable, bytes), NULL},
	{"batches", LSV_U64, offsetof(LsmMemtable, batches), NULL},
	{"indexes", LSV_INDEXES, 0, NULL}
};

/* Indexes of members in the tables above, for the rules that need them. */
#define LSM_STATS_ROOT_STATS 0
#define LSM_STATS_BUCKET_MEMTABLES 9
#define LSM_STATS_GENERATION_ROWS 2

/*
 * The optional members of each kind of object (a bit per index above), as
 * the SDK's types have them (rust/lancedb/src/table/lsm_stats.rs:
 * #[serde(default)] on lsm_stats, memtables and rows): absent or null, they
 * take the SDK's default.  Every other known member is required.
 */
static const uint32_t lsm_stats_optional[] = {
	[LSK_ROOT] = UINT32_C(1) << LSM_STATS_ROOT_STATS,
	[LSK_STATS] = 0,
	[LSK_BUCKET] = UINT32_C(1) << LSM_STATS_BUCKET_MEMTABLES,
	[LSK_GENERATION] = UINT32_C(1) << LSM_STATS_GENERATION_ROWS,
	[LSK_MEMTABLE] = 0
};

/* The members table of each kind of object, indexed by LsmStatsKind. */
static const struct
{
	const LsmStatsField *fields;
	int			nfields;
}			lsm_stats_tables[] = {
	{lsm_stats_root_fields, lengthof(lsm_stats_root_fields)},
	{lsm_stats_stats_fields, lengthof(lsm_stats_stats_fields)},
	{lsm_stats_bucket_fields, lengthof(lsm_stats_bucket_fields)},
	{lsm_stats_generation_fields, lengthof(lsm_stats_generation_fields)},
	{lsm_stats_memtable_fields, lengthof(lsm_stats_memtable_fields)}
};

/* A growable array of elements of one size. */
typedef struct LsmStatsArray
{
	char	   *data;
	int			count;
	int			cap;
} LsmStatsArray;

/* One known container the parser is in. */
typedef struct LsmStatsFrame
{
	LsmStatsKind kind;
	const char *name;			/* member holding it; NULL: array element */
	void	   *obj;			/* the struct filled (arrays: the owner) */
	uint32_t	seen;			/* objects: bit i = fields[i] seen */
	LsmStatsValue elem;			/* arrays: what the elements are */
	int			index;			/* arrays: current element, -1 before */
} LsmStatsFrame;

/* The state of one decode, the semstate of the semantic actions. */
typedef struct LsmStatsParse
{
	JsonLexContext *lex;
	const char *body;			/* the caller's body */
	const char *input;			/* what is parsed: body or its copy */
	bool		nul_values;		/* input is a copy without "\u0000" */
	size_t		root_end;		/* offset after the root's closing bracket */
	bool		with_rows;
	bool		failed;
	char	   *errbuf;
	size_t		errlen;
	int			skip;			/* > 0: nesting inside a skipped value */
	int			depth;
	LsmStatsFrame frames[LSM_STATS_MAX_FRAMES];
	LsmStatsValue pending;		/* what the next value must be */
	const char *pending_name;	/* its member name; NULL: array element */
	size_t		pending_offset; /* LSV_U64, LSV_BOOL: where it goes */
	const char *value_start;	/* first byte of the next value in input */
	const char *keys_first;		/* the renamed key that set result.keys */
	LsmStats	result;
	LsmStatsArray buckets;		/* result.buckets while being filled */
	LsmStatsArray generations;	/* scratch of the current bucket */
	LsmStatsArray memtables;	/* scratch of the current bucket */
	LsmStatsArray indexes;		/* scratch of the current memtable */
} LsmStatsParse;

static size_t lsm_stats_path(const LsmStatsParse *st, char *buf, size_t len);
static void lsm_stats_fail(LsmStatsParse *st, const char *field,
						   const char *what);
static void lsm_stats_fail_type(LsmStatsParse *st);
static int	lsm_stats_utf8_len(const unsigned char *s, size_t avail);
static void lsm_stats_invalid_at(LsmStatsParse *st, const char *body,
								 size_t at, const char *what);
static bool lsm_stats_prescan_fail(LsmStatsParse *st, const char *body,
								   size_t at, const char *what);
static bool lsm_stats_prescan(LsmStatsParse *st, const char *body,
							  size_t len);
static bool lsm_stats_string_has_nul(const char *s, const char *end);
static char *lsm_stats_copy_without_nul(const char *body, size_t len);
static void lsm_stats_syntax_error(LsmStatsParse *st,
								   JsonParseErrorType error);
static void *lsm_stats_array_add(LsmStatsParse *st, LsmStatsArray *array,
								 size_t elemsize);
static void *lsm_stats_array_copy(LsmStatsArray *array, size_t elemsize);
static void lsm_stats_push(LsmStatsParse *st, LsmStatsKind kind, void *obj,
						   LsmStatsValue elem);
static bool lsm_stats_check_missing(LsmStatsParse *st, uint32_t skip_mask);
static void lsm_stats_u64(LsmStatsParse *st, const char *token);
static bool lsm_stats_string(LsmStatsParse *st);
static void lsm_stats_string_value(LsmStatsParse *st, char *token);
static JsonParseErrorType lsm_stats_object_start(void *state);
static JsonParseErrorType lsm_stats_object_end(void *state);
static JsonParseErrorType lsm_stats_array_start(void *state);
static JsonParseErrorType lsm_stats_array_end(void *state);
static JsonParseErrorType lsm_stats_field_start(void *state, char *fname,
												bool isnull);
static JsonParseErrorType lsm_stats_element_start(void *state, bool isnull);
static JsonParseErrorType lsm_stats_scalar(void *state, char *token,
										   JsonTokenType tokentype);

/*
 * lsm_stats_path: render into buf the path of the innermost frame, e.g.
 * "lsm_stats.buckets[2].generations"; returns its length (truncated to fit
 * buf, always NUL-terminated; len > 0).
 */
static size_t
lsm_stats_path(const LsmStatsParse *st, char *buf, size_t len)
{
	size_t		used = 0;
	int			i;

	buf[0] = '\0';
	for (i = 1; i < st->depth && used < len; i++)
	{
		const LsmStatsFrame *f = &st->frames[i];
		int			n;

		if (f->name != NULL)
			n = snprintf(buf + used, len - used, "%s%s",
						 used > 0 ? "." : "", f->name);
		else
			n = snprintf(buf + used, len - used, "[%d]",
						 st->frames[i - 1].index);
		used += (n > 0 ? (size_t) n : 0);
	}
	return Min(used, len - 1);
}

/*
 * lsm_stats_fail: record the first failure: 'field "<path>.<field>" <what>';
 * with field NULL, 'field "<path>[<index>]" <what>' for the current element of
 * the innermost frame (an array); with field "", 'field "<path>" <what>' for
 * the innermost frame itself.  Later failures are ignored.
 */
static void
lsm_stats_fail(LsmStatsParse *st, const char *field, const char *what)
{
	char		where[LSM_JSON_ERRBUF_SIZE];
	size_t		used;

	if (st->failed)
		return;
	st->failed = true;
	used = lsm_stats_path(st, where, sizeof(where));
	if (field != NULL && field[0] != '\0')
		snprintf(where + used, sizeof(where) - used, "%s%s",
				 used > 0 ? "." : "", field);
	else if (field != NULL)
		;						/* the innermost frame itself */
	else
		snprintf(where + used, sizeof(where) - used, "[%d]",
				 st->frames[st->depth - 1].index);
	if (st->errlen > 0)
		snprintf(st->errbuf, st->errlen, "field \"%s\" %s", where, what);
}

/*
 * lsm_stats_fail_type: fail because the pending value has the wrong JSON type.
 */
static void
lsm_stats_fail_type(LsmStatsParse *st)
{
	const char *what;

	switch (st->pending)
	{
		case LSV_U64:
			what = "is not an unsigned 64-bit integer";
			break;
		case LSV_ROWS:
			what = "is neither an unsigned 64-bit integer nor null";
			break;
		case LSV_BOOL:
			what = "is not a boolean";
			break;
		case LSV_SHARD_ID:
		case LSV_STATUS:
		case LSV_INDEX:
			what = "is not a string";
			break;
		case LSV_STATS:
			what = "is neither an object nor null";
			break;
		case LSV_MEMTABLES:
			what = "is neither an array nor null";
			break;
		case LSV_BUCKET:
		case LSV_GENERATION:
		case LSV_MEMTABLE:
			what = "is not an object";
			break;
		default:
			what = "is not an array";
			break;
	}
	lsm_stats_fail(st, st->pending_name, what);
}

/*
 * lsm_stats_utf8_len: the length of the valid UTF-8 sequence at s (avail > 0
 * bytes left), or 0 when it is not one (overlong forms, surrogates and code
 * points above U+10FFFF are invalid).
 */
static int
lsm_stats_utf8_len(const unsigned char *s, size_t avail)
{
	unsigned char lo = 0x80,
				hi = 0xBF;
	int			n,
				i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		n = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xE0)
		lo = 0xA0;
	else if (s[0] == 0xED)
		hi = 0x9F;
	else if (s[0] == 0xF0)
		lo = 0x90;
	else if (s[0] == 0xF4)
		hi = 0x8F;
	if (avail < (size_t) n || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return n;
}

/*
 * lsm_stats_invalid_at: record 'response body is not valid JSON: <what> at
 * line L column C' for byte offset at of body (lines count from 1 after
 * each newline, columns from 1 in bytes).  Like every message of this
 * decoder, it quotes no byte of the body: a server or gateway may echo the
 * API key into it, and a quoted window could start or end inside the key,
 * where no redaction can recognise it.
 */
static void
lsm_stats_invalid_at(LsmStatsParse *st, const char *body, size_t at,
					 const char *what)
{
	size_t		line_start = 0;
	int			line = 1;
	size_t		i;

	for (i = 0; i < at; i++)
		if (body[i] == '\n')
		{
			line++;
			line_start = i + 1;
		}
	st->failed = true;
	if (st->errlen > 0)
		snprintf(st->errbuf, st->errlen,
				 "response body is not valid JSON: %s at line %d column %zu",
				 what, line, at - line_start + 1);
}

/*
 * lsm_stats_prescan_fail: lsm_stats_invalid_at, then return false.
 */
static bool
lsm_stats_prescan_fail(LsmStatsParse *st, const char *body, size_t at,
					   const char *what)
{
	lsm_stats_invalid_at(st, body, at, what);
	return false;
}

/*
 * lsm_stats_prescan_string: for lsm_stats_prescan, scan the string token
 * whose opening quote is at body[*pos]: a "\u0000" fails it when it is an
 * object key (key), else sets st->nul_values; invalid UTF-8 fails it.
 * Leaves *pos on the closing quote (or at len).  Returns false with the
 * error set.
 */
static bool
lsm_stats_prescan_string(LsmStatsParse *st, const char *body, size_t len,
						 size_t *pos, bool key)
{
	size_t		start = *pos;
	size_t		i;

	for (i = start + 1; i < len && body[i] != '"'; i++)
	{
		int			n;

		if (body[i] == '\\')
		{
			if (len - i >= 6 && memcmp(body + i + 1, "u0000", 5) == 0)
			{
				if (key)
					return lsm_stats_prescan_fail(st, body, start,
												  "NUL byte in object key not supported");
				st->nul_values = true;
			}
			i++;		/* the escaped character */
		}
		else if ((unsigned char) body[i] >= 0x80)
		{
			n = lsm_stats_utf8_len((const unsigned char *) body + i,
								   len - i);
			if (n == 0)
				return lsm_stats_prescan_fail(st, body, i,
											  "invalid UTF-8");
			i += n - 1;
		}
	}
	*pos = i;
	return true;
}

/*
 * lsm_stats_prescan: check what the parser would not: the body is not
 * blank, not larger than the parser's int length, nests at most
 * LSM_STATS_MAX_DEPTH deep, is valid UTF-8 and has no "\u0000" in an object
 * key.  Sets st->nul_values when a value holds "\u0000", and st->root_end
 * after the first bracket closing the outermost level.  Syntax is otherwise
 * left to the parser: brackets are only counted, outside strings.  Returns
 * false with the error set.
 *
 * Why a pass of its own: none of these can be left to pg_parse_json on
 * PostgreSQL 15 to 19.  Its recursive descent calls check_stack_depth in
 * the backend, which raises an error where this decoder must return a
 * message (and checks nothing in the fuzz/ harness); on PostgreSQL 15 the
 * semantic actions return void and cannot stop it before it is too deep.
 * The frontend parser does not check UTF-8.  A "\u0000" fails the whole parse before any action sees its
 * member (next comment), so it must be found beforehand.
 */
static bool
lsm_stats_prescan(LsmStatsParse *st, const char *body, size_t len)
{
	uint64_t	objects = 0;	/* bit d: the container at depth d+1 is {} */
	int			depth = 0;
	bool		key_next = false;	/* a string here is an object key */
	bool		blank = true;
	size_t		i;

	if (len > (size_t) INT_MAX)
	{
		st->failed = true;
		if (st->errlen > 0)
			snprintf(st->errbuf, st->errlen, "response body is too large");
		return false;
	}
	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) body[i];

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		blank = false;
		if (c == '{' || c == '[')
		{
			if (depth == LSM_STATS_MAX_DEPTH)
				return lsm_stats_prescan_fail(st, body, i,
											  "maximum parsing depth reached");
			if (c == '{')
				objects |= UINT64_C(1) << depth;
			else
				objects &= ~(UINT64_C(1) << depth);
			depth++;
			key_next = (c == '{');
		}
		else if (c == '}' || c == ']')
		{
			depth = Max(depth - 1, 0);
			if (depth == 0 && st->root_end == 0)
				st->root_end = i + 1;
			key_next = false;
		}
		else if (c == ',' || c == ':')
			key_next = (c == ',' && depth > 0 &&
						(objects & (UINT64_C(1) << (depth - 1))) != 0);
		else if (c == '"')
		{
			if (!lsm_stats_prescan_string(st, body, len, &i, key_next))
				return false;
			key_next = false;
		}
		else if (c >= 0x80)
		{
			int			n = lsm_stats_utf8_len((const unsigned char *) body + i,
											   len - i);

			if (n == 0)
				return lsm_stats_prescan_fail(st, body, i, "invalid UTF-8");
			i += n - 1;
		}
	}
	if (blank)
	{
		st->failed = true;
		if (st->errlen > 0)
			snprintf(st->errbuf, st->errlen, "response body is empty");
		return false;
	}
	return true;
}

/*
 * lsm_stats_string_has_nul: does the JSON string token starting at s (its
 * opening quote; end bounds the input) contain the escape "\u0000"?
 */
static bool
lsm_stats_string_has_nul(const char *s, const char *end)
{
	for (s++; s < end && *s != '"'; s++)
	{
		if (*s != '\\')
			continue;
		if (end - s >= 6 && memcmp(s + 1, "u0000", 5) == 0)
			return true;
		s++;					/* the escaped character */
	}
	return false;
}

/*
 * lsm_stats_copy_without_nul: a palloc'd copy of body (len bytes) in which
 * every escape "\u0000" is replaced by "\u0020", which the parser accepts.
 * Escapes are paired left to right, so "\\u0000" (an escaped backslash) is
 * left alone.  Same length as body: offsets need no mapping.
 *
 * Why a copy: once the semantic actions take token values, pg_parse_json
 * de-escapes every string and refuses "\u0000" while doing so
 * (JSON_UNICODE_CODE_POINT_ZERO), failing the whole body; it has no way to
 * skip de-escaping one member.  Parsing the body as it is would turn a NUL
 * in an unrecognized member into a failure, and one in a known member into
 * a message that cannot name the field.
 */
static char *
lsm_stats_copy_without_nul(const char *body, size_t len)
{
	char	   *copy = palloc(len);
	size_t		i;

	memcpy(copy, body, len);
	for (i = 0; i < len; i++)
	{
		if (copy[i] != '\\')
			continue;
		if (len - i >= 6 && memcmp(copy + i + 1, "u0000", 5) == 0)
			copy[i + 4] = '2';
		i++;
	}
	return copy;
}

/*
 * lsm_stats_syntax_error: record 'response body is not valid JSON: <reason>
 * at line L column C' for the parser's error, replacing any earlier failure
 * (a syntax error takes precedence).  The wording and the column (that of
 * the token's last byte) follow those of jansson, the former decoder; the
 * token itself is not quoted (lsm_stats_invalid_at says why).
 */
static void
lsm_stats_syntax_error(LsmStatsParse *st, JsonParseErrorType error)
{
	JsonLexContext *lex = st->lex;
	const char *start = lex->token_start;
	const char *end = lex->token_terminator;
	const char *input_end = st->input + lex->input_length;
	const char *reason;

	switch (error)
	{
		case JSON_ESCAPING_INVALID:
		case JSON_UNICODE_ESCAPE_FORMAT:
			reason = "invalid escape";
			break;
		case JSON_ESCAPING_REQUIRED:
			reason = "control character in a string";
			break;
		case JSON_EXPECTED_ARRAY_FIRST:
		case JSON_EXPECTED_ARRAY_NEXT:
			reason = "']' expected";
			break;
		case JSON_EXPECTED_COLON:
			reason = "':' expected";
			break;
		case JSON_EXPECTED_END:
			reason = "end of file expected";
			break;
		case JSON_EXPECTED_MORE:
			reason = "premature end of input";
			break;
		case JSON_EXPECTED_OBJECT_FIRST:
		case JSON_EXPECTED_OBJECT_NEXT:
		case JSON_EXPECTED_STRING:
			reason = "string or '}' expected";
			break;
		case JSON_UNICODE_HIGH_SURROGATE:
		case JSON_UNICODE_LOW_SURROGATE:
			reason = "invalid unicode surrogate pair";
			break;
		default:
			reason = "invalid token";
			break;
	}
	/* the lexer, not the parser, finds a bad token: say what was expected */
	if (error == JSON_INVALID_TOKEN && start != NULL)
	{
		if (end >= input_end && *start == '"')
			reason = "premature end of input";
		else if (start == st->value_start)
			reason = "'[' or '{' expected";
		else if (st->root_end > 0 && start >= st->input + st->root_end)
			reason = "end of file expected";
	}
	st->failed = true;
	if (st->errlen > 0)
		snprintf(st->errbuf, st->errlen,
				 "response body is not valid JSON: %s at line %d column %d",
				 reason, lex->line_number,
				 (int) (end != NULL ? Max(end - lex->line_start, 1) : 1));
}

/*
 * lsm_stats_array_add: append one zeroed element of elemsize bytes to array
 * (doubling its capacity when full) and return it; NULL with the error set
 * when the array would exceed MaxAllocSize or INT_MAX elements (palloc would
 * raise).  The innermost frame is the JSON array being read.
 */
static void *
lsm_stats_array_add(LsmStatsParse *st, LsmStatsArray *array, size_t elemsize)
{
	char	   *elem;

	if (array->count == array->cap)
	{
		int			cap = array->cap == 0 ? 4 : array->cap * 2;

		if (array->cap > INT_MAX / 2 ||
			(size_t) cap * elemsize > LSM_STATS_MAX_ALLOC)
		{
			lsm_stats_fail(st, "", "has too many elements");
			return NULL;
		}
		array->data = array->data == NULL ? palloc(cap * elemsize) :
			repalloc(array->data, cap * elemsize);
		array->cap = cap;
	}
	elem = array->data + (size_t) array->count++ * elemsize;
	memset(elem, 0, elemsize);
	return elem;
}

/*
 * lsm_stats_array_copy: A palloc'd copy of the elements of array at their
 * exact size (NULL when empty); the array is emptied for reuse.
 */
static void *
lsm_stats_array_copy(LsmStatsArray *array, size_t elemsize)
{
	void	   *copy = NULL;

	if (array->count > 0)
	{
		copy = palloc((size_t) array->count * elemsize);
		memcpy(copy, array->data, (size_t) array->count * elemsize);
	}
	array->count = 0;
	return copy;
}

/*
 * lsm_stats_push: enter a known container of the given kind, held by the
 * pending member (or array element).  obj is the struct it fills (for an
 * array, the struct owning it); elem says what an array's elements must be.
 */
static void
lsm_stats_push(LsmStatsParse *st, LsmStatsKind kind, void *obj,
			   LsmStatsValue elem)
{
	LsmStatsFrame *f = &st->frames[st->depth++];

	Assert(st->depth <= LSM_STATS_MAX_FRAMES);
	f->kind = kind;
	f->name = st->pending_name;
	f->obj = obj;
	f->seen = 0;
	f->elem = elem;
	f->index = -1;
}

/*
 * lsm_stats_check_missing: at the end of an object: fail for the first known
 * member (in table order) that was not seen, except those in skip_mask
 * (optional members). Returns false when one is missing.
 */
static bool
lsm_stats_check_missing(LsmStatsParse *st, uint32_t skip_mask)
{
	const LsmStatsFrame *f = &st->frames[st->depth - 1];
	int			i;

	for (i = 0; i < lsm_stats_tables[f->kind].nfields; i++)
		if ((f->seen & (UINT32_C(1) << i)) == 0 &&
			(skip_mask & (UINT32_C(1) << i)) == 0)
		{
			const LsmStatsField *field = &lsm_stats_tables[f->kind].fields[i];

			/* named as the rest of the answer spells it */
			lsm_stats_fail(st, st->result.keys == LSM_KEYS_SSTABLE &&
						   field->renamed != NULL ?
						   field->renamed : field->name,
						   "is missing");
			return false;
		}
	return true;
}

/*
 * lsm_stats_u64: decode the number token (syntax already checked by the
 * parser) of the pending LSV_U64 member into its place in the innermost
 * object.
 */
static void
lsm_stats_u64(LsmStatsParse *st, const char *token)
{
	const char *p = token;
	bool		negative = (*p == '-');
	uint64_t	v = 0;

	if (negative)
		p++;
	for (; *p >= '0' && *p <= '9'; p++)
	{
		unsigned	digit = *p - '0';

		if (v > (UINT64_MAX - digit) / 10)
		{
			lsm_stats_fail(st, st->pending_name,
						   negative ? "is not an unsigned 64-bit integer" :
						   "is out of range for an unsigned 64-bit integer");
			return;
		}
		v = v * 10 + digit;
	}
	if (*p != '\0' || (negative && v != 0))
	{
		lsm_stats_fail(st, st->pending_name,
					   "is not an unsigned 64-bit integer");
		return;
	}
	*(uint64_t *) ((char *) st->frames[st->depth - 1].obj +
				   st->pending_offset) = v;
}

/*
 * lsm_stats_string: check the pending string value: when the body held
 * "\u0000", make sure this value did not (its raw text is at st->value_start
 * in the parsed copy).  Returns false with the error set.
 */
static bool
lsm_stats_string(LsmStatsParse *st)
{
	if (st->nul_values)
	{
		const char *raw = st->body + (st->value_start - st->input);
		const char *end = st->body + st->lex->input_length;

		if (lsm_stats_string_has_nul(raw, end))
		{
			lsm_stats_fail(st, st->pending_name, "contains a NUL character");
			return false;
		}
	}
	return true;
}

/*
 * lsm_stats_string_value: store the pending string value token (a palloc'd,
 * de-escaped copy made by the parser, kept or freed here): shard_id, status or
 * an index name.
 */
static void
lsm_stats_string_value(LsmStatsParse *st, char *token)
{
	LsmStatsFrame *f = &st->frames[st->depth - 1];

	if (!lsm_stats_string(st))
	{
		pfree(token);
		return;
	}
	if (st->pending == LSV_INDEX)
	{
		char	  **slot = lsm_stats_array_add(st, &st->indexes,
											   sizeof(char *));

		if (slot != NULL)
			*slot = token;
		else
			pfree(token);
	}
	else if (st->pending == LSV_SHARD_ID && token[0] == '\0')
	{
		lsm_stats_fail(st, st->pending_name, "is empty");
		pfree(token);
	}
	else if (st->pending == LSV_SHARD_ID)
		((LsmBucket *) f->obj)->shard_id = token;
	else
		((LsmBucket *) f->obj)->status = token;	/* any spelling, as sent */
}

/*
 * lsm_stats_container_ignored: whether an object or array that starts now
 * is of no interest: the parse has failed, or it lies inside (or is) an
 * unrecognized member, in which case it is counted so that its end is
 * skipped too.
 */
static bool
lsm_stats_container_ignored(LsmStatsParse *st)
{
	if (st->failed)
		return true;
	if (st->skip > 0 || (st->depth > 0 && st->pending == LSV_UNKNOWN))
	{
		st->skip++;
		return true;
	}
	return false;
}

/*
 * lsm_stats_object_start: semantic action: an object starts.  Enters the root,
 * "lsm_stats" or an element of buckets, generations or memtables; skips an
 * unrecognized member's object; fails for any other member.
 */
static JsonParseErrorType
lsm_stats_object_start(void *state)
{
	LsmStatsParse *st = state;
	void	   *obj;

	if (lsm_stats_container_ignored(st))
		return JSON_SUCCESS;
	if (st->depth == 0)
	{
		st->pending_name = NULL;
		lsm_stats_push(st, LSK_ROOT, NULL, LSV_UNKNOWN);
		return JSON_SUCCESS;
	}
	switch (st->pending)
	{
		case LSV_STATS:
			lsm_stats_push(st, LSK_STATS, &st->result, LSV_UNKNOWN);
			return JSON_SUCCESS;
		case LSV_BUCKET:
			obj = lsm_stats_array_add(st, &st->buckets, sizeof(LsmBucket));
			if (obj != NULL)
				lsm_stats_push(st, LSK_BUCKET, obj, LSV_UNKNOWN);
			return JSON_SUCCESS;
		case LSV_GENERATION:
			obj = lsm_stats_array_add(st, &st->generations,
									  sizeof(LsmGeneration));
			if (obj != NULL)
				lsm_stats_push(st, LSK_GENERATION, obj, LSV_UNKNOWN);
			return JSON_SUCCESS;
		case LSV_MEMTABLE:
			obj = lsm_stats_array_add(st, &st->memtables,
									  sizeof(LsmMemtable));
			if (obj != NULL)
				lsm_stats_push(st, LSK_MEMTABLE, obj, LSV_UNKNOWN);
			return JSON_SUCCESS;
		default:
			lsm_stats_fail_type(st);
			return JSON_SUCCESS;
	}
}

/*
 * lsm_stats_object_end: semantic action: an object ends.  Reports a missing
 * member of a known object and leaves it.
 */
static JsonParseErrorType
lsm_stats_object_end(void *state)
{
	LsmStatsParse *st = state;
	LsmStatsFrame *f;

	if (st->failed)
		return JSON_SUCCESS;
	if (st->skip > 0)
	{
		st->skip--;
		return JSON_SUCCESS;
	}
	f = &st->frames[st->depth - 1];
	if (!lsm_stats_check_missing(st, lsm_stats_optional[f->kind]))
		return JSON_SUCCESS;
	if (f->kind == LSK_STATS)
		st->result.enabled = true;
	st->depth--;
	return JSON_SUCCESS;
}

/*
 * lsm_stats_array_start: semantic action: an array starts.  Enters buckets,
 * generations, memtables or indexes; skips an unrecognized member's array;
 * fails for a root array or any other member.
 */
static JsonParseErrorType
lsm_stats_array_start(void *state)
{
	LsmStatsParse *st = state;
	LsmStatsFrame *f;

	if (lsm_stats_container_ignored(st))
		return JSON_SUCCESS;
	if (st->depth == 0)
	{
		st->failed = true;
		if (st->errlen > 0)
			snprintf(st->errbuf, st->errlen,
					 "response body is not a JSON object");
		return JSON_SUCCESS;
	}
	f = &st->frames[st->depth - 1];
	switch (st->pending)
	{
		case LSV_BUCKETS:
			lsm_stats_push(st, LSK_ARRAY, f->obj, LSV_BUCKET);
			return JSON_SUCCESS;
		case LSV_GENERATIONS:
			lsm_stats_push(st, LSK_ARRAY, f->obj, LSV_GENERATION);
			return JSON_SUCCESS;
		case LSV_MEMTABLES:
			lsm_stats_push(st, LSK_ARRAY, f->obj, LSV_MEMTABLE);
			return JSON_SUCCESS;
		case LSV_INDEXES:
			lsm_stats_push(st, LSK_ARRAY, f->obj, LSV_INDEX);
			return JSON_SUCCESS;
		default:
			lsm_stats_fail_type(st);
			return JSON_SUCCESS;
	}
}

/*
 * lsm_stats_array_end: semantic action: an array ends.  Hands the elements of
 * a known array to the struct owning it, at their exact size, and leaves it.
 */
static JsonParseErrorType
lsm_stats_array_end(void *state)
{
	LsmStatsParse *st = state;
	LsmStatsFrame *f;

	if (st->failed)
		return JSON_SUCCESS;
	if (st->skip > 0)
	{
		st->skip--;
		return JSON_SUCCESS;
	}
	f = &st->frames[--st->depth];
	if (f->elem == LSV_BUCKET)
	{
		st->result.nbuckets = st->buckets.count;
		st->result.buckets = st->buckets.count == 0 ? NULL :
			repalloc(st->buckets.data, st->buckets.count * sizeof(LsmBucket));
		if (st->buckets.count == 0 && st->buckets.data != NULL)
			pfree(st->buckets.data);
		st->buckets.data = NULL;
	}
	else if (f->elem == LSV_GENERATION)
	{
		LsmBucket  *b = f->obj;

		b->ngenerations = st->generations.count;
		b->generations = lsm_stats_array_copy(&st->generations,
											  sizeof(LsmGeneration));
	}
	else if (f->elem == LSV_MEMTABLE)
	{
		LsmBucket  *b = f->obj;

		b->nmemtables = st->memtables.count;
		b->memtables = lsm_stats_array_copy(&st->memtables,
											sizeof(LsmMemtable));
		b->has_memtables = true;
	}
	else
	{
		LsmMemtable *m = f->obj;

		m->nindexes = st->indexes.count;
		m->indexes = lsm_stats_array_copy(&st->indexes, sizeof(char *));
	}
	return JSON_SUCCESS;
}

/*
 * lsm_stats_spelling: A renamed member spelled as name (the old spelling
 * unless renamed): the first one sets the answer's spelling (result.keys); a
 * later one spelled the other way fails, naming it.  Returns false on that
 * failure.
 */
static bool
lsm_stats_spelling(LsmStatsParse *st, const char *name, bool renamed)
{
	LsmKeySpelling keys = renamed ? LSM_KEYS_SSTABLE : LSM_KEYS_GENERATION;
	char		what[LSM_JSON_ERRBUF_SIZE];

	if (st->result.keys == LSM_KEYS_UNSEEN)
	{
		st->result.keys = keys;
		st->keys_first = name;
	}
	if (st->result.keys == keys)
		return true;
	snprintf(what, sizeof(what),
			 "mixes key spellings: the answer used \"%s\" before",
			 st->keys_first);
	lsm_stats_fail(st, name, what);
	return false;
}

/*
 * lsm_stats_field_start: semantic action: a member of an object starts.  Looks
 * fname up among the known members of the innermost object, under either
 * spelling of a renamed one (refusing one seen twice, or a spelling other than
 * the answer's), and sets what its value must be; an unrecognized member's
 * value will be skipped.  fname is palloc'd by the parser and freed here.
 */
static JsonParseErrorType
lsm_stats_field_start(void *state, char *fname, bool isnull)
{
	LsmStatsParse *st = state;
	LsmStatsFrame *f;
	const LsmStatsField *fields;
	int			i;

	(void) isnull;
	if (st->failed || st->skip > 0)
	{
		if (fname != NULL)
			pfree(fname);
		return JSON_SUCCESS;
	}
	f = &st->frames[st->depth - 1];
	fields = lsm_stats_tables[f->kind].fields;
	st->pending = LSV_UNKNOWN;
	st->value_start = st->lex->token_start;
	for (i = 0; fname != NULL && i < lsm_stats_tables[f->kind].nfields; i++)
	{
		bool		renamed = false;

		if (fields[i].name[0] != fname[0] || strcmp(fields[i].name, fname) != 0)
		{
			if (fields[i].renamed == NULL ||
				strcmp(fields[i].renamed, fname) != 0)
				continue;
			renamed = true;
		}
		if (f->kind == LSK_GENERATION && i == LSM_STATS_GENERATION_ROWS &&
			!st->with_rows)
			break;				/* "rows" not asked for: ignored */
		st->pending = fields[i].value;
		st->pending_name = renamed ? fields[i].renamed : fields[i].name;
		st->pending_offset = fields[i].offset;
		if (fields[i].renamed != NULL &&
			!lsm_stats_spelling(st, st->pending_name, renamed))
			break;
		if ((f->seen & (UINT32_C(1) << i)) != 0)
			lsm_stats_fail(st, st->pending_name, "is a duplicate object key");
		f->seen |= UINT32_C(1) << i;
		break;
	}
	if (fname != NULL)
		pfree(fname);
	return JSON_SUCCESS;
}

/*
 * lsm_stats_element_start: semantic action: an array element starts.  In a
 * known array, counts it and sets what it must be.
 */
static JsonParseErrorType
lsm_stats_element_start(void *state, bool isnull)
{
	LsmStatsParse *st = state;
	LsmStatsFrame *f;

	(void) isnull;
	if (st->failed || st->skip > 0)
		return JSON_SUCCESS;
	f = &st->frames[st->depth - 1];
	f->index++;
	st->pending = f->elem;
	st->pending_name = NULL;
	st->value_start = st->lex->token_start;
	return JSON_SUCCESS;
}

/*
 * lsm_stats_scalar: semantic action: a scalar.  Stores the value of a known
 * member or element after checking its type; ignores an unrecognized one;
 * fails for a scalar body.  token is palloc'd by the parser: kept when stored
 * as a string, freed otherwise.
 */
static JsonParseErrorType
lsm_stats_scalar(void *state, char *token, JsonTokenType tokentype)
{
	LsmStatsParse *st = state;
	LsmStatsFrame *f = st->depth > 0 ? &st->frames[st->depth - 1] : NULL;

	if (!st->failed && st->skip == 0 && f == NULL)
		lsm_stats_invalid_at(st, st->input,
							 st->lex->prev_token_terminator - 1 - st->input,
							 "'[' or '{' expected");
	if (st->failed || st->skip > 0 || st->pending == LSV_UNKNOWN)
		;						/* nothing to store */
	else if (tokentype == JSON_TOKEN_STRING &&
			 (st->pending == LSV_SHARD_ID || st->pending == LSV_STATUS ||
			  st->pending == LSV_INDEX))
	{
		lsm_stats_string_value(st, token);
		return JSON_SUCCESS;
	}
	else if (tokentype == JSON_TOKEN_NUMBER && st->pending == LSV_U64)
		lsm_stats_u64(st, token);
	else if (tokentype == JSON_TOKEN_NUMBER && st->pending == LSV_ROWS)
	{
		lsm_stats_u64(st, token);
		((LsmGeneration *) f->obj)->has_rows = !st->failed;
	}
	else if ((tokentype == JSON_TOKEN_TRUE || tokentype == JSON_TOKEN_FALSE) &&
			 st->pending == LSV_BOOL)
		*(bool *) ((char *) f->obj + st->pending_offset) =
			(tokentype == JSON_TOKEN_TRUE);
	else if (!(tokentype == JSON_TOKEN_NULL &&
			   (st->pending == LSV_STATS || st->pending == LSV_MEMTABLES ||
				st->pending == LSV_ROWS)))
		lsm_stats_fail_type(st);	/* null: the SDK's default (None) */
	if (token != NULL)
		pfree(token);
	return JSON_SUCCESS;
}

/*
 * lsm_json_decode_stats: decode a get_lsm_stats answer (see lsm_json.h).  with_rows says whether
 * the request asked for generation rows.  On success *out holds the palloc'd
 * result; on failure *out is zeroed but for out->keys, the spelling of the
 * renamed keys seen before the failure, and errbuf (errlen > 0) holds the
 * reason.
 */
bool
lsm_json_decode_stats(const char *body, size_t len, bool with_rows,
					  LsmStats *out, char *errbuf, size_t errlen)
{
	LsmStatsParse st;
	JsonSemAction sem;
	JsonParseErrorType error;
	char	   *copy = NULL;

	memset(out, 0, sizeof(*out));
	memset(&st, 0, sizeof(st));
	st.with_rows = with_rows;
	st.errbuf = errbuf;
	st.errlen = errlen;
	st.body = st.input = body;
	if (errlen > 0)
		errbuf[0] = '\0';
	if (body == NULL || !lsm_stats_prescan(&st, body, len))
	{
		if (body == NULL && errlen > 0)
			snprintf(errbuf, errlen, "response body is empty");
		return false;
	}
	if (st.nul_values)
		st.input = copy = lsm_stats_copy_without_nul(body, len);
	/* where the root value starts (to name a bad word) */
	st.value_start = st.input;
	while (st.value_start < st.input + len &&
		   (*st.value_start == ' ' || *st.value_start == '\t' ||
			*st.value_start == '\r' || *st.value_start == '\n'))
		st.value_start++;

	memset(&sem, 0, sizeof(sem));
	sem.semstate = &st;
	sem.object_start = lsm_stats_object_start;
	sem.object_end = lsm_stats_object_end;
	sem.array_start = lsm_stats_array_start;
	sem.array_end = lsm_stats_array_end;
	sem.object_field_start = lsm_stats_field_start;
	sem.array_element_start = lsm_stats_element_start;
	sem.scalar = lsm_stats_scalar;

	st.lex = makeJsonLexContextCstringLen(NULL, st.input, len, PG_UTF8, true);
	error = pg_parse_json(st.lex, &sem);
	if (error != JSON_SUCCESS)
		lsm_stats_syntax_error(&st, error);

	freeJsonLexContext(st.lex);
	if (copy != NULL)
		pfree(copy);
	if (st.buckets.data != NULL)
		pfree(st.buckets.data);
	if (st.generations.data != NULL)
		pfree(st.generations.data);
	if (st.memtables.data != NULL)
		pfree(st.memtables.data);
	if (st.indexes.data != NULL)
		pfree(st.indexes.data);
	if (st.failed)
	{
		out->keys = st.result.keys;
		return false;
	}
	*out = st.result;
	return true;
}
