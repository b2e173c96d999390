/*-------------------------------------------------------------------------
 *
 * url.c
 *		The URL of an LSM route request: the server's base URL, the table
 *		identifier as one percent-encoded path segment, the route, and the
 *		namespace delimiter when it is not the default.
 *
 * Kept apart from src/net/http.c (which builds and runs the libcurl requests)
 * because it is pure: it allocates with palloc and needs nothing else of a
 * backend, so fuzz/fuzz_url.c tests it standalone.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "net/net.h"

/*
 * lsm_url_encode_segment: percent-encode a table identifier (or any
 * string) into exactly one URL path segment.  Only ASCII letters, digits,
 * '-', '_' and '~' stay as they are; everything else, '.' included (so
 * that "." and ".." can never become dot segments), becomes %XX.  Result
 * is palloc'd.
 */
char *
lsm_url_encode_segment(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t		len = strlen(s);
	char	   *out = palloc(len * 3 + 1);
	char	   *p = out;

	for (const unsigned char *c = (const unsigned char *) s; *c; c++)
	{
		if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
			(*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '~')
			*p++ = (char) *c;
		else
		{
			*p++ = '%';
			*p++ = hex[*c >> 4];
			*p++ = hex[*c & 0x0F];
		}
	}
	*p = '\0';
	return out;
}

/*
 * lsm_url_build: the full URL of route route_path ("flush_lsm", ...) on
 * table: base_url (no trailing slash), "/v1/table/", the encoded table
 * identifier, the route, a trailing slash, and ?delimiter=X (encoded)
 * when id_delimiter is not "$".  palloc'd.
 */
char *
lsm_url_build(const char *base_url, const char *id_delimiter,
			  const char *table, const char *route_path)
{
	char	   *id = lsm_url_encode_segment(table);

	if (strcmp(id_delimiter, "$") == 0)
		return psprintf("%s/v1/table/%s/%s/", base_url, id, route_path);
	return psprintf("%s/v1/table/%s/%s/?delimiter=%s", base_url, id,
					route_path, lsm_url_encode_segment(id_delimiter));
}
