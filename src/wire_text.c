/*-------------------------------------------------------------------------
 *
 * wire_text.c
 *		Conversion of text between the database encoding and UTF-8, the
 *		encoding of everything LanceDB sends and receives.
 *
 * Out (lsm_text_to_wire): a name or value a request carries is converted
 * with pg_server_to_any, so that a character UTF-8 cannot hold raises
 * PostgreSQL's own error before any request.  In (lsm_text_from_wire):
 * a server string shown as a column is converted to the database
 * encoding, or refused with 22P05 naming the column: it never reaches SQL
 * as raw bytes.
 *
 * The _quiet variants never raise: what cannot be converted is escaped,
 * \uXXXX (or \UXXXXXXXX beyond the BMP) for a UTF-8 character and \xNN
 * for a byte that is not valid in its encoding; *lossless says whether
 * anything was escaped.  They are for untrusted text placed in an
 * errdetail or a message column, and for text stored in or read from
 * shared memory, where an encoding error must never replace the real one.
 * They run in error handlers too: the conversion functions are looked up
 * once per backend, when first needed inside a transaction (a task's
 * table name is converted before it runs, so this happens early), and
 * called through the cached FmgrInfo afterwards, without catalog access.
 * Without a cached function (outside a transaction before any lookup),
 * every non-ASCII character is escaped.
 *
 * SQL_ASCII: its bytes have no known encoding, so nothing is converted.
 * Out, they must be valid UTF-8 (pg_server_to_any checks: 22021
 * otherwise); in, valid UTF-8 passes through unchanged, as PostgreSQL
 * itself lets it into a SQL_ASCII database.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/memutils.h"

#include "wire_text.h"

/* A conversion function of this backend, looked up once. */
typedef struct WireConversion
{
	bool		ready;
	FmgrInfo	flinfo;
} WireConversion;

static WireConversion wire_to_utf8;		/* database encoding -> UTF-8 */
static WireConversion wire_from_utf8;	/* UTF-8 -> database encoding */

/*
 * wire_conversion_ready: whether conv (from src to dst encoding) can be
 * called; looks it up when inside a transaction and not done yet.
 */
static bool
wire_conversion_ready(WireConversion *conv, int src, int dst)
{
	Oid			proc;

	if (conv->ready)
		return true;
	if (!IsTransactionState())
		return false;
	proc = FindDefaultConversionProc(src, dst);
	if (!OidIsValid(proc))
		return false;
	fmgr_info_cxt(proc, &conv->flinfo, TopMemoryContext);
	conv->ready = true;
	return true;
}

/*
 * wire_escape_char: append the escape of the character at p (at most
 * end - p bytes, in encoding enc) to buf; returns its length in bytes
 * (1 for a byte that starts no valid character).
 */
static int
wire_escape_char(StringInfo buf, const char *p, const char *end, int enc)
{
	int			len = pg_encoding_verifymbchar(enc, p, end - p);

	if (len > 0 && enc == PG_UTF8)
	{
		pg_wchar	cp = utf8_to_unicode((const unsigned char *) p);

		appendStringInfo(buf, cp > 0xFFFF ? "\\U%08X" : "\\u%04X",
						 (unsigned int) cp);
		return len;
	}
	if (len <= 0)
		len = 1;
	for (int i = 0; i < len; i++)
		appendStringInfo(buf, "\\x%02X", (unsigned char) p[i]);
	return len;
}

/*
 * A way to take the run of characters at p (len bytes at the most) that
 * need no escape: appends them to buf, as they are or converted, and
 * returns the bytes of p it took (0 when the first character needs one).
 */
typedef int (*WireRun) (StringInfo buf, const char *p, int len, void *arg);

/*
 * wire_escape_runs: s in encoding enc, taken by run (with arg) and, where
 * run stops, one character escaped (wire_escape_char) at a time.
 */
static char *
wire_escape_runs(const char *s, int enc, WireRun run, void *arg,
				 bool *lossless)
{
	const char *p = s;
	const char *end = s + strlen(s);
	StringInfoData buf;

	*lossless = true;
	initStringInfo(&buf);
	while (p < end)
	{
		p += run(&buf, p, end - p, arg);
		if (p < end)
		{
			p += wire_escape_char(&buf, p, end, enc);
			*lossless = false;
		}
	}
	return buf.data;
}

/* wire_run_valid: the run valid in the encoding *arg, as it is. */
static int
wire_run_valid(StringInfo buf, const char *p, int len, void *arg)
{
	int			ok = pg_encoding_verifymbstr(*(int *) arg, p, len);

	appendBinaryStringInfo(buf, p, ok);
	return ok;
}

/*
 * wire_copy_valid: s in encoding enc, its invalid bytes escaped; for a
 * pair of encodings between which nothing is converted.
 */
static char *
wire_copy_valid(const char *s, int enc, bool *lossless)
{
	return wire_escape_runs(s, enc, wire_run_valid, &enc, lossless);
}

/* The conversion of a wire_run_convert: its encodings, function, buffer. */
typedef struct WireConvertRun
{
	int			src;
	int			dst;
	WireConversion *conv;
	char	   *out;			/* room for the whole string converted */
} WireConvertRun;

/* wire_run_convert: the run the conversion function converts, converted. */
static int
wire_run_convert(StringInfo buf, const char *p, int len, void *arg)
{
	WireConvertRun *c = arg;
	int			done;

	c->out[0] = '\0';
	done = DatumGetInt32(FunctionCall6(&c->conv->flinfo,
									   Int32GetDatum(c->src),
									   Int32GetDatum(c->dst),
									   CStringGetDatum(p),
									   PointerGetDatum(c->out),
									   Int32GetDatum(len),
									   BoolGetDatum(true)));
	appendStringInfoString(buf, c->out);
	return done;
}

/*
 * wire_convert_quiet: s from encoding src to dst through conv (ready),
 * every character it stops at escaped.
 */
static char *
wire_convert_quiet(const char *s, int src, int dst, WireConversion *conv,
				   bool *lossless)
{
	WireConvertRun c = {src, dst, conv, NULL};
	char	   *result;

	c.out = palloc(strlen(s) * MAX_CONVERSION_GROWTH + 1);
	result = wire_escape_runs(s, src, wire_run_convert, &c, lossless);
	pfree(c.out);
	return result;
}

/* wire_run_ascii: the ASCII run, as it is (the same in every encoding). */
static int
wire_run_ascii(StringInfo buf, const char *p, int len, void *arg)
{
	int			n = 0;

	while (n < len && !IS_HIGHBIT_SET(p[n]))
		n++;
	appendBinaryStringInfo(buf, p, n);
	return n;
}

/*
 * wire_escape_non_ascii: s with every non-ASCII character escaped (no
 * conversion function is at hand); ASCII is the same in every server
 * encoding.
 */
static char *
wire_escape_non_ascii(const char *s, int src, bool *lossless)
{
	return wire_escape_runs(s, src, wire_run_ascii, NULL, lossless);
}

/*
 * wire_quiet: s from encoding src to dst, what cannot be converted
 * escaped; conv converts between them when neither is SQL_ASCII.
 */
static char *
wire_quiet(const char *s, int src, int dst, WireConversion *conv,
		   bool *lossless)
{
	if (src == dst || dst == PG_SQL_ASCII)
		return wire_copy_valid(s, src, lossless);
	if (src == PG_SQL_ASCII)
		return wire_copy_valid(s, dst, lossless);
	if (!wire_conversion_ready(conv, src, dst))
		return wire_escape_non_ascii(s, src, lossless);
	return wire_convert_quiet(s, src, dst, conv, lossless);
}

/*
 * lsm_text_to_wire: s (in the database encoding) as UTF-8 for a request:
 * a URL, a header or JSON.  May return s itself when nothing changes.
 * Raises PostgreSQL's own error: 22P05 for a character UTF-8 has no
 * equivalent of, 22021 for bytes of a SQL_ASCII database that are not
 * UTF-8.  Must not be used for a secret: the error quotes the bytes.
 */
char *
lsm_text_to_wire(const char *s)
{
	int			enc = GetDatabaseEncoding();

	/* looked up now, in a healthy transaction, for the quiet variants */
	if (enc != PG_UTF8 && enc != PG_SQL_ASCII)
	{
		(void) wire_conversion_ready(&wire_to_utf8, enc, PG_UTF8);
		(void) wire_conversion_ready(&wire_from_utf8, PG_UTF8, enc);
	}
	return pg_server_to_any(s, strlen(s), PG_UTF8);
}

/*
 * lsm_text_to_wire_quiet: s (database encoding) as palloc'd UTF-8, what
 * cannot be converted escaped (*lossless false then).  Never raises an
 * error but out of memory.
 */
char *
lsm_text_to_wire_quiet(const char *s, bool *lossless)
{
	return wire_quiet(s, GetDatabaseEncoding(), PG_UTF8, &wire_to_utf8,
					  lossless);
}

/*
 * lsm_text_from_wire_quiet: s (UTF-8 from the server or from shared
 * memory) as palloc'd text of the database encoding, what it cannot hold
 * escaped (*lossless false then).  Never raises an error but out of
 * memory.
 */
char *
lsm_text_from_wire_quiet(const char *s, bool *lossless)
{
	return wire_quiet(s, PG_UTF8, GetDatabaseEncoding(), &wire_from_utf8,
					  lossless);
}

/*
 * lsm_text_from_wire: s (UTF-8 from the server) as palloc'd text of the
 * database encoding, to be shown as column column.  Raises 22P05
 * (untranslatable_character) naming the column when the database
 * encoding cannot hold it; its detail shows the value escaped.
 */
char *
lsm_text_from_wire(const char *s, const char *column)
{
	bool		lossless;
	char	   *text = lsm_text_from_wire_quiet(s, &lossless);

	if (!lossless)
		ereport(ERROR,
				errcode(ERRCODE_UNTRANSLATABLE_CHARACTER),
				errmsg("the server's value of column \"%s\" has no equivalent in encoding \"%s\"",
					   column, GetDatabaseEncodingName()),
				errdetail_internal("The value is \"%s\", written here with escapes.",
								   text));
	return text;
}
