/*-------------------------------------------------------------------------
 *
 * harness_wire_text.c
 *		src/wire_text.h for the fuzz/ programs, as in a UTF-8 database:
 *		nothing is converted; the quiet forms escape the bytes that are
 *		not valid UTF-8 (\xNN), as src/wire_text.c does there.
 *
 * src/wire_text.c itself needs a backend (the conversion functions are
 * looked up in the catalog); in a UTF-8 database it never calls them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"

#include "wire_text.h"

/* GetDatabaseEncoding: the harness's database is UTF-8. */
int
GetDatabaseEncoding(void)
{
	return PG_UTF8;
}

/* harness_copy_valid: s with each byte that is not valid UTF-8 escaped. */
static char *
harness_copy_valid(const char *s, bool *lossless)
{
	const char *p = s;
	const char *end = s + strlen(s);
	StringInfoData buf;

	*lossless = true;
	initStringInfo(&buf);
	while (p < end)
	{
		int			ok = pg_encoding_verifymbstr(PG_UTF8, p, end - p);

		appendBinaryStringInfo(&buf, p, ok);
		p += ok;
		if (p < end)
		{
			appendStringInfo(&buf, "\\x%02X", (unsigned char) *p++);
			*lossless = false;
		}
	}
	return buf.data;
}

char *
lsm_text_to_wire(const char *s)
{
	return (char *) s;
}

char *
lsm_text_to_wire_quiet(const char *s, bool *lossless)
{
	return harness_copy_valid(s, lossless);
}

char *
lsm_text_from_wire(const char *s, const char *column)
{
	bool		lossless;

	return harness_copy_valid(s, &lossless);
}

char *
lsm_text_from_wire_quiet(const char *s, bool *lossless)
{
	return harness_copy_valid(s, lossless);
}
