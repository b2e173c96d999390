/*-------------------------------------------------------------------------
 *
 * fuzz_decode.c
 *		libFuzzer target for the decoders of src/protocol/lsm_stats_json.c and
 *		src/protocol/lsm_json.c.
 *
 * Feeds each input to lsm_json_decode_stats (with and without generation
 * rows) and to lsm_json_decode_error, walks every decoded value so that a
 * dangling or short allocation is caught by AddressSanitizer, checks the
 * decoders' promises (a failure always explains itself in one line, a
 * success returns well-formed values), then frees the arena.
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness_palloc.h"
#include "protocol/lsm_json.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Touch every decoded value; abort when a promise of lsm_json.h is broken. */
static void
fuzz_walk_stats(const LsmStats *s, bool with_rows)
{
	int			i,
				j,
				k;

	if (!s->enabled && (s->nbuckets != 0 || s->buckets != NULL))
		abort();
	for (i = 0; i < s->nbuckets; i++)
	{
		const LsmBucket *b = &s->buckets[i];

		/* status is any string, as sent; memtables and rows are optional */
		if (b->shard_id[0] == '\0' || b->status == NULL ||
			(!b->has_memtables && b->nmemtables != 0))
			abort();
		(void) strlen(b->status);
		for (j = 0; j < b->ngenerations; j++)
			if ((!with_rows && b->generations[j].has_rows) ||
				(!b->generations[j].has_rows && b->generations[j].rows != 0))
				abort();
		for (j = 0; j < b->nmemtables; j++)
			for (k = 0; k < b->memtables[j].nindexes; k++)
				(void) strlen(b->memtables[j].indexes[k]);
	}
}

/* Decode data as a stats answer; a failure must leave a one-line message. */
static void
fuzz_stats(const char *body, size_t size, bool with_rows)
{
	LsmStats	s;
	char		errbuf[LSM_JSON_ERRBUF_SIZE];

	if (lsm_json_decode_stats(body, size, with_rows, &s, errbuf,
							  sizeof(errbuf)))
		fuzz_walk_stats(&s, with_rows);
	else if (errbuf[0] == '\0' || strchr(errbuf, '\n') != NULL ||
			 s.enabled || s.buckets != NULL)
		abort();
	harness_free_all();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a private copy, so reads past the end are caught */
	char	   *body = malloc(size ? size : 1);
	LsmErrorBody e;

	memcpy(body, data, size);
	fuzz_stats(body, size, true);
	fuzz_stats(body, size, false);
	if (lsm_json_decode_error(body, size, &e))
	{
		if (!e.has_code && e.message == NULL)
			abort();
		if (e.message != NULL && strlen(e.message) > 1024 + 3)
			abort();
	}
	else if (e.has_code || e.message != NULL)
		abort();
	harness_free_all();
	free(body);
	return 0;
}
