/*-------------------------------------------------------------------------
 *
 * decode_test.c
 *		Standalone unit tests of src/protocol/lsm_stats_json.c and src/protocol/lsm_json.c
 *		(no PostgreSQL backend).
 *
 * Runs a table of get_lsm_stats bodies through lsm_json_decode_stats and
 * checks either the exact decoded values or that the decoder refuses the
 * body with a message naming the offending field; then does the same for
 * lsm_json_decode_error and lsm_json_stats_request_body, checks that
 * neither decoder quotes the body and that jansson's trees are freed when
 * palloc raises out of memory while one is held, and times the
 * decoding of a 10,000-bucket / 100,000-generation answer.  After every
 * case the palloc arena (harness_palloc.c) must be empty once freed, and
 * under valgrind nothing may leak (the JSON parser's state and jansson's
 * trees included).
 *
 * Prints "N passed, M failed" and exits non-zero when a check fails.  Set
 * DECODE_TEST_NO_TIMING=1 to skip the timing bound (valgrind does).
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "harness_elog.h"
#include "harness_check.h"
#include "harness_palloc.h"
#include "protocol/lsm_json.h"

/* A growable string for building bodies. */
typedef struct Buf
{
	char	   *data;
	size_t		len;
	size_t		cap;
} Buf;

/* Append printf-style text to buf. */
static void
buf_printf(Buf *buf, const char *fmt,...)
{
	va_list		args;
	int			n;

	for (;;)
	{
		va_start(args, fmt);
		n = vsnprintf(buf->data + buf->len, buf->cap - buf->len, fmt, args);
		va_end(args);
		if (n >= 0 && (size_t) n < buf->cap - buf->len)
		{
			buf->len += n;
			return;
		}
		buf->cap = buf->cap * 2 + n + 64;
		buf->data = realloc(buf->data, buf->cap);
		if (buf->data == NULL)
			abort();
	}
}

/* Start an empty buffer. */
static void
buf_init(Buf *buf)
{
	buf->cap = 256;
	buf->len = 0;
	buf->data = malloc(buf->cap);
	if (buf->data == NULL)
		abort();
	buf->data[0] = '\0';
}

/*
 * A change to the third bucket (index 2) of the standard body: at level
 * 'b' (the bucket), 'g' (its generations[0]) or 'm' (its memtables[0]),
 * replace the member key by the raw JSON text value, or remove it when
 * value is NULL, or add it when it is not one of the standard members.
 */
typedef struct Mutation
{
	char		level;
	const char *key;
	const char *value;
} Mutation;

typedef struct Member
{
	const char *key;
	const char *value;
} Member;

/* Append {members} to buf, applying m when it targets this level. */
static void
append_object(Buf *buf, const Member *members, int n, char level,
			  const Mutation *m)
{
	int			i;
	int			first = 1;
	int			replaced = 0;

	buf_printf(buf, "{");
	for (i = 0; i < n; i++)
	{
		const char *value = members[i].value;

		if (m != NULL && m->level == level && strcmp(m->key, members[i].key) == 0)
		{
			replaced = 1;
			value = m->value;
			if (value == NULL)
				continue;
		}
		buf_printf(buf, "%s\"%s\": %s", first ? "" : ", ", members[i].key, value);
		first = 0;
	}
	if (m != NULL && m->level == level && !replaced && m->value != NULL)
		buf_printf(buf, "%s\"%s\": %s", first ? "" : ", ", m->key, m->value);
	buf_printf(buf, "}");
}

/*
 * Append bucket number i of the standard body: "b<i>", Active, numbers
 * derived from i, two generations with rows, one memtable.  m applies only
 * to bucket 2 (NULL: no change).
 */
static void
append_bucket(Buf *buf, int i, const Mutation *m, int with_status_sealed)
{
	char		shard[32],
				nums[5][32],
				gen0[3][32];
	Member		bucket[11];
	Member		gen[3];
	Member		mem[5] = {
		{"generation", "9"}, {"rows", "12"}, {"bytes", "900"},
		{"batches", "2"}, {"indexes", "[\"vec_idx\", \"fts\"]"}
	};
	const Mutation *mine = (i == 2) ? m : NULL;

	snprintf(shard, sizeof(shard), "\"b%d\"", i);
	snprintf(nums[0], 32, "%d", 3 + i);
	snprintf(nums[1], 32, "%d", 11 + i);
	snprintf(nums[2], 32, "%d", 9 + i);
	snprintf(nums[3], 32, "%d", 100 + i);
	snprintf(nums[4], 32, "%d", 140 + i);
	snprintf(gen0[0], 32, "%d", 8 + i);
	snprintf(gen0[1], 32, "%d", 4096 + i);
	snprintf(gen0[2], 32, "%d", 30 + i);
	gen[0] = (Member) {"generation", gen0[0]};
	gen[1] = (Member) {"bytes", gen0[1]};
	gen[2] = (Member) {"rows", gen0[2]};

	bucket[0] = (Member) {"shard_id", shard};
	bucket[1] = (Member) {"status", with_status_sealed ? "\"Sealed\"" : "\"Active\""};
	bucket[2] = (Member) {"writer_epoch", nums[0]};
	bucket[3] = (Member) {"manifest_version", nums[1]};
	bucket[4] = (Member) {"current_generation", nums[2]};
	bucket[5] = (Member) {"replay_after_wal_entry_position", nums[3]};
	bucket[6] = (Member) {"wal_entry_position_last_seen", nums[4]};
	bucket[7] = (Member) {"generations", NULL};
	bucket[8] = (Member) {"compacting", "false"};
	bucket[9] = (Member) {"memtables", NULL};

	/* generations and memtables are built here so mutations can reach in */
	{
		Buf			g;
		Buf			mt;
		Member		all[10];

		buf_init(&g);
		buf_printf(&g, "[");
		append_object(&g, gen, 3, 'g', mine);
		buf_printf(&g, ", {\"generation\": 7, \"bytes\": 1, \"rows\": 2}]");
		buf_init(&mt);
		buf_printf(&mt, "[");
		append_object(&mt, mem, 5, 'm', mine);
		buf_printf(&mt, "]");
		memcpy(all, bucket, sizeof(all));
		all[7].value = g.data;
		all[9].value = mt.data;
		append_object(buf, all, 10, 'b', mine);
		free(g.data);
		free(mt.data);
	}
}

/* Build the standard 3-bucket body with mutation m (may be NULL). */
static char *
standard_body(const Mutation *m)
{
	Buf			buf;
	int			i;

	buf_init(&buf);
	buf_printf(&buf, "{\"lsm_stats\": {\"buckets\": [");
	for (i = 0; i < 3; i++)
	{
		if (i > 0)
			buf_printf(&buf, ", ");
		append_bucket(&buf, i, m, 0);
	}
	buf_printf(&buf, "]}}");
	return buf.data;
}

/* Is text one line of printable ASCII? */
static int
printable(const char *text)
{
	for (; *text != '\0'; text++)
		if ((unsigned char) *text < 0x20 || (unsigned char) *text > 0x7e)
			return 0;
	return 1;
}

/* After a case: free the arena and check nothing survives. */
static void
end_case(const char *name)
{
	harness_free_all();
	check(harness_live_blocks() == 0, name, "arena not empty");
}

/*
 * Decode body (len bytes) and expect failure with a message containing
 * expect.  Also checks that *out was left zeroed.
 */
static void
expect_fail_len(const char *name, const char *body, size_t len, int with_rows,
				const char *expect)
{
	LsmStats	out;
	char		errbuf[LSM_JSON_ERRBUF_SIZE];
	int			ok;

	memset(&out, 0x7f, sizeof(out));
	ok = lsm_json_decode_stats(body, len, with_rows, &out, errbuf,
							   sizeof(errbuf));
	check(!ok, name, "decoded, expected failure \"%s\"", expect);
	if (!ok)
	{
		check(strstr(errbuf, expect) != NULL, name,
			  "message \"%s\" lacks \"%s\"", errbuf, expect);
		check(printable(errbuf), name, "message not printable ASCII: %s",
			  errbuf);
		check(!out.enabled && out.nbuckets == 0 && out.buckets == NULL, name,
			  "out not zeroed on failure");
	}
	end_case(name);
}

static void
expect_fail(const char *name, const char *body, int with_rows,
			const char *expect)
{
	expect_fail_len(name, body, strlen(body), with_rows, expect);
}

/* Mutate bucket 2 of the standard body and expect failure. */
static void
expect_mutation_fails(const char *name, char level, const char *key,
					  const char *value, const char *expect)
{
	Mutation	m = {level, key, value};
	char	   *body = standard_body(&m);

	expect_fail(name, body, 1, expect);
	free(body);
}

/* Check bucket i of the standard body as decoded (with_rows given). */
static void
check_standard_bucket(const char *name, const LsmBucket *b, int i,
					  int with_rows)
{
	char		shard[32];

	snprintf(shard, sizeof(shard), "b%d", i);
	check(strcmp(b->shard_id, shard) == 0, name, "shard_id %s", b->shard_id);
	check(strcmp(b->status, "Active") == 0, name, "status %s", b->status);
	check(b->writer_epoch == (uint64_t) (3 + i) &&
		  b->manifest_version == (uint64_t) (11 + i) &&
		  b->current_generation == (uint64_t) (9 + i) &&
		  b->replay_after_wal_entry_position == (uint64_t) (100 + i) &&
		  b->wal_entry_position_last_seen == (uint64_t) (140 + i),
		  name, "bucket %d numbers", i);
	check(!b->compacting, name, "compacting");
	check(b->ngenerations == 2, name, "ngenerations %d", b->ngenerations);
	if (b->ngenerations == 2)
	{
		check(b->generations[0].generation == (uint64_t) (8 + i) &&
			  b->generations[0].bytes == (uint64_t) (4096 + i) &&
			  b->generations[1].generation == 7 &&
			  b->generations[1].bytes == 1, name, "generation values");
		if (with_rows)
			check(b->generations[0].has_rows &&
				  b->generations[0].rows == (uint64_t) (30 + i) &&
				  b->generations[1].has_rows && b->generations[1].rows == 2,
				  name, "rows");
		else
			check(!b->generations[0].has_rows && b->generations[0].rows == 0 &&
				  !b->generations[1].has_rows, name, "rows present");
	}
	check(b->has_memtables && b->nmemtables == 1, name, "memtables");
	if (b->nmemtables == 1)
	{
		const LsmMemtable *mt = &b->memtables[0];

		check(mt->generation == 9 && mt->rows == 12 && mt->bytes == 900 &&
			  mt->batches == 2, name, "memtable numbers");
		check(mt->nindexes == 2 && strcmp(mt->indexes[0], "vec_idx") == 0 &&
			  strcmp(mt->indexes[1], "fts") == 0, name, "indexes");
	}
}

/* Decode body and expect success; returns 1 and fills out if decoded. */
static int
expect_ok(const char *name, const char *body, int with_rows, LsmStats *out)
{
	char		errbuf[LSM_JSON_ERRBUF_SIZE];
	int			ok;

	ok = lsm_json_decode_stats(body, strlen(body), with_rows, out, errbuf,
							   sizeof(errbuf));
	check(ok, name, "failed: %s", errbuf);
	return ok;
}

/* Bucket 2 decoded without memtables, bucket 1 with. */
static int
optional_memtables(const LsmStats *s)
{
	return !s->buckets[2].has_memtables && s->buckets[2].nmemtables == 0 &&
		s->buckets[1].has_memtables;
}

/* Bucket 2's first generation decoded without rows, its second with. */
static int
optional_rows(const LsmStats *s)
{
	return !s->buckets[2].generations[0].has_rows &&
		s->buckets[2].generations[1].has_rows &&
		s->buckets[2].generations[1].rows == 2;
}

/*
 * An optional member of the SDK's types (key at level of bucket 2 of the
 * standard body) absent, then null: decoded, and valid(s) holds.
 */
static void
expect_optional(char level, const char *key, int (*valid) (const LsmStats *))
{
	const char *values[] = {NULL, "null"};

	for (int i = 0; i < 2; i++)
	{
		Mutation	m = {level, key, values[i]};
		char	   *body = standard_body(&m);
		char		name[64];
		LsmStats	s;

		snprintf(name, sizeof(name), "%s %s", key, i == 0 ? "absent" : "null");
		if (expect_ok(name, body, 1, &s))
			check(valid(&s), name, "decoded values");
		end_case(name);
		free(body);
	}
}

/* Decode body (rows asked) and expect success, as a case of its own. */
static void
expect_ok_case(const char *name, const char *body)
{
	LsmStats	s;

	expect_ok(name, body, 1, &s);
	end_case(name);
}

/* The valid bodies. */
static void
test_valid(void)
{
	LsmStats	s;
	char	   *body = standard_body(NULL);
	int			i;

	if (expect_ok("standard with rows", body, 1, &s))
	{
		check(s.enabled && s.nbuckets == 3, "standard with rows", "header");
		for (i = 0; i < s.nbuckets; i++)
			check_standard_bucket("standard with rows", &s.buckets[i], i, 1);
	}
	end_case("standard with rows");

	if (expect_ok("standard without rows", body, 0, &s))
	{
		check(s.enabled && s.nbuckets == 3, "standard without rows", "header");
		for (i = 0; i < s.nbuckets; i++)
			check_standard_bucket("standard without rows", &s.buckets[i], i, 0);
	}
	end_case("standard without rows");
	free(body);

	{
		Mutation	m = {'g', "rows", NULL};

		body = standard_body(&m);
		if (expect_ok("no rows, not asked", body, 0, &s))
			check(!s.buckets[2].generations[0].has_rows, "no rows, not asked",
				  "has_rows");
		end_case("no rows, not asked");
		free(body);
	}

	if (expect_ok("lsm_stats null", "{\"lsm_stats\": null}", 1, &s))
		check(!s.enabled && s.nbuckets == 0 && s.buckets == NULL,
			  "lsm_stats null", "not disabled");
	end_case("lsm_stats null");

	if (expect_ok("no buckets", " {\"lsm_stats\": {\"buckets\": []}}\r\n", 1, &s))
		check(s.enabled && s.nbuckets == 0 && s.buckets == NULL,
			  "no buckets", "not empty");
	end_case("no buckets");

	body = "{\"lsm_stats\": {\"buckets\": [{\"shard_id\": \"s\\u00e9\", "
		"\"status\": \"Sealed\", \"writer_epoch\": 9223372036854775807, "
		"\"manifest_version\": 0, \"current_generation\": 1, "
		"\"replay_after_wal_entry_position\": 2, "
		"\"wal_entry_position_last_seen\": 3, \"generations\": [], "
		"\"compacting\": true, \"future\": {\"x\": [1.5, null]}}], "
		"\"other\": 1}, \"extra\": \"\\u0000\"}";
	if (expect_ok("sealed without memtables", body, 1, &s))
	{
		const LsmBucket *b = &s.buckets[0];

		check(s.enabled && s.nbuckets == 1, "sealed without memtables", "header");
		check(strcmp(b->shard_id, "s\xc3\xa9") == 0 &&
			  strcmp(b->status, "Sealed") == 0 &&
			  b->writer_epoch == UINT64_C(9223372036854775807) &&
			  b->manifest_version == 0 && b->current_generation == 1 &&
			  b->replay_after_wal_entry_position == 2 &&
			  b->wal_entry_position_last_seen == 3 &&
			  b->ngenerations == 0 && b->generations == NULL &&
			  b->compacting && !b->has_memtables && b->nmemtables == 0 &&
			  b->memtables == NULL, "sealed without memtables", "values");
	}
	end_case("sealed without memtables");

	{
		Mutation	m = {'b', "memtables", "[]"};

		body = standard_body(&m);
		if (expect_ok("empty memtables", body, 1, &s))
			check(s.buckets[2].has_memtables && s.buckets[2].nmemtables == 0,
				  "empty memtables", "has_memtables");
		end_case("empty memtables");
		free(body);
	}
	{
		Mutation	m = {'m', "indexes", "[]"};

		body = standard_body(&m);
		if (expect_ok("no indexes", body, 1, &s))
			check(s.buckets[2].memtables[0].nindexes == 0,
				  "no indexes", "nindexes");
		end_case("no indexes");
		free(body);
	}
}

/*
 * A malloc'd copy of body with the first n occurrences of from (n < 0:
 * all of them) replaced by to.
 */
static char *
replace_text(const char *body, const char *from, const char *to, int n)
{
	Buf			buf;
	const char *p = body;
	const char *hit;

	buf_init(&buf);
	while (n != 0 && (hit = strstr(p, from)) != NULL)
	{
		buf_printf(&buf, "%.*s%s", (int) (hit - p), p, to);
		p = hit + strlen(from);
		n--;
	}
	buf_printf(&buf, "%s", p);
	return buf.data;
}

/*
 * Decode body with its third key "from" (that of bucket 2) spelled "to"
 * instead, and expect failure with a message containing expect.
 */
static void
expect_third_respelled(const char *name, const char *body, const char *from,
					   const char *to, const char *expect)
{
	char		qfrom[64];
	char		qto[64];
	char	   *all;
	char	   *third;

	snprintf(qfrom, sizeof(qfrom), "\"%s\"", from);
	snprintf(qto, sizeof(qto), "\"%s\"", to);
	all = replace_text(body, qfrom, qto, 3);
	third = replace_text(all, qto, qfrom, 2);
	expect_fail(name, third, 1, expect);
	free(all);
	free(third);
}

/*
 * The standard body (mutation m, may be NULL) with the stats keys renamed
 * as upstream plans: "table_shards" for "buckets", "sstables" for
 * "generations" (the key "generation" of a generation stays).
 */
static char *
renamed_body(const Mutation *m)
{
	char	   *body = standard_body(m);
	char	   *shards = replace_text(body, "\"buckets\"", "\"table_shards\"", -1);
	char	   *renamed = replace_text(shards, "\"generations\"", "\"sstables\"", -1);

	free(body);
	free(shards);
	return renamed;
}

/*
 * Both spellings of the renamed keys decode to the same values; the
 * spelling is reported in keys; an answer mixing them is refused, naming
 * the field; a missing member is named as the answer spells it.
 */
static void
test_renamed_keys(void)
{
	LsmStats	s;
	char	   *old_body = standard_body(NULL);
	char	   *new_body = renamed_body(NULL);
	char	   *mixed;
	char		errbuf[LSM_JSON_ERRBUF_SIZE];
	int			i;

	if (expect_ok("old spelling", old_body, 1, &s))
		check(s.keys == LSM_KEYS_GENERATION, "old spelling", "keys %d", s.keys);
	end_case("old spelling");
	if (expect_ok("new spelling", new_body, 1, &s))
	{
		check(s.keys == LSM_KEYS_SSTABLE, "new spelling", "keys %d", s.keys);
		check(s.enabled && s.nbuckets == 3, "new spelling", "header");
		for (i = 0; i < s.nbuckets; i++)
			check_standard_bucket("new spelling", &s.buckets[i], i, 1);
	}
	end_case("new spelling");
	if (expect_ok("new spelling, no buckets",
				  "{\"lsm_stats\": {\"table_shards\": []}}", 0, &s))
		check(s.enabled && s.nbuckets == 0 && s.keys == LSM_KEYS_SSTABLE,
			  "new spelling, no buckets", "keys %d", s.keys);
	end_case("new spelling, no buckets");
	if (expect_ok("lsm_stats null: no spelling", "{\"lsm_stats\": null}", 0, &s))
		check(s.keys == LSM_KEYS_UNSEEN, "lsm_stats null: no spelling",
			  "keys %d", s.keys);
	end_case("lsm_stats null: no spelling");

	/* new, then an old key in the third bucket; and the other way round */
	expect_third_respelled("new then old", new_body, "sstables", "generations",
						   "field \"lsm_stats.table_shards[2].generations\" mixes key spellings: the answer used \"table_shards\" before");
	expect_third_respelled("old then new", old_body, "generations", "sstables",
						   "field \"lsm_stats.buckets[2].sstables\" mixes key spellings: the answer used \"buckets\" before");

	/* both spellings in one bucket */
	expect_mutation_fails("both in one bucket", 'b', "sstables", "[]",
						  "field \"lsm_stats.buckets[2].sstables\" mixes key spellings: the answer used \"buckets\" before");
	expect_fail("both at the top",
				"{\"lsm_stats\": {\"table_shards\": [], \"buckets\": []}}", 0,
				"field \"lsm_stats.buckets\" mixes key spellings: the answer used \"table_shards\" before");

	/* a missing member is named in the answer's spelling */
	{
		Mutation	m = {'b', "generations", NULL};

		mixed = renamed_body(&m);
		expect_fail("new spelling, missing", mixed, 1,
					"field \"lsm_stats.table_shards[2].sstables\" is missing");
		free(mixed);
	}
	expect_fail("new spelling, lsm_stats empty", "{\"lsm_stats\": {}}", 1,
				"field \"lsm_stats.buckets\" is missing");

	/* on failure, keys still tells the spelling seen (rows not sent) */
	{
		Mutation	m = {'g', "bytes", NULL};

		mixed = renamed_body(&m);
		memset(&s, 0, sizeof(s));
		check(!lsm_json_decode_stats(mixed, strlen(mixed), 1, &s, errbuf,
									 sizeof(errbuf)) &&
			  s.keys == LSM_KEYS_SSTABLE && s.nbuckets == 0 &&
			  strstr(errbuf, "field \"lsm_stats.table_shards[2].sstables[0].bytes\" is missing") != NULL,
			  "keys on failure", "keys %d, %s", s.keys, errbuf);
		end_case("keys on failure");
		free(mixed);
	}
	free(old_body);
	free(new_body);
}

/* Bodies that are not a get_lsm_stats answer at all. */
static void
test_bad_bodies(void)
{
	char	   *body = standard_body(NULL);
	char	   *deep;
	size_t		i;

	expect_fail_len("truncated", body, strlen(body) - 5, 1,
					"response body is not valid JSON: ");
	expect_fail_len("truncated at 1", body, 1, 1,
					"response body is not valid JSON: ");
	free(body);
	expect_fail("empty", "", 1, "response body is empty");
	expect_fail_len("empty NULL", NULL, 0, 1, "response body is empty");
	expect_fail("blank", " \r\n\t", 1, "response body is empty");
	expect_fail("not JSON", "Service Unavailable", 1,
				"response body is not valid JSON: ");
	expect_fail("HTML", "<html><body><h1>502 Bad Gateway</h1></body></html>",
				1, "response body is not valid JSON: ");
	expect_fail("not an object", "[1, 2]", 1,
				"response body is not a JSON object");
	expect_fail("scalar", "\"lsm_stats\"", 1,
				"response body is not valid JSON: ");
	/* no lsm_stats: no LSM write path, as the SDK's serde(default) */
	{
		LsmStats	s;

		if (expect_ok("no lsm_stats", "{\"stats\": null}", 1, &s))
			check(!s.enabled && s.nbuckets == 0, "no lsm_stats", "enabled");
		end_case("no lsm_stats");
	}
	expect_fail("lsm_stats array", "{\"lsm_stats\": []}", 1,
				"field \"lsm_stats\" is neither an object nor null");
	expect_fail("lsm_stats false", "{\"lsm_stats\": false}", 1,
				"field \"lsm_stats\" is neither an object nor null");
	expect_fail("no buckets", "{\"lsm_stats\": {}}", 1,
				"field \"lsm_stats.buckets\" is missing");
	expect_fail("buckets null", "{\"lsm_stats\": {\"buckets\": null}}", 1,
				"field \"lsm_stats.buckets\" is not an array");
	expect_fail("bucket not object", "{\"lsm_stats\": {\"buckets\": [1]}}", 1,
				"field \"lsm_stats.buckets[0]\" is not an object");
	expect_fail("trailing garbage", "{\"lsm_stats\": null} x", 1,
				"response body is not valid JSON: end of file expected");
	expect_fail("two documents", "{\"lsm_stats\": null}{\"lsm_stats\": null}",
				1, "response body is not valid JSON: end of file expected");
	expect_fail("duplicate key", "{\"lsm_stats\": null, \"lsm_stats\": null}",
				1, "field \"lsm_stats\" is a duplicate object key");
	expect_fail("duplicate nested key",
				"{\"lsm_stats\": {\"buckets\": [], \"buckets\": []}}", 1,
				"field \"lsm_stats.buckets\" is a duplicate object key");
	expect_fail("invalid UTF-8", "{\"lsm_stats\": null, \"x\": \"\xc3\x28\"}",
				1, "response body is not valid JSON: ");
	expect_fail("invalid UTF-8 key", "{\"lsm_\xff\": null}", 1,
				"response body is not valid JSON: ");
	expect_fail("invalid byte quoted", "{\"lsm_stats\": null, \"x\": \xff\xfe}",
				1, "response body is not valid JSON: ");
	expect_fail("control character quoted",
				"{\"lsm_stats\": null, \"x\": tr\x01ue}", 1,
				"response body is not valid JSON: ");
	expect_fail_len("raw NUL", "{\"lsm_stats\": \0null}", 19, 1,
					"response body is not valid JSON: ");
	expect_fail("NUL in key", "{\"lsm_stats\\u0000\": null}", 1,
				"response body is not valid JSON: ");
	/* numbers of unrecognized members are not looked at */
	{
		LsmStats	s;

		expect_ok("big unknown", "{\"lsm_stats\": null, \"x\": 1e999, "
				  "\"y\": -99999999999999999999999, "
				  "\"z\": 99999999999999999999999}", 1, &s);
		end_case("big unknown");
	}
	/* duplicate unrecognized members are ignored */
	{
		LsmStats	s;

		expect_ok("duplicate unknown", "{\"x\": 1, \"lsm_stats\": null, "
				  "\"x\": [2]}", 1, &s);
		end_case("duplicate unknown");
	}
	expect_fail("trailing garbage after array", "[] x", 1,
				"response body is not valid JSON: end of file expected");
	expect_fail("invalid escape", "{\"lsm_stats\": null, \"x\": \"\\q\"}", 1,
				"response body is not valid JSON: ");
	expect_fail("lone surrogate", "{\"lsm_stats\": null, \"x\": \"\\ud800\"}",
				1, "response body is not valid JSON: ");
	expect_fail("overlong UTF-8", "{\"lsm_stats\": null, \"x\": \"\xc0\xaf\"}",
				1, "response body is not valid JSON: invalid UTF-8");
	expect_fail("UTF-8 surrogate", "{\"lsm_stats\": null, \"x\": \"\xed\xa0\x80\"}",
				1, "response body is not valid JSON: invalid UTF-8");
	expect_fail("NUL in nested key",
				"{\"lsm_stats\": null, \"x\": [{\"a\\u0000\": 1}]}", 1,
				"response body is not valid JSON: NUL byte in object key");
	{
		LsmStats	s;

		expect_ok("escaped backslash before u0000",
				  "{\"lsm_stats\": {\"buckets\": []}, \"x\": \"\\\\u0000\"}",
				  1, &s);
		end_case("escaped backslash before u0000");
	}

	deep = malloc(100001);
	for (i = 0; i < 100000; i++)
		deep[i] = '[';
	deep[100000] = '\0';
	expect_fail("deep nesting", deep, 1,
				"response body is not valid JSON: maximum parsing depth reached");
	memcpy(deep, "{\"lsm_stats\":", 13);
	expect_fail("deep nesting in lsm_stats", deep, 1,
				"maximum parsing depth reached");
	free(deep);
}

/* One mutation of the standard body per required field and type. */
static void
test_bad_fields(void)
{
	static const char *const u64s[] = {
		"writer_epoch", "manifest_version", "current_generation",
		"replay_after_wal_entry_position", "wal_entry_position_last_seen"
	};
	static const char *const gen_u64s[] = {"generation", "bytes"};
	static const char *const mem_u64s[] = {
		"generation", "rows", "bytes", "batches"
	};
	char		expect[256];
	char		name[128];
	size_t		i;

	for (i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++)
	{
		snprintf(name, sizeof(name), "missing %s", u64s[i]);
		snprintf(expect, sizeof(expect),
				 "field \"lsm_stats.buckets[2].%s\" is missing", u64s[i]);
		expect_mutation_fails(name, 'b', u64s[i], NULL, expect);
		snprintf(expect, sizeof(expect),
				 "field \"lsm_stats.buckets[2].%s\" is not an unsigned 64-bit integer",
				 u64s[i]);
		snprintf(name, sizeof(name), "negative %s", u64s[i]);
		expect_mutation_fails(name, 'b', u64s[i], "-1", expect);
		snprintf(name, sizeof(name), "real %s", u64s[i]);
		expect_mutation_fails(name, 'b', u64s[i], "1.5", expect);
		snprintf(name, sizeof(name), "exponent %s", u64s[i]);
		expect_mutation_fails(name, 'b', u64s[i], "1e3", expect);
		snprintf(name, sizeof(name), "string %s", u64s[i]);
		expect_mutation_fails(name, 'b', u64s[i], "\"3\"", expect);
		snprintf(name, sizeof(name), "null %s", u64s[i]);
		expect_mutation_fails(name, 'b', u64s[i], "null", expect);
	}
	for (i = 0; i < sizeof(gen_u64s) / sizeof(gen_u64s[0]); i++)
	{
		snprintf(name, sizeof(name), "missing generation %s", gen_u64s[i]);
		snprintf(expect, sizeof(expect),
				 "field \"lsm_stats.buckets[2].generations[0].%s\" is missing",
				 gen_u64s[i]);
		expect_mutation_fails(name, 'g', gen_u64s[i], NULL, expect);
		snprintf(name, sizeof(name), "negative generation %s", gen_u64s[i]);
		snprintf(expect, sizeof(expect),
				 "field \"lsm_stats.buckets[2].generations[0].%s\" is not an unsigned 64-bit integer",
				 gen_u64s[i]);
		expect_mutation_fails(name, 'g', gen_u64s[i], "-5", expect);
		snprintf(name, sizeof(name), "real generation %s", gen_u64s[i]);
		expect_mutation_fails(name, 'g', gen_u64s[i], "4096.0", expect);
	}
	for (i = 0; i < sizeof(mem_u64s) / sizeof(mem_u64s[0]); i++)
	{
		snprintf(name, sizeof(name), "missing memtable %s", mem_u64s[i]);
		snprintf(expect, sizeof(expect),
				 "field \"lsm_stats.buckets[2].memtables[0].%s\" is missing",
				 mem_u64s[i]);
		expect_mutation_fails(name, 'm', mem_u64s[i], NULL, expect);
		snprintf(name, sizeof(name), "bool memtable %s", mem_u64s[i]);
		snprintf(expect, sizeof(expect),
				 "field \"lsm_stats.buckets[2].memtables[0].%s\" is not an unsigned 64-bit integer",
				 mem_u64s[i]);
		expect_mutation_fails(name, 'm', mem_u64s[i], "true", expect);
	}

	expect_mutation_fails("missing shard_id", 'b', "shard_id", NULL,
						  "field \"lsm_stats.buckets[2].shard_id\" is missing");
	expect_mutation_fails("number shard_id", 'b', "shard_id", "2",
						  "field \"lsm_stats.buckets[2].shard_id\" is not a string");
	expect_mutation_fails("empty shard_id", 'b', "shard_id", "\"\"",
						  "field \"lsm_stats.buckets[2].shard_id\" is empty");
	expect_mutation_fails("NUL in shard_id", 'b', "shard_id", "\"b\\u00002\"",
						  "field \"lsm_stats.buckets[2].shard_id\" contains a NUL character");
	expect_mutation_fails("invalid UTF-8 shard_id", 'b', "shard_id",
						  "\"b\xe2\x82\"", "response body is not valid JSON: ");
	expect_mutation_fails("missing status", 'b', "status", NULL,
						  "field \"lsm_stats.buckets[2].status\" is missing");
	/* status is a free string, kept as sent (lance spells it ACTIVE) */
	{
		static const char *const statuses[] = {"\"Bogus\"", "\"ACTIVE\"",
		"\"SEALED\"", "\"\""};

		for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		{
			Mutation	m = {'b', "status", statuses[i]};
			char	   *body = standard_body(&m);
			LsmStats	s;

			snprintf(name, sizeof(name), "status %s", statuses[i]);
			if (expect_ok(name, body, 1, &s))
			{
				snprintf(expect, sizeof(expect), "\"%s\"", s.buckets[2].status);
				check(strcmp(expect, statuses[i]) == 0, name, "status %s",
					  s.buckets[2].status);
			}
			end_case(name);
			free(body);
		}
	}
	expect_mutation_fails("NUL in status", 'b', "status", "\"Active\\u0000x\"",
						  "field \"lsm_stats.buckets[2].status\" contains a NUL character");
	expect_mutation_fails("status null", 'b', "status", "null",
						  "field \"lsm_stats.buckets[2].status\" is not a string");
	expect_mutation_fails("missing generations", 'b', "generations", NULL,
						  "field \"lsm_stats.buckets[2].generations\" is missing");
	expect_mutation_fails("generations object", 'b', "generations", "{}",
						  "field \"lsm_stats.buckets[2].generations\" is not an array");
	expect_mutation_fails("generation not object", 'b', "generations", "[[8, 4096]]",
						  "field \"lsm_stats.buckets[2].generations[0]\" is not an object");
	expect_mutation_fails("missing compacting", 'b', "compacting", NULL,
						  "field \"lsm_stats.buckets[2].compacting\" is missing");
	expect_mutation_fails("compacting number", 'b', "compacting", "0",
						  "field \"lsm_stats.buckets[2].compacting\" is not a boolean");
	/* memtables absent or null (a WAL-only writer): no memtables */
	expect_optional('b', "memtables", optional_memtables);
	expect_mutation_fails("memtables object", 'b', "memtables", "{}",
						  "field \"lsm_stats.buckets[2].memtables\" is neither an array nor null");
	expect_mutation_fails("memtable not object", 'b', "memtables", "[null]",
						  "field \"lsm_stats.buckets[2].memtables[0]\" is not an object");
	expect_mutation_fails("missing indexes", 'm', "indexes", NULL,
						  "field \"lsm_stats.buckets[2].memtables[0].indexes\" is missing");
	expect_mutation_fails("indexes string", 'm', "indexes", "\"vec_idx\"",
						  "field \"lsm_stats.buckets[2].memtables[0].indexes\" is not an array");
	expect_mutation_fails("index number", 'm', "indexes", "[\"a\", 7]",
						  "field \"lsm_stats.buckets[2].memtables[0].indexes[1]\" is not a string");
	expect_mutation_fails("NUL in index", 'm', "indexes", "[\"a\", \"b\\u0000\"]",
						  "field \"lsm_stats.buckets[2].memtables[0].indexes[1]\" contains a NUL character");
	expect_mutation_fails("too big in bucket", 'b', "writer_epoch",
						  "18446744073709551616",
						  "field \"lsm_stats.buckets[2].writer_epoch\" is out of range for an unsigned 64-bit integer");
	expect_mutation_fails("much too big in generation", 'g', "bytes",
						  "123456789012345678901234567890",
						  "field \"lsm_stats.buckets[2].generations[0].bytes\" is out of range for an unsigned 64-bit integer");
	expect_mutation_fails("too small in memtable", 'm', "rows",
						  "-18446744073709551616",
						  "field \"lsm_stats.buckets[2].memtables[0].rows\" is not an unsigned 64-bit integer");
	expect_mutation_fails("duplicate in bucket", 'b', "shard_id_x\": 1, \"writer_epoch",
						  "3", "field \"lsm_stats.buckets[2].writer_epoch\" is a duplicate object key");
	expect_mutation_fails("duplicate in generation", 'g', "x\": 1, \"bytes",
						  "3", "field \"lsm_stats.buckets[2].generations[0].bytes\" is a duplicate object key");
	expect_mutation_fails("duplicate in memtable", 'm', "x\": [], \"batches",
						  "3", "field \"lsm_stats.buckets[2].memtables[0].batches\" is a duplicate object key");
	expect_mutation_fails("deep in unknown member", 'b', "future",
						  "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
						  "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
						  "response body is not valid JSON: maximum parsing depth reached");
	/* the full range of unsigned 64-bit integers, and "-0" (as before) */
	{
		Mutation	m = {'b', "writer_epoch", "18446744073709551615"};
		Mutation	z = {'g', "bytes", "-0"};
		char	   *body = standard_body(&m);
		LsmStats	s;

		if (expect_ok("UINT64_MAX", body, 1, &s))
			check(s.buckets[2].writer_epoch == UINT64_MAX, "UINT64_MAX",
				  "writer_epoch %" PRIu64, s.buckets[2].writer_epoch);
		end_case("UINT64_MAX");
		free(body);
		body = standard_body(&z);
		if (expect_ok("minus zero", body, 1, &s))
			check(s.buckets[2].generations[0].bytes == 0, "minus zero",
				  "bytes %" PRIu64, s.buckets[2].generations[0].bytes);
		end_case("minus zero");
		free(body);
	}
	/* an unrecognized member with a deep but allowed value is skipped */
	{
		Mutation	m = {'m', "future", "{\"a\": [[{\"b\": [1, {}]}]], \"c\": null}"};
		char	   *body = standard_body(&m);
		LsmStats	s;

		if (expect_ok("unknown nested member", body, 1, &s))
			check_standard_bucket("unknown nested member", &s.buckets[2], 2, 1);
		end_case("unknown nested member");
		free(body);
	}

	/* rows absent or null: unknown for that generation only */
	expect_optional('g', "rows", optional_rows);
	expect_mutation_fails("negative generation rows", 'g', "rows", "-5",
						  "field \"lsm_stats.buckets[2].generations[0].rows\" is not an unsigned 64-bit integer");
	expect_mutation_fails("huge generation rows", 'g', "rows",
						  "18446744073709551616",
						  "field \"lsm_stats.buckets[2].generations[0].rows\" is out of range for an unsigned 64-bit integer");
	/* a Sealed bucket's memtables may be null, as any bucket's */
	expect_ok_case("sealed memtables null",
				"{\"lsm_stats\": {\"buckets\": [{\"shard_id\": \"s\", "
				"\"status\": \"Sealed\", \"writer_epoch\": 1, "
				"\"manifest_version\": 0, \"current_generation\": 1, "
				"\"replay_after_wal_entry_position\": 2, "
				"\"wal_entry_position_last_seen\": 3, \"generations\": [], "
				"\"compacting\": true, \"memtables\": null}]}}");
	/* rows are required when asked for, ignored (even mistyped) otherwise */
	{
		Mutation	m = {'g', "rows", "\"x\""};
		char	   *body = standard_body(&m);
		LsmStats	s;

		expect_fail("rows mistyped, asked", body, 1,
					"field \"lsm_stats.buckets[2].generations[0].rows\" is neither an unsigned 64-bit integer nor null");
		if (expect_ok("rows mistyped, not asked", body, 0, &s))
			check(!s.buckets[2].generations[0].has_rows,
				  "rows mistyped, not asked", "has_rows");
		end_case("rows mistyped, not asked");
		free(body);
	}
}

/* Decode an error body and compare with the expectation. */
static void
expect_error_body(const char *name, const char *body, size_t len, int ok,
				  int has_code, int64_t code, const char *message)
{
	LsmErrorBody out;
	int			got;

	memset(&out, 0x55, sizeof(out));
	got = lsm_json_decode_error(body, len, &out);
	check(got == ok, name, "returned %d", got);
	check(out.has_code == has_code && (!has_code || out.code == code), name,
		  "code %d %" PRId64, out.has_code, out.code);
	if (message == NULL)
		check(out.message == NULL, name, "message \"%s\"", out.message);
	else
		check(out.message != NULL && strcmp(out.message, message) == 0, name,
			  "message \"%s\"", out.message ? out.message : "(null)");
	end_case(name);
}

/* lsm_json_decode_error on server, proxy and hostile bodies. */
static void
test_error_bodies(void)
{
	char		longmsg[3000];
	char		expect[1100];
	Buf			b;

#define EB(name, s, ok, hc, c, m) expect_error_body(name, s, strlen(s), ok, hc, c, m)
	EB("draining", "{\"code\": 19, \"error\": \"node is draining\"}", 1, 1, 19,
	   "node is draining");
	EB("code only", "{\"code\": 7}", 1, 1, 7, NULL);
	EB("error only", "{\"error\": \"table not found\", \"x\": [1]}", 1, 0, 0,
	   "table not found");
	EB("negative code", "{\"code\": -3, \"error\": \"\"}", 1, 1, -3, "");
	EB("code string", "{\"code\": \"19\", \"error\": \"e\"}", 1, 0, 0, "e");
	EB("code real", "{\"code\": 19.0}", 0, 0, 0, NULL);
	EB("error number", "{\"error\": 5}", 0, 0, 0, NULL);
	EB("other object", "{\"message\": \"x\"}", 0, 0, 0, NULL);
	EB("array", "[{\"code\": 1}]", 0, 0, 0, NULL);
	EB("HTML", "<html>503 Service Temporarily Unavailable</html>", 0, 0, 0, NULL);
	EB("empty", "", 0, 0, 0, NULL);
	expect_error_body("NULL", NULL, 0, 0, 0, 0, NULL);
	EB("truncated", "{\"code\": 19, \"error\": \"dra", 0, 0, 0, NULL);
	EB("trailing garbage", "{\"code\": 19} <html>", 0, 0, 0, NULL);
	EB("NUL in message", "{\"code\": 1, \"error\": \"before\\u0000after\"}", 1,
	   1, 1, "before");
	EB("duplicate keys", "{\"code\": 1, \"code\": 2}", 1, 1, 2, NULL);
	EB("too big code", "{\"code\": 99999999999999999999}", 0, 0, 0, NULL);

	memset(longmsg, 'a', 2000);
	longmsg[2000] = '\0';
	buf_init(&b);
	buf_printf(&b, "{\"code\": 1, \"error\": \"%s\"}", longmsg);
	memset(expect, 'a', 1024);
	memcpy(expect + 1024, "...", 4);
	EB("long message", b.data, 1, 1, 1, expect);
	free(b.data);

	/* 1023 ASCII bytes then a 2-byte character straddling the cut */
	memset(longmsg, 'a', 1023);
	strcpy(longmsg + 1023, "\xc3\xa9tail");
	buf_init(&b);
	buf_printf(&b, "{\"error\": \"%s\"}", longmsg);
	memset(expect, 'a', 1023);
	memcpy(expect + 1023, "...", 4);
	EB("cut on character boundary", b.data, 1, 0, 0, expect);
	free(b.data);

	memset(longmsg, 'a', 1024);
	longmsg[1024] = '\0';
	buf_init(&b);
	buf_printf(&b, "{\"error\": \"%s\"}", longmsg);
	EB("exactly 1024", b.data, 1, 0, 0, longmsg);
	free(b.data);
#undef EB
}

/* The request body, byte for byte. */
static void
test_request_body(void)
{
	char	   *f = lsm_json_stats_request_body(0, LSM_KEYS_GENERATION);
	char	   *t = lsm_json_stats_request_body(1, LSM_KEYS_GENERATION);
	char	   *sf = lsm_json_stats_request_body(0, LSM_KEYS_SSTABLE);
	char	   *st = lsm_json_stats_request_body(1, LSM_KEYS_SSTABLE);

	check(strcmp(f, "{\"include_generation_rows\": false}") == 0,
		  "request body false", "%s", f);
	check(strcmp(t, "{\"include_generation_rows\": true}") == 0,
		  "request body true", "%s", t);
	check(strcmp(sf, "{\"include_sstable_rows\": false}") == 0,
		  "request body false, renamed", "%s", sf);
	check(strcmp(st, "{\"include_sstable_rows\": true}") == 0,
		  "request body true, renamed", "%s", st);
	end_case("request body");
}

/* 10,000 buckets of 10 generations each: decode well under 0.5 s. */
static void
test_performance(void)
{
	Buf			buf;
	LsmStats	s;
	char		errbuf[LSM_JSON_ERRBUF_SIZE];
	struct timespec t0,
				t1;
	double		secs = 0;
	int			i,
				j,
				ok;
	uint64_t	sum = 0;
	int			timing = getenv("DECODE_TEST_NO_TIMING") == NULL;

	buf_init(&buf);
	buf_printf(&buf, "{\"lsm_stats\": {\"buckets\": [");
	for (i = 0; i < 10000; i++)
	{
		buf_printf(&buf, "%s{\"shard_id\": \"bucket-%d\", \"status\": \"Active\", "
				   "\"writer_epoch\": %d, \"manifest_version\": 11, "
				   "\"current_generation\": 19, "
				   "\"replay_after_wal_entry_position\": 100, "
				   "\"wal_entry_position_last_seen\": 140, \"generations\": [",
				   i ? ", " : "", i, i);
		for (j = 0; j < 10; j++)
			buf_printf(&buf, "%s{\"generation\": %d, \"bytes\": %d, \"rows\": 3}",
					   j ? ", " : "", 9 + j, 1000 + j);
		buf_printf(&buf, "], \"compacting\": false, \"memtables\": "
				   "[{\"generation\": 19, \"rows\": 1, \"bytes\": 2, "
				   "\"batches\": 3, \"indexes\": [\"vec_idx\"]}]}");
	}
	buf_printf(&buf, "]}}");

	/* best of three, so that a busy machine does not fail the bound */
	for (i = 0; i < (timing ? 3 : 1); i++)
	{
		double		this;

		harness_free_all();
		clock_gettime(CLOCK_MONOTONIC, &t0);
		ok = lsm_json_decode_stats(buf.data, buf.len, 1, &s, errbuf,
								   sizeof(errbuf));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		this = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (i == 0 || this < secs)
			secs = this;
	}
	check(ok, "performance", "failed: %s", errbuf);
	if (ok)
	{
		for (i = 0; i < s.nbuckets; i++)
			for (j = 0; j < s.buckets[i].ngenerations; j++)
				sum += s.buckets[i].generations[j].bytes;
		check(s.nbuckets == 10000 && sum == UINT64_C(10000) * 10045,
			  "performance", "nbuckets %d sum %" PRIu64, s.nbuckets, sum);
	}
	printf("decoded %zu bytes (10000 buckets, 100000 generations) in %.3f s\n",
		   buf.len, secs);
	/* a figure, not an assertion: CI machines are noisy (bench/ compares) */
	if (timing && secs >= 0.5)
		printf("note: the decode took %.3f s, over the 0.5 s goal\n", secs);
	free(buf.data);
	end_case("performance");
}

/* A word a server may echo; alphanumeric, so that lexers read it whole. */
#define SECRET_TAIL "SecretKey9Zq"
#define SECRET "Sk4tap" SECRET_TAIL

/*
 * Does text hold any 4-byte piece of SECRET?  (Redaction recognises a
 * secret from its first 4 bytes on; a piece from its middle it cannot.)
 */
static int
holds_secret_piece(const char *text)
{
	char		piece[5];

	for (size_t i = 0; i + 4 <= strlen(SECRET); i++)
	{
		memcpy(piece, SECRET + i, 4);
		piece[4] = '\0';
		if (strstr(text, piece) != NULL)
			return 1;
	}
	return 0;
}

/*
 * Decode body with the stats and the write spec decoders: both fail with
 * exactly stats_expect and spec_expect, and neither quotes a piece of
 * SECRET.
 */
static void
expect_no_quote(const char *name, const char *body, const char *stats_expect,
				const char *spec_expect)
{
	LsmStats	stats;
	LsmWriteSpec spec;
	char		errbuf[LSM_JSON_ERRBUF_SIZE];
	int			ok;

	ok = lsm_json_decode_stats(body, strlen(body), 1, &stats, errbuf,
							   sizeof(errbuf));
	check(!ok && strcmp(errbuf, stats_expect) == 0, name,
		  "stats: \"%s\", expected \"%s\"", ok ? "(decoded)" : errbuf,
		  stats_expect);
	check(!holds_secret_piece(errbuf), name, "stats quotes the body: %s",
		  errbuf);
	end_case(name);
	ok = lsm_json_decode_write_spec(body, strlen(body), &spec, errbuf,
									sizeof(errbuf));
	check(!ok && strcmp(errbuf, spec_expect) == 0, name,
		  "write spec: \"%s\", expected \"%s\"", ok ? "(decoded)" : errbuf,
		  spec_expect);
	check(!holds_secret_piece(errbuf), name,
		  "write spec quotes the body: %s", errbuf);
	end_case(name);
}

/*
 * Syntax errors quote no byte of the body, wherever a secret sits: at the
 * start of a bad token, inside one (a window starting in the secret), in
 * a scalar body, in a string cut short, after the root, in an escape.
 * The columns are those of the last byte each lexer read: jansson's reads
 * a word up to its first non-letter, PostgreSQL's up to its end.
 */
static void
test_no_quote(void)
{
	/* name, body, the stats decoder's reason, the write spec decoder's */
	static const char *const cases[][4] = {
		{"token starts in the secret",
			"{\"lsm_stats\": {\"buckets\": [ x" SECRET_TAIL "]}}",
		"invalid token at line 1 column 41", "invalid token at line 1 column 38"},
		{"whole secret as a token", "{\"a\": " SECRET "}",
		"invalid token at line 1 column 24", "invalid token at line 1 column 8"},
		{"scalar body", "\"" SECRET "\"",
			"'[' or '{' expected at line 1 column 20",
		"'[' or '{' expected at line 1 column 20"},
		{"bare word", SECRET,
			"'[' or '{' expected at line 1 column 18",
		"'[' or '{' expected at line 1 column 2"},
		{"string cut short", "{\"a\": \"" SECRET,
			"premature end of input at line 1 column 25",
		"premature end of input at line 1 column 25"},
		{"after the root", "{}\n " SECRET,
			"end of file expected at line 2 column 19",
		"end of file expected at line 2 column 3"},
		{"bad escape", "{\"a\": \"\\u" SECRET "\"}",
		"invalid escape at line 1 column 10", "invalid escape at line 1 column 10"},
		{"missing colon", "{\"" SECRET "\" 1}",
		"':' expected at line 1 column 23", "':' expected at line 1 column 23"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		char		stats[LSM_JSON_ERRBUF_SIZE];
		char		spec[LSM_JSON_ERRBUF_SIZE];

		snprintf(stats, sizeof(stats), "response body is not valid JSON: %s",
				 cases[i][2]);
		snprintf(spec, sizeof(spec), "response body is not valid JSON: %s",
				 cases[i][3]);
		expect_no_quote(cases[i][0], cases[i][1], stats, spec);
	}
}

/* jansson's blocks allocated and not yet freed (lsm_json.c's trees, text) */
static long jansson_live = 0;

static void *
counting_malloc(size_t size)
{
	void	   *p = malloc(size);

	if (p != NULL)
		jansson_live++;
	return p;
}

static void
counting_free(void *p)
{
	if (p != NULL)
		jansson_live--;
	free(p);
}

/*
 * Run call, which holds a jansson tree while it pallocs, once with every
 * allocation succeeding (counting them), then once per allocation with
 * that one raising out of memory: the ERROR must come through, and no
 * more jansson blocks may be left than after the successful call (which
 * leaves freed = 1 uncounted when it frees json_dumps' text with free(),
 * as jansson documents, else 0).
 */
static void
expect_no_tree_leak(const char *name, void (*call) (void), long freed)
{
	size_t		nallocs;

	jansson_live = 0;
	call();
	nallocs = harness_live_blocks();
	end_case(name);
	check(nallocs > 0 && jansson_live == freed, name,
		  "%zu allocations, %ld jansson blocks live after success", nallocs,
		  jansson_live);
	for (size_t n = 1; n <= nallocs; n++)
	{
		sigjmp_buf	jb;
		volatile int raised = 0;

		jansson_live = 0;
		harness_fail_allocation(n, harness_raise_out_of_memory);
		harness_error_jump = &jb;
		if (sigsetjmp(jb, 0) == 0)
			call();
		else
			raised = 1;
		harness_error_jump = NULL;
		harness_fail_allocation(0, NULL);
		check(raised && strcmp(harness_error.message, "out of memory") == 0,
			  name, "allocation %zu of %zu failing: no out-of-memory ERROR",
			  n, nallocs);
		check(jansson_live == freed, name,
			  "allocation %zu of %zu failing: %ld jansson blocks leaked", n,
			  nallocs, jansson_live - freed);
		end_case(name);
	}
}

static void
call_decode_write_spec(void)
{
	static const char body[] =
		"{\"lsm_write_spec\": {\"sharding\": {\"mode\": \"bucket\", "
		"\"column\": \"id\", \"num_buckets\": 4}, "
		"\"maintained_indexes\": [\"a\", \"b\"], "
		"\"writer_config_defaults\": {\"k\": \"v\", \"l\": \"w\"}}}";
	LsmWriteSpec spec;
	char		errbuf[LSM_JSON_ERRBUF_SIZE];

	if (!lsm_json_decode_write_spec(body, strlen(body), &spec, errbuf,
									sizeof(errbuf)))
		check(0, "write spec answer", "not decoded: %s", errbuf);
}

static void
call_decode_headers(void)
{
	int			n;
	char	  **names;
	char	  **values;
	char		errbuf[LSM_JSON_ERRBUF_SIZE];

	if (!lsm_json_decode_headers("{\"X-A\": \"1\", \"X-B\": \"2\"}", &n,
								 &names, &values, errbuf, sizeof(errbuf)))
		check(0, "extra_headers", "not decoded: %s", errbuf);
}

static void
call_write_spec_body(void)
{
	char	   *keys[] = {"k"};
	char	   *vals[] = {"v"};
	LsmWriteSpec spec = {.enabled = true, .mode = "identity",
		.column = "id", .default_keys = keys, .default_values = vals,
	.ndefaults = 1, .all_indexes = true};

	if (lsm_json_write_spec_body(&spec) == NULL)
		check(0, "write spec request body", "not built");
}

/*
 * The write spec answer's lists as the SDK's types read them: a null
 * maintained_indexes is every index (the newest code's Option), absent is
 * none (serde's default), [] is none; a null writer_config_defaults is
 * refused, absent is empty.
 */
static void
test_write_spec_lists(void)
{
	/* name, the spec's members after sharding, all_indexes, error or "" */
	static const char *const cases[][4] = {
		{"maintained_indexes null", ", \"maintained_indexes\": null", "1", ""},
		{"maintained_indexes absent", "", "0", ""},
		{"maintained_indexes empty", ", \"maintained_indexes\": []", "0", ""},
		{"maintained_indexes a list", ", \"maintained_indexes\": [\"a\"]", "0", ""},
		{"maintained_indexes a string", ", \"maintained_indexes\": \"a\"", "0",
		"\"maintained_indexes\" is not an array of strings"},
		{"writer_config_defaults null", ", \"writer_config_defaults\": null", "0",
		"\"writer_config_defaults\" is not an object of strings"},
		{"both null", ", \"maintained_indexes\": null, \"writer_config_defaults\": null",
			"1", "\"writer_config_defaults\" is not an object of strings"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		const char *name = cases[i][0];
		char		body[512];
		LsmWriteSpec spec = {0};
		char		errbuf[LSM_JSON_ERRBUF_SIZE] = "";
		int			ok;

		snprintf(body, sizeof(body),
				 "{\"lsm_write_spec\": {\"sharding\": {\"mode\": \"unsharded\"}%s}}",
				 cases[i][1]);
		ok = lsm_json_decode_write_spec(body, strlen(body), &spec, errbuf,
										sizeof(errbuf));
		check(ok == (cases[i][3][0] == '\0') && strcmp(errbuf, cases[i][3]) == 0,
			  name, "decoded %d, \"%s\", expected \"%s\"", ok, errbuf,
			  cases[i][3]);
		check(!ok || spec.all_indexes == (cases[i][2][0] == '1'), name,
			  "all_indexes %d", spec.all_indexes);
		check(!ok || spec.all_indexes || spec.indexes != NULL, name,
			  "no index list");
		check(!ok || !spec.all_indexes || spec.nindexes == 0, name,
			  "%d indexes with every index", spec.nindexes);
		end_case(name);
	}
}

/*
 * jansson mallocs its trees outside every memory context: palloc raising
 * out of memory while lsm_json.c holds one must not leak it.
 */
static void
test_out_of_memory(void)
{
	json_set_alloc_funcs(counting_malloc, counting_free);
	expect_no_tree_leak("write spec answer", call_decode_write_spec, 0);
	expect_no_tree_leak("extra_headers", call_decode_headers, 0);
	expect_no_tree_leak("write spec request body", call_write_spec_body, 1);
	json_set_alloc_funcs(malloc, free);
}

int
main(void)
{
	test_valid();
	test_bad_bodies();
	test_no_quote();
	test_out_of_memory();
	test_bad_fields();
	test_renamed_keys();
	test_error_bodies();
	test_request_body();
	test_write_spec_lists();
	test_performance();
	return harness_check_summary();
}
