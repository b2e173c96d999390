/*-------------------------------------------------------------------------
 *
 * decode_mem.c
 *		Measure the memory and time of decoding a large get_lsm_stats answer.
 *
 * Builds the 10,000-bucket / 100,000-generation body of decode_test.c and,
 * with the argument "decode", decodes it once.  Run both modes under
 * /usr/bin/time -v: the difference of "Maximum resident set size" is what
 * the decoder costs on top of the body.  Also prints the peak bytes held in
 * the palloc arena during the decode (the decoder's own allocations,
 * results included, without allocator overhead).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness_palloc.h"
#include "protocol/lsm_json.h"

/* Build the body of decode_test.c's test_performance into *len bytes. */
static char *
build_body(size_t *len)
{
	size_t		cap = 8 * 1024 * 1024;
	char	   *buf = malloc(cap);
	size_t		used = 0;
	int			i,
				j;

	if (buf == NULL)
		abort();
	used += sprintf(buf + used, "{\"lsm_stats\": {\"buckets\": [");
	for (i = 0; i < 10000; i++)
	{
		used += sprintf(buf + used, "%s{\"shard_id\": \"bucket-%d\", \"status\": \"Active\", "
						"\"writer_epoch\": %d, \"manifest_version\": 11, "
						"\"current_generation\": 19, "
						"\"replay_after_wal_entry_position\": 100, "
						"\"wal_entry_position_last_seen\": 140, \"generations\": [",
						i ? ", " : "", i, i);
		for (j = 0; j < 10; j++)
			used += sprintf(buf + used, "%s{\"generation\": %d, \"bytes\": %d, \"rows\": 3}",
							j ? ", " : "", 9 + j, 1000 + j);
		used += sprintf(buf + used, "], \"compacting\": false, \"memtables\": "
						"[{\"generation\": 19, \"rows\": 1, \"bytes\": 2, "
						"\"batches\": 3, \"indexes\": [\"vec_idx\"]}]}");
		if (used > cap - 4096)
			abort();
	}
	used += sprintf(buf + used, "]}}");
	*len = used;
	return buf;
}

int
main(int argc, char **argv)
{
	size_t		len;
	char	   *body = build_body(&len);
	LsmStats	s;
	char		errbuf[LSM_JSON_ERRBUF_SIZE];
	struct timespec t0,
				t1;

	memset(body + len, 0, 1);
	if (argc > 1 && strcmp(argv[1], "decode") == 0)
	{
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (!lsm_json_decode_stats(body, len, true, &s, errbuf, sizeof(errbuf)))
		{
			printf("failed: %s\n", errbuf);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("body %zu bytes, %d buckets, %.3f s, palloc peak %zu bytes, palloc live %zu bytes\n",
			   len, s.nbuckets,
			   (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
			   harness_peak_bytes(), harness_live_bytes());
	}
	else
		printf("body %zu bytes (not decoded)\n", len);
	harness_free_all();
	free(body);
	return 0;
}
