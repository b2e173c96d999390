/*-------------------------------------------------------------------------
 *
 * harness_elog.h
 *		A standalone ereport for running code of src/ that raises errors
 *		outside a backend (the fuzz/ programs).
 *
 * harness_elog.c implements errstart, errfinish, errcode, errmsg,
 * errdetail and errhint (and their _internal forms): messages below ERROR
 * are dropped; an ERROR formats its texts into the harness_error record
 * and longjmps to harness_error_jump, like PG_TRY catching it.  An
 * ERROR raised while harness_error_jump is NULL, or a FATAL or PANIC,
 * aborts (a crash for the fuzzer).
 *
 *-------------------------------------------------------------------------
 */
#ifndef HARNESS_ELOG_H
#define HARNESS_ELOG_H

#include <setjmp.h>
#include <stdbool.h>

#define HARNESS_ERROR_TEXT 1024

/* The last ERROR raised: its SQLSTATE (as errcode takes it) and texts. */
typedef struct HarnessError
{
	int			sqlerrcode;
	char		message[HARNESS_ERROR_TEXT];
	char		detail[HARNESS_ERROR_TEXT];
	char		hint[HARNESS_ERROR_TEXT];
} HarnessError;

extern HarnessError harness_error;
extern sigjmp_buf *harness_error_jump;

/* Raise palloc's out-of-memory ERROR for a request of size bytes. */
extern void harness_raise_out_of_memory(size_t size);

/*
 * Catching an ERROR, as PG_TRY does:
 *
 *		sigjmp_buf	jb;
 *		harness_error_jump = &jb;
 *		if (sigsetjmp(jb, 0) == 0)
 *			... code that may raise ...
 *		else
 *			... harness_error says what was raised ...
 *		harness_error_jump = NULL;
 */

#endif							/* HARNESS_ELOG_H */
