/*-------------------------------------------------------------------------
 *
 * harness_wire_text.c
 *		The backend functions src/wire_text.c calls, for the fuzz/
 *		programs that link it: a backend connected to a UTF-8 database.
 *
 * In a UTF-8 database src/wire_text.c converts nothing: pg_server_to_any
 * returns its argument unchanged and the quiet forms only escape the
 * bytes that are not valid UTF-8 (\xNN), with its own code.  The catalog
 * lookup of a conversion function is for other encodings and never
 * happens here: those stubs abort.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdlib.h>

#include "access/xact.h"
#include "catalog/namespace.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/memutils.h"

/* The memory context src/wire_text.c keeps its lookups in: none here. */
MemoryContext TopMemoryContext = NULL;

/* GetDatabaseEncoding: the harness's database is UTF-8. */
int
GetDatabaseEncoding(void)
{
	return PG_UTF8;
}

/* GetDatabaseEncodingName: the name of that encoding. */
const char *
GetDatabaseEncodingName(void)
{
	return "UTF8";
}

/*
 * pg_server_to_any: from a UTF-8 database to UTF-8 the backend returns s
 * itself, unchecked; any other target is not used by lancelsm.
 */
char *
pg_server_to_any(const char *s, int len, int encoding)
{
	if (encoding != PG_UTF8)
		abort();
	return unconstify(char *, s);
}

/* IsTransactionState: no transaction, so no catalog lookup. */
bool
IsTransactionState(void)
{
	return false;
}

/* Never called in a UTF-8 database (see the file's comment). */
Oid
FindDefaultConversionProc(int32 for_encoding, int32 to_encoding)
{
	abort();
}

/* Never called in a UTF-8 database (see the file's comment). */
void
fmgr_info_cxt(Oid functionId, FmgrInfo *finfo, MemoryContext mcxt)
{
	abort();
}

/* Never called in a UTF-8 database (see the file's comment). */
Datum
FunctionCall6Coll(FmgrInfo *flinfo, Oid collation, Datum arg1, Datum arg2,
				  Datum arg3, Datum arg4, Datum arg5, Datum arg6)
{
	abort();
}
