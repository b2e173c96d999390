/*-------------------------------------------------------------------------
 *
 * fuzz_url.c
 *		libFuzzer target for the request URL builder of src/net/url.c.
 *
 * Input: a route (first byte), a namespace delimiter (its length in the
 * second byte, 0: the default "$", then its bytes) and the table name
 * (the rest, up to a NUL: SQL text has none).  The target builds the URL
 * and aborts unless:
 *  - it is the base URL, "/v1/table/", one path segment, the route and
 *    "/", then nothing or "?delimiter=" and one more segment;
 *  - both segments hold only unreserved characters (letters, digits,
 *    '-', '_', '~') and %XX escapes, so no '/', '.', '?', '#', blank or
 *    control byte ends up in the URL unescaped (and no dot segment);
 *  - decoding the segments gives back the table name and the delimiter.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness_palloc.h"
#include "net/net.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_BASE "http://127.0.0.1:8080/base"

static const char *const fuzz_routes[] = {
	"flush_lsm", "compact_lsm", "get_lsm_stats", "set_lsm_write_spec",
	"unset_lsm_write_spec", "get_lsm_write_spec"
};

/* The value of hex digit c, or -1. */
static int
fuzz_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * fuzz_decode_segment: decode the segment at *p (up to stop or the end)
 * into out, advancing *p past it; aborts on any byte that must not be in
 * an encoded segment.
 */
static void
fuzz_decode_segment(const char **p, char stop, char *out)
{
	const char *s = *p;

	while (*s != '\0' && *s != stop)
	{
		unsigned char c = (unsigned char) *s;

		if (c == '%')
		{
			int			hi = fuzz_hex(s[1]);
			int			lo = hi < 0 ? -1 : fuzz_hex(s[2]);

			if (lo < 0)
				abort();
			*out++ = (char) (hi * 16 + lo);
			s += 3;
		}
		else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
				 (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '~')
		{
			*out++ = (char) c;
			s++;
		}
		else
			abort();
	}
	*out = '\0';
	*p = s;
}

/* Abort unless *p starts with prefix; advance past it. */
static void
fuzz_expect(const char **p, const char *prefix)
{
	size_t		n = strlen(prefix);

	if (strncmp(*p, prefix, n) != 0)
		abort();
	*p += n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *route;
	char		delimiter[16] = "$";
	char	   *table;
	char	   *decoded;
	const char *url;
	const char *p;
	size_t		dlen;

	if (size < 2)
		return 0;
	route = fuzz_routes[data[0] % lengthof(fuzz_routes)];
	dlen = data[1] % 9;
	data += 2;
	size -= 2;
	if (dlen > 0)
	{
		if (dlen > size || memchr(data, '\0', dlen) != NULL)
			return 0;
		memcpy(delimiter, data, dlen);
		delimiter[dlen] = '\0';
		data += dlen;
		size -= dlen;
	}
	table = malloc(size + 1);
	memcpy(table, data, size);
	table[size] = '\0';			/* the name ends at its first NUL */

	url = lsm_url_build(FUZZ_BASE, delimiter, table, route);
	decoded = malloc(strlen(url) + 1);
	p = url;
	fuzz_expect(&p, FUZZ_BASE "/v1/table/");
	fuzz_decode_segment(&p, '/', decoded);
	if (strcmp(decoded, table) != 0)
		abort();
	fuzz_expect(&p, "/");
	fuzz_expect(&p, route);
	fuzz_expect(&p, "/");
	if (strcmp(delimiter, "$") != 0)
	{
		fuzz_expect(&p, "?delimiter=");
		fuzz_decode_segment(&p, '\0', decoded);
		if (strcmp(decoded, delimiter) != 0)
			abort();
	}
	if (*p != '\0')
		abort();

	free(decoded);
	free(table);
	harness_free_all();
	return 0;
}
