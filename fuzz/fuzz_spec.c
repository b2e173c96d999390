/*-------------------------------------------------------------------------
 *
 * fuzz_spec.c
 *		libFuzzer target for the write spec encoder
 *		(lsm_json_write_spec_body, src/protocol/lsm_json.c), checked against the
 *		write spec decoder of the same file.
 *
 * Input: the first byte picks the sharding (bucket, identity, unsharded)
 * and, in its high bit, "all indexes" (maintained_indexes NULL); the next
 * four bytes are num_buckets; then NUL-separated strings: the sharding
 * column, the index names up to an empty string, then key/value pairs of
 * writer_config_defaults.  Inputs that src/functions/write_spec.c would refuse
 * before encoding (its checks: a column exactly for bucket and identity,
 * num_buckets for bucket only and at least 1, non-empty distinct index
 * names, distinct keys as jsonb has them, valid UTF-8) are skipped.  The
 * target aborts unless the body:
 *  - is produced (never NULL for a valid spec);
 *  - is one JSON object with exactly sharding, maintained_indexes and
 *    writer_config_defaults in that order, maintained_indexes null
 *    exactly for "all indexes";
 *  - decodes (as a get_lsm_write_spec answer, maintained_indexes given
 *    as a list) back to the same mode, column, num_buckets, indexes in
 *    order and defaults.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "harness_palloc.h"
#include "protocol/lsm_json.h"
#include "mb/pg_wchar.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_STRINGS 64

static const char *const fuzz_modes[] = {"bucket", "identity", "unsharded"};

/*
 * fuzz_split: the NUL-separated strings of data (the last one may end
 * with the data) into strings, at most FUZZ_MAX_STRINGS; returns their
 * count, or -1 when one is not valid UTF-8.
 */
static int
fuzz_split(const char *data, size_t size, char **strings)
{
	int			n = 0;
	const char *p = data;
	const char *end = data + size;

	while (p < end && n < FUZZ_MAX_STRINGS)
	{
		size_t		len = strnlen(p, end - p);

		if (pg_encoding_verifymbstr(PG_UTF8, p, len) != (int) len)
			return -1;
		strings[n++] = pnstrdup(p, len);
		p += len + 1;
	}
	return n;
}

/* Whether strings[0..n-1] holds a duplicate (or, if no_empty, an ""). */
static bool
fuzz_has_duplicate(char **strings, int n, int step, bool no_empty)
{
	for (int i = 0; i < n; i += step)
	{
		if (no_empty && strings[i][0] == '\0')
			return true;
		for (int j = 0; j < i; j += step)
			if (strcmp(strings[i], strings[j]) == 0)
				return true;
	}
	return false;
}

/*
 * fuzz_spec_from_input: the spec of the input as write_spec.c would
 * build it; false when write_spec.c would refuse it.
 */
static bool
fuzz_spec_from_input(const uint8_t *data, size_t size, LsmWriteSpec *spec)
{
	char	  **strings = palloc(FUZZ_MAX_STRINGS * sizeof(char *));
	int			n;
	int			i;
	uint32_t	buckets;

	if (size < 5)
		return false;
	memset(spec, 0, sizeof(*spec));
	spec->enabled = true;
	spec->mode = fuzz_modes[(data[0] & 0x7F) % lengthof(fuzz_modes)];
	spec->all_indexes = (data[0] & 0x80) != 0;
	memcpy(&buckets, data + 1, 4);
	n = fuzz_split((const char *) data + 5, size - 5, strings);
	if (n < 1)
		return false;
	if (strcmp(spec->mode, "unsharded") != 0)
	{
		if (strings[0][0] == '\0')
			return false;
		spec->column = strings[0];
	}
	if (strcmp(spec->mode, "bucket") == 0)
		spec->num_buckets = (buckets % INT32_MAX) + 1;
	spec->indexes = strings + 1;
	for (i = 1; i < n && strings[i][0] != '\0'; i++)
		spec->nindexes++;
	if (fuzz_has_duplicate(spec->indexes, spec->nindexes, 1, true))
		return false;
	if (spec->all_indexes)
		spec->nindexes = 0;
	i++;						/* past the empty string */
	if (i < n)
	{
		spec->default_keys = palloc(n * sizeof(char *));
		spec->default_values = palloc(n * sizeof(char *));
		for (; i + 1 < n; i += 2)
		{
			spec->default_keys[spec->ndefaults] = strings[i];
			spec->default_values[spec->ndefaults++] = strings[i + 1];
		}
	}
	return !fuzz_has_duplicate(spec->default_keys, spec->ndefaults, 1, false);
}

/* Abort unless body is the three-member object, in order. */
static void
fuzz_check_shape(const char *body, const LsmWriteSpec *spec)
{
	json_error_t jerr;
	json_t	   *root = json_loads(body, 0, &jerr);
	static const char *const keys[] = {"sharding", "maintained_indexes",
	"writer_config_defaults"};
	void	   *it;
	int			i = 0;

	if (root == NULL || !json_is_object(root) || json_object_size(root) != 3)
		abort();
	for (it = json_object_iter(root); it != NULL;
		 it = json_object_iter_next(root, it))
		if (strcmp(json_object_iter_key(it), keys[i++]) != 0)
			abort();
	if (json_is_null(json_object_get(root, "maintained_indexes")) !=
		spec->all_indexes)
		abort();
	json_decref(root);
}

/* Abort unless the decoded spec d equals spec. */
static void
fuzz_check_same(const LsmWriteSpec *d, const LsmWriteSpec *spec)
{
	if (!d->enabled || strcmp(d->mode, spec->mode) != 0 ||
		(spec->column == NULL) != (d->column == NULL) ||
		(spec->column != NULL && strcmp(d->column, spec->column) != 0) ||
		d->num_buckets != spec->num_buckets ||
		d->nindexes != spec->nindexes || d->ndefaults != spec->ndefaults)
		abort();
	for (int i = 0; i < spec->nindexes; i++)
		if (strcmp(d->indexes[i], spec->indexes[i]) != 0)
			abort();
	for (int i = 0; i < spec->ndefaults; i++)
	{
		int			j;

		for (j = 0; j < d->ndefaults; j++)
			if (strcmp(d->default_keys[j], spec->default_keys[i]) == 0)
				break;
		if (j == d->ndefaults ||
			strcmp(d->default_values[j], spec->default_values[i]) != 0)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	LsmWriteSpec spec;
	LsmWriteSpec decoded;
	char		errbuf[LSM_JSON_ERRBUF_SIZE];
	char	   *body;
	char	   *answer;

	if (fuzz_spec_from_input(data, size, &spec))
	{
		body = lsm_json_write_spec_body(&spec);
		if (body == NULL)
			abort();
		fuzz_check_shape(body, &spec);
		if (!spec.all_indexes)
		{
			answer = psprintf("{\"lsm_write_spec\": %s}", body);
			if (!lsm_json_decode_write_spec(answer, strlen(answer), &decoded,
											errbuf, sizeof(errbuf)))
				abort();
			fuzz_check_same(&decoded, &spec);
		}
	}
	harness_free_all();
	return 0;
}
