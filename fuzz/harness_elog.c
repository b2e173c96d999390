/*-------------------------------------------------------------------------
 *
 * harness_elog.c
 *		A standalone ereport for the fuzz/ programs (see harness_elog.h).
 *
 * It includes postgres.h so that every definition is checked against
 * PostgreSQL's own prototype.  The texts are formatted with libpgport's
 * vsnprintf, as the backend formats them, so that a format whose
 * arguments do not match is caught by the sanitizers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness_elog.h"

#undef fprintf

HarnessError harness_error;
sigjmp_buf *harness_error_jump = NULL;

/* What PG_TRY of the code under test saves and sets (utils/elog.h). */
sigjmp_buf *PG_exception_stack = NULL;
ErrorContextCallback *error_context_stack = NULL;

/* Level of the report being built; 0: none (below ERROR, dropped). */
static int	harness_elevel = 0;

/* Start a report: only ERROR and above are kept. */
bool
errstart(int elevel, const char *domain)
{
	if (elevel < ERROR)
		return false;
	harness_elevel = elevel;
	memset(&harness_error, 0, sizeof(harness_error));
	return true;
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

/*
 * Jump to the innermost catcher of an ERROR: a PG_TRY of the code under
 * test, else harness_error_jump; abort when there is none.
 */
_Noreturn static void
harness_throw(const char *filename, int lineno)
{
	if (PG_exception_stack != NULL)
		siglongjmp(*PG_exception_stack, 1);
	if (harness_error_jump == NULL)
	{
		fprintf(stderr, "harness_elog: uncaught report at %s:%d: %s\n",
				filename, lineno, harness_error.message);
		abort();
	}
	siglongjmp(*harness_error_jump, 1);
}

/* End a report: throw an ERROR (harness_throw); abort for FATAL, PANIC. */
void
errfinish(const char *filename, int lineno, const char *funcname)
{
	if (harness_elevel != ERROR)
	{
		fprintf(stderr, "harness_elog: uncaught report at %s:%d: %s\n",
				filename, lineno, harness_error.message);
		abort();
	}
	harness_elevel = 0;
	harness_throw(filename, lineno);
}

/* Raise palloc's out-of-memory ERROR (SQLSTATE 53200) for size bytes. */
void
harness_raise_out_of_memory(size_t size)
{
	ereport(ERROR,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("out of memory"),
			 errdetail("Failed on request of size %zu.", size)));
}

/* PG_RE_THROW at the end of a PG_FINALLY: on to the next catcher. */
void
pg_re_throw(void)
{
	harness_throw(__FILE__, __LINE__);
}

int
errcode(int sqlerrcode)
{
	harness_error.sqlerrcode = sqlerrcode;
	return 0;
}

/* Format fmt and its arguments into one text of the record. */
#define HARNESS_FORMAT(field, fmt) \
	do { \
		va_list		args_; \
		va_start(args_, fmt); \
		vsnprintf(harness_error.field, sizeof(harness_error.field), fmt, args_); \
		va_end(args_); \
	} while (0)

int
errmsg(const char *fmt,...)
{
	HARNESS_FORMAT(message, fmt);
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	HARNESS_FORMAT(message, fmt);
	return 0;
}

int
errdetail(const char *fmt,...)
{
	HARNESS_FORMAT(detail, fmt);
	return 0;
}

int
errdetail_internal(const char *fmt,...)
{
	HARNESS_FORMAT(detail, fmt);
	return 0;
}

int
errhint(const char *fmt,...)
{
	HARNESS_FORMAT(hint, fmt);
	return 0;
}
